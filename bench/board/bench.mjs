// The board's performance (doc/board.md, "Performance"): a fresh page's
// first render with many ended tasks, the bytes of a first load, how soon
// an open board shows a new task and an end, `baton serve`'s RSS with ten
// boards open, and the output lag of a page that follows a printer.
// Debian's Chromium through the pinned playwright-core of tests/mcp
// (scripts/setup dev --tests installs it).
//
//   node bench/board/bench.mjs [--baton build/release/baton]
//        [--ended 100000] [--runs 5] [--running 1000] [--printers 100] [--batch 2000]
//
// The ended tasks are made through batond's socket (one `run` of `true`
// each, 64 in flight), so making them is not what is measured.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createConnection } from 'node:net';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

// playwright-core as tests/mcp pins it.
const { chromium } = createRequire(new URL('../../tests/mcp/package.json', import.meta.url))('playwright-core');

const args = process.argv.slice(2);
const option = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const BATON = option('--baton', new URL('../../build/release/baton', import.meta.url).pathname);
const ENDED = Number(option('--ended', 100000));
const RUNS = Number(option('--runs', 5));
const RUNNING = Number(option('--running', 1000));
const PRINTERS = Number(option('--printers', 100));
const LAG_SAMPLES = 100;
const LIVE_SAMPLES = 20;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (xs, digits = 0) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

// A short home: socket paths are limited to 107 bytes.
const home = mkdtempSync('/tmp/bb-');
const env = { ...process.env, BATON_HOME: home };
const baton = (argv) => spawnSync(BATON, argv, { env, encoding: 'utf8', maxBuffer: 1 << 30 });

// One connection to batond's socket: `call(request)` resolves to its
// reply, and rejects with batond's error.
async function connect() {
  const socket = createConnection(join(home, 'batond.sock'));
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  const pending = new Map();
  let next = 0;
  createInterface({ input: socket }).on('line', (line) => {
    const reply = JSON.parse(line);
    const done = pending.get(reply.id);
    pending.delete(reply.id);
    done?.(reply);
  });
  return {
    call(request) {
      return new Promise((resolve, reject) => {
        const id = ++next;
        pending.set(id, (reply) => (reply.ok ? resolve(reply) : reject(new Error(`${request.op} refused: ${JSON.stringify(reply)}`))));
        socket.write(JSON.stringify({ id, ...request }) + '\n');
      });
    },
    end() { socket.end(); },
  };
}

// `count` runs of `argv` over one connection, `inFlight` at a time; resolves
// when batond has accepted them all.
async function runMany(count, argv, inFlight = 64) {
  baton(['daemon', 'start']);
  const client = await connect();
  let sent = 0;
  const workers = Array.from({ length: inFlight }, async () => {
    while (sent < count) {
      sent++;
      await client.call({ op: 'run', argv, cwd: '/tmp' });
    }
  });
  await Promise.all(workers);
  client.end();
}

