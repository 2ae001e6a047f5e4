// baton mcp vs @wonderwhy-er/desktop-commander, over stdio with the official
// SDK client, in one run: `run` calls per second, the time from a task's
// exit to the waiting call returning (baton: task_output wait; Desktop
// Commander: its read_process_output polled every POLL_MS), and the
// server's RSS. Usage: node bench.mjs [--runs 5] [--baton PATH]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const RUNS = Number(opt('--runs', 5));
const BATON = opt('--baton', fileURLToPath(new URL('../../build/dev/baton', import.meta.url)));
const DC = fileURLToPath(new URL('./node_modules/@wonderwhy-er/desktop-commander/dist/index.js', import.meta.url));
const CALLS = Number(opt('--calls', 200));
const DC_CALLS = Number(opt('--dc-calls', 50));
const WAKES = Number(opt('--wakes', 5));
const POLL_MS = Number(opt('--poll-ms', 100));

const nowWallMs = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const rssKb = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
const text = (r) => r.content.map((c) => c.text ?? '').join('');
// The task prints its exit time (ns since the epoch) as its last act.
const EXIT_STAMP = 'sleep 0.2; exec date +%s%N';
const stampMs = (out) => Number(out.match(/(\d{19})/)[1]) / 1e6;

async function connect(command, cmdArgs, env) {
  const transport = new StdioClientTransport({ command, args: cmdArgs, env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  return { client, transport };
}

async function benchBaton() {
  const home = mkdtempSync(join(tmpdir(), 'bmb-'));
  const env = { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp', BATON_HOME: home };
  const { client, transport } = await connect(BATON, ['mcp'], env);
  try {
    await client.callTool({ name: 'run', arguments: { command: 'true' } });  // warm-up
    let t0 = performance.now();
    for (let i = 0; i < CALLS; ++i) await client.callTool({ name: 'run', arguments: { command: 'true' } });
    const callsPerS = CALLS / ((performance.now() - t0) / 1000);
    const wakes = [];
    for (let i = 0; i < WAKES; ++i) {
      const r = await client.callTool({ name: 'run', arguments: { command: EXIT_STAMP } });
      const id = r.structuredContent.task_id;
      const o = await client.callTool({ name: 'task_output', arguments: { task_id: id, wait: true } });
      const back = nowWallMs();
      wakes.push(back - stampMs(o.structuredContent.tasks[0].output));
    }
    const rss = rssKb(transport.pid);
    const status = JSON.parse(execFileSync(BATON, ['--json', 'daemon', 'status'], { env, encoding: 'utf8' }));
    const rssAll = rss + rssKb(status.daemon_pid) + rssKb(status.supervisor_pid);
    return { callsPerS, wakeMs: median(wakes), rssKb: rss, rssAllKb: rssAll };
  } finally {
    await client.close();
    execFileSync(BATON, ['daemon', 'stop', '--kill-tasks'], { env });
    rmSync(home, { recursive: true, force: true });
  }
}

async function benchDc() {
  const home = mkdtempSync(join(tmpdir(), 'dcb-'));
  const env = { PATH: process.env.PATH, HOME: home };
  const { client, transport } = await connect(process.execPath, [DC], env);
  try {
    const start = (command) => client.callTool({ name: 'start_process', arguments: { command, timeout_ms: 100 } });
    const pidOf = (r) => Number(text(r).match(/PID (\d+)/)[1]);
    await start('true');
    let t0 = performance.now();
    for (let i = 0; i < DC_CALLS; ++i) await start('true');
    const callsPerS = DC_CALLS / ((performance.now() - t0) / 1000);
    const wakes = [];
    for (let i = 0; i < WAKES; ++i) {
      const r = await start(EXIT_STAMP);
      const pid = pidOf(r);
      let out = text(r);
      // Its own polling tool, every POLL_MS, until it reports completion.
      for (;;) {
        const o = await client.callTool({ name: 'read_process_output', arguments: { pid, timeout_ms: POLL_MS } });
        out += text(o);
        if (/Process completed|exit code|No session found/i.test(text(o))) break;
      }
      const back = nowWallMs();
      if (!/\d{19}/.test(out)) throw new Error(`no exit stamp in: ${out}`);
      wakes.push(back - stampMs(out));
    }
    return { callsPerS, wakeMs: median(wakes), rssKb: rssKb(transport.pid) };
  } finally {
    await client.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const fmtRange = (xs, digits) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
const results = { baton: [], dc: [] };
for (let run = 1; run <= RUNS; ++run) {
  results.baton.push(await benchBaton());
  results.dc.push(await benchDc());
  const b = results.baton.at(-1), d = results.dc.at(-1);
  console.error(`run ${run}: baton ${b.callsPerS.toFixed(0)} calls/s, wake ${b.wakeMs.toFixed(2)} ms, rss ${b.rssKb} kB | desktop-commander ${d.callsPerS.toFixed(1)} calls/s, wake ${d.wakeMs.toFixed(1)} ms, rss ${d.rssKb} kB`);
}
const col = (side, key) => results[side].map((r) => r[key]);
const bCalls = col('baton', 'callsPerS'), dCalls = col('dc', 'callsPerS');
const bWake = col('baton', 'wakeMs'), dWake = col('dc', 'wakeMs');
const bRss = col('baton', 'rssKb').map((k) => k / 1024), dRss = col('dc', 'rssKb').map((k) => k / 1024);
const bAll = col('baton', 'rssAllKb').map((k) => k / 1024);
console.log(`baton mcp vs @wonderwhy-er/desktop-commander 0.2.52: ${RUNS} runs, median (min–max)`);
console.log(`| measure | baton mcp | desktop-commander | ratio |`);
console.log(`|---|---|---|---|`);
console.log(`| run calls/s (${CALLS} vs ${DC_CALLS} sequential calls) | ${fmtRange(bCalls, 0)} | ${fmtRange(dCalls, 1)} | ${(median(bCalls) / median(dCalls)).toFixed(1)}× |`);
console.log(`| exit → waiting call returns, ms (DC polled every ${POLL_MS} ms) | ${fmtRange(bWake, 2)} | ${fmtRange(dWake, 1)} | ${(median(dWake) / median(bWake)).toFixed(0)}× faster |`);
console.log(`| server RSS, MiB | ${fmtRange(bRss, 1)} | ${fmtRange(dRss, 1)} | ${(median(bRss) / median(dRss)).toFixed(3)} |`);
console.log(`| baton mcp + batond + supervisor RSS, MiB | ${fmtRange(bAll, 1)} | | ${(median(bAll) / median(dRss)).toFixed(3)} |`);