// `count` ended tasks: runs of `sleep 0.1`, until all have ended, in
// batches of BATCH, each sent once the one before has ended. Not `true`:
// a task that exits before the supervisor journals its start leaves a
// "reaped" record that each compaction of the journal carries over, so the
// journal stays past its compaction size and is rewritten at every spawn;
// 100,000 runs of `true` fell to ~20 spawns a second past 50,000.
const BATCH = Number(option('--batch', 2000));
async function makeTasks(count) {
  for (let made = 0; made < count;) {
    const batch = Math.min(BATCH, count - made);
    await runMany(batch, ['sleep', '0.1']);
    made += batch;
    // Until the batch has ended (its last one: they start in order).
    while (!['completed', 'failed'].includes(JSON.parse(baton(['--json', 'status', `shell-${made}`]).stdout).task.status))
      await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (;;) {
    const r = JSON.parse(baton(['--json', 'ls']).stdout);
    if (!r.tasks.some((t) => ['queued', 'running'].includes(t.status))) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function startServe() {
  const child = spawn(BATON, ['serve', '--listen', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const login = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('baton serve did not start')), 15_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/board at (http:\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
  });
  // A login code works once: every browser context takes a new one.
  const newLogin = () => baton(['board', '--no-open']).stdout.match(/baton board: (http:\S+)/)[1];
  return { child, login, newLogin, stop() { child.kill('SIGTERM'); return new Promise((r) => child.once('exit', r)); } };
}

const rssMiB = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)[1]) / 1024;

let serve;
let browser;
try {
  let t = performance.now();
  await makeTasks(ENDED);
  const madeS = (performance.now() - t) / 1000;
  serve = await startServe();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  const firstRender = [];
  const roundTrip = [];
  const transfer = [];
  for (let r = 0; r < RUNS + 1; r++) {
    const context = await browser.newContext();
    // The page's own clock (0 = the navigation's start) at the frame that
    // paints the first ended row: requestAnimationFrame runs just before
    // that frame is drawn.
    await context.addInitScript(() => {
      const observer = new MutationObserver(() => {
        if (!document.querySelector('#ended tr')) return;
        observer.disconnect();
        requestAnimationFrame(() => { window.__firstRowPaint = performance.now(); });
      });
      observer.observe(document, { childList: true, subtree: true });
    });
    const page = await context.newPage();
    await page.goto(serve.newLogin());  // Sets the cookie; the page loads.
    await page.locator('#ended tr').first().waitFor({ timeout: 120_000 });
    // A fresh load, the cookie set: from navigation to the first ended row.
    let bytes = 0;
    page.on('response', async (response) => {
      const sizes = await response.request().sizes().catch(() => null);
      if (sizes) bytes += sizes.responseBodySize + sizes.responseHeadersSize;
    });
    t = performance.now();
    await page.reload();
    await page.locator('#ended tr').first().waitFor({ timeout: 120_000 });
    const ms = performance.now() - t;
    await page.waitForFunction(() => window.__firstRowPaint !== undefined);
    const painted = await page.evaluate(() => window.__firstRowPaint);
    await page.waitForLoadState('networkidle').catch(() => {});
    if (r > 0) {  // The first run warms.
      firstRender.push(painted);
      roundTrip.push(ms);
      transfer.push(bytes / 1024);
    }
    await context.close();
  }
  // Ten boards open at once, each live (its event stream open).
  const boards = [];
  for (let i = 0; i < 10; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(serve.newLogin());
    await page.locator('#live', { hasText: /^live$/ }).waitFor({ timeout: 120_000 });
    boards.push(context);
  }
  const rss10 = rssMiB(serve.child.pid);
  for (const context of boards) await context.close();

  // Live updates: a board open on the list; a task started over batond's
  // socket, then ended, LIVE_SAMPLES times. Each task waits on a FIFO of
  // its own, so that its end is the moment this process closes the FIFO.
  // Times are wall clock, this process's and the page's (one machine):
  // from just before the `run` is sent to the row in the page, and from
  // the FIFO's close to the row in the ended group.
  const live = await browser.newContext();
  const livePage = await live.newPage();
  await livePage.goto(serve.newLogin());
  await livePage.locator('#live', { hasText: /^live$/ }).waitFor({ timeout: 120_000 });
  const appeared = [];
  const endShown = [];
  const fifos = mkdtempSync('/tmp/bb-fifo-');
  const client = await connect();
  // The page's clock when a row of `id` shows in `group`.
  const watchRow = (id, group) => livePage.evaluate(([id, group]) => new Promise((resolve) => {
    const seen = () => document.querySelector(`#${group} tr[data-task="${id}"]`);
    if (seen()) return resolve(Date.now());
    const observer = new MutationObserver(() => {
      if (seen()) { observer.disconnect(); resolve(Date.now()); }
    });
    observer.observe(document.getElementById(group), { childList: true, subtree: true });
  }), [id, group]);
  for (let i = 0; i < LIVE_SAMPLES; i++) {
    const fifo = join(fifos, `f${i}`);
    spawnSync('mkfifo', [fifo]);
    const sent = Date.now();
    const reply = await client.call({ op: 'run', argv: ['cat', fifo], cwd: '/tmp' });
    const id = reply.result.task.id;
    appeared.push(await watchRow(id, 'running') - sent);
    const ended = watchRow(id, 'ended');
    // Opening for writing unblocks cat; closing gives it its end of file.
    closeSync(openSync(fifo, 'w'));
    const closed = Date.now();
    endShown.push(await ended - closed);
  }
  client.end();
  rmSync(fifos, { recursive: true, force: true });
  await live.close();

  // Output lag: RUNNING tasks run, PRINTERS of them print their wall clock
  // (ms) every 100 ms; a board follows one printer's page. The lag is the
  // page's clock at a sample minus the time in the last line it shows.
  // One process a printer, no fork a line: a shell loop of `date` and
  // `sleep` would start 2,000 processes a second, which saturates a small
  // machine by itself.
  const printer = ['perl', '-MTime::HiRes=time,sleep', '-e', '$| = 1; while (1) { printf "%d\\n", time() * 1000; sleep 0.1 }'];
  const first = JSON.parse(baton(['--json', 'run', '--', ...printer]).stdout).task.id;
  for (let i = 1; i < PRINTERS; i++) baton(['run', '--', ...printer]);
  await runMany(RUNNING - PRINTERS, ['sleep', '600']);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(serve.newLogin());
  await page.goto(new URL(`/#task=${first}`, serve.login).href);
  await page.locator('#output', { hasText: /\d{13}/ }).waitFor({ timeout: 60_000 });
  const lags = [];
  for (let i = 0; i < LAG_SAMPLES; i++) {
    await new Promise((resolve) => setTimeout(resolve, 137));
    lags.push(await page.evaluate(() => {
      const lines = document.getElementById('output').textContent.trim().split('\n');
      return Date.now() - Number(lines[lines.length - 1]);
    }));
  }
  await context.close();
  lags.sort((a, b) => a - b);
  const p95 = lags[Math.floor(lags.length * 0.95)];
  console.log(`board benchmark: ${ENDED} ended tasks (made in ${madeS.toFixed(0)} s), ${RUNS} fresh loads, median (min–max)\n`);
  console.log('| measure | value | target | met |');
  console.log('|---|---|---|---|');
  console.log(`| fresh load → the frame that paints the first ended row, ms (the page's clock) | ${fmt(firstRender)} | ≤ 300 | ${median(firstRender) <= 300 ? 'yes' : 'no'} |`);
  console.log(`| the same, as Playwright sees it (reload() → the row found), ms | ${fmt(roundTrip)} | – | – |`);
  console.log(`| a task started over the socket → its row on an open board, ms (${LIVE_SAMPLES} samples; max) | ${fmt(appeared)}; max ${Math.max(...appeared)} | ≤ 250 | ${Math.max(...appeared) <= 250 ? 'yes' : 'no'} |`);
  console.log(`| its end → its row among the ended, ms (${LIVE_SAMPLES} samples; max) | ${fmt(endShown)}; max ${Math.max(...endShown)} | ≤ 250 | ${Math.max(...endShown) <= 250 ? 'yes' : 'no'} |`);
  console.log(`| bytes of a fresh load (page, files, first API answers), KiB | ${fmt(transfer)} | ≤ 300 KB | ${median(transfer) * 1024 <= 300_000 ? 'yes' : 'no'} |`);
  console.log(`| baton serve RSS with 10 boards open, MiB | ${rss10.toFixed(1)} | ≤ 32 | ${rss10 <= 32 ? 'yes' : 'no'} |`);
  console.log(`| output lag, ${RUNNING} running, ${PRINTERS} printing every 100 ms, ms (${LAG_SAMPLES} samples; p95) | ${fmt(lags)}; p95 ${p95} | ≤ 500 | ${p95 <= 500 ? 'yes' : 'no'} |`);
} finally {
  await browser?.close().catch(() => {});
  await serve?.stop();
  baton(['daemon', 'stop', '--kill-tasks']);
  rmSync(home, { recursive: true, force: true });
}
