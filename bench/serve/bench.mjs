// `baton serve` (MCP over Streamable HTTP) against `baton mcp` (stdio) and
// the CLI, side by side in one run: the targets of doc/serve.md
// ("Performance"). Raw JSON-RPC on both transports (no SDK), so what is
// measured is baton, not a client library. Node's standard library only.
//
//   node bench/serve/bench.mjs [--baton build/release/baton] [--runs 5]
//        [--calls 300] [--wakes 5] [--streams 1000] [--idle-s 10]
//
// Each run uses a fresh BATON_HOME; figures are medians over the runs (min-max).
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Agent, request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) => {
  if (a.startsWith('--')) pairs.push([a.slice(2), all[i + 1]]);
  return pairs;
}, []));
const BATON = args.baton ?? new URL('../../build/release/baton', import.meta.url).pathname;
const RUNS = Number(args.runs ?? 5);
const CALLS = Number(args.calls ?? 300);
const WAKES = Number(args.wakes ?? 5);
const STREAMS = Number(args.streams ?? 1000);
const IDLE_S = Number(args['idle-s'] ?? 10);
const MODERN = '2026-07-28';
// The wake task: bench/physical_limit.c (compiled here) appends its
// CLOCK_MONOTONIC stamp to a file as its last act and exits; process.hrtime
// reads the same clock.
const HELPERS = mkdtempSync(join(tmpdir(), 'bs-helper-'));
const PHYSICAL = join(HELPERS, 'physical_limit');
const built = spawnSync('cc', ['-O2', '-o', PHYSICAL, new URL('../physical_limit.c', import.meta.url).pathname], { encoding: 'utf8' });
if (built.status !== 0) throw new Error(`cannot build physical_limit: ${built.stderr}`);
const stampTask = (file) => `sleep 0.3; exec ${PHYSICAL} stamp-span ${file}`;
const readStamp = (file) => BigInt(readFileSync(file, 'utf8').match(/^E (\d+)$/m)[1]);
const TASKS = 'io.modelcontextprotocol/tasks';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// CLOCK_MONOTONIC, in ns: the clock the task's stamp is taken with.
const monoNs = () => process.hrtime.bigint();
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const stat = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length });
const fmt = (s, digits = 2) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

function env(home) {
  return { ...process.env, BATON_HOME: home, BATON_SESSION: 'bench' };
}

function baton(home, argv) {
  return spawnSync(BATON, argv, { env: env(home), encoding: 'utf8' });
}

function modernMeta(extensions = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { extensions },
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
  };
}

// ---- stdio: one `baton mcp`, lines in and out.
function stdioClient(home) {
  const child = spawn(BATON, ['mcp'], { env: env(home), stdio: ['pipe', 'pipe', 'ignore'] });
  const pending = new Map();
  let next = 1;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); }
  });
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    pending.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  return {
    request,
    async init() {
      await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    },
    close() { child.stdin.end(); return new Promise((r) => child.once('exit', r)); },
  };
}

// ---- HTTP: `baton serve` on a free port.
async function startServe(home) {
  const child = spawn(BATON, ['serve', '--listen', '127.0.0.1:0'], { env: env(home), stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('baton serve did not start')), 15_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/MCP at (http:\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
  });
  const token = baton(home, ['serve', '--print-token']).stdout.trim();
  return {
    child, url: new URL(url), auth: { Authorization: `Bearer ${token}` },
    stop() { child.kill('SIGTERM'); return new Promise((r) => child.once('exit', r)); },
  };
}

function post(serve, agent, headers, body) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(serve.url, {
      method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...serve.auth, ...headers },
    }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function legacySession(serve, agent) {
  const init = await post(serve, agent, {}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } });
  const session = init.headers['mcp-session-id'];
  const headers = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' };
  await post(serve, agent, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return headers;
}

// Opens a modern subscriptions/listen for `taskIds` over SSE; calls
// `onTask(params, at)` for each notifications/tasks. Resolves once
// acknowledged, with the request (destroy it to close).
function listen(serve, agent, taskIds, onTask) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(serve.url, {
      method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...serve.auth,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
    }, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const at = monoNs();
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('\n');
          if (!data) continue;
          const m = JSON.parse(data);
          if (m.method === 'notifications/subscriptions/acknowledged') resolve(req);
          if (m.method === 'notifications/tasks') onTask(m.params, at);
        }
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: `listen-${Math.random()}`, method: 'subscriptions/listen',
      params: { notifications: { taskIds }, _meta: modernMeta({ [TASKS]: {} }) } }));
  });
}

function rssMiB(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return Number(m[1]) / 1024;
}

// Context switches of every thread of `pid`: each is a wake-up.
function switches(pid) {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const s = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    total += Number(s.match(/voluntary_ctxt_switches:\s+(\d+)/)[1]);
    total += Number(s.match(/nonvoluntary_ctxt_switches:\s+(\d+)/)[1]);
  }
  return total;
}

async function oneRun() {
  const home = mkdtempSync(join(tmpdir(), 'bs-'));
  const out = {};
  const serve = await startServe(home);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const stdio = stdioClient(home);
  try {
    await stdio.init();
    const session = await legacySession(serve, agent);
    const call = { name: 'run', arguments: { command: 'true' } };
    // Warm both (batond started, caches hot), then alternate halves.
    await stdio.request('tools/call', call);
    await post(serve, agent, session, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: call });
    let stdioMs = 0, httpMs = 0, id = 10;
    for (let half = 0; half < 2; half++) {
      let t = performance.now();
      for (let i = 0; i < CALLS / 2; i++) await stdio.request('tools/call', call);
      stdioMs += performance.now() - t;
      t = performance.now();
      for (let i = 0; i < CALLS / 2; i++) {
        const r = await post(serve, agent, session, { jsonrpc: '2.0', id: id++, method: 'tools/call', params: call });
        if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.body}`);
      }
      httpMs += performance.now() - t;
    }
    out.stdio_calls_s = CALLS / (stdioMs / 1000);
    out.http_calls_s = CALLS / (httpMs / 1000);

    // A task's end: the subscriber of subscriptions/listen vs `baton wait`.
    const listenAgent = new Agent({ keepAlive: true });
    const subLat = [], cliLat = [];
    for (let w = 0; w < WAKES; w++) {
      const started = await post(serve, agent, { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run' },
        { jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'run', arguments: { command: stampTask(join(HELPERS, `stamp-${w}`)) }, _meta: modernMeta({ [TASKS]: {} }) } });
      const task = JSON.parse(started.body).result.taskId;
      let told;
      const done = new Promise((resolve) => { told = resolve; });
      const sub = await listen(serve, listenAgent, [task], (params, at) => { if (params.status === 'completed') told({ params, at }); });
      const waiter = spawn(BATON, ['wait', task], { env: env(home), stdio: 'ignore' });
      const cliDone = new Promise((resolve) => waiter.once('exit', () => resolve(monoNs())));
      const [{ params, at }, cliAt] = await Promise.all([done, cliDone]);
      const stamp = readStamp(join(HELPERS, `stamp-${w}`));
      rmSync(join(HELPERS, `stamp-${w}`));
      subLat.push(Number(at - stamp) / 1e6);
      cliLat.push(Number(cliAt - stamp) / 1e6);
      sub.destroy();
    }
    out.listen_wake_ms = median(subLat);
    out.cli_wake_ms = median(cliLat);

    // Open SSE streams: STREAMS subscriptions at once, then serve's RSS.
    const many = new Agent({ keepAlive: true, maxSockets: STREAMS + 10 });
    const rssBefore = rssMiB(serve.child.pid);
    const subs = [];
    for (let i = 0; i < STREAMS; i += 50) {
      const batch = [];
      for (let k = i; k < Math.min(STREAMS, i + 50); k++) batch.push(listen(serve, many, [], () => {}));
      subs.push(...await Promise.all(batch));
    }
    await sleep(200);
    out.rss_idle_mib = rssBefore;
    out.rss_streams_mib = rssMiB(serve.child.pid);
    for (const s of subs) s.destroy();
    many.destroy();
    listenAgent.destroy();

    // Idle: no stream open, no call in flight.
    agent.destroy();
    await stdio.close();
    await sleep(1000);
    const before = switches(serve.child.pid);
    await sleep(IDLE_S * 1000);
    out.idle_wakeups_s = (switches(serve.child.pid) - before) / IDLE_S;
  } finally {
    await serve.stop();
    baton(home, ['daemon', 'stop', '--kill-tasks']);
    rmSync(home, { recursive: true, force: true });
  }
  return out;
}

process.on('exit', () => rmSync(HELPERS, { recursive: true, force: true }));
const runs = [];
for (let r = 0; r < RUNS; r++) {
  runs.push(await oneRun());
  process.stderr.write(`run ${r + 1}/${RUNS}: ${JSON.stringify(runs.at(-1))}\n`);
}
const col = (k) => stat(runs.map((r) => r[k]));
const httpRatio = stat(runs.map((r) => r.http_calls_s / r.stdio_calls_s));
const wakeRatio = stat(runs.map((r) => r.listen_wake_ms / r.cli_wake_ms));
console.log(`baton serve benchmark: ${RUNS} runs, median (min–max); ${CALLS} calls, ${WAKES} wakes and ${STREAMS} streams a run\n`);
console.log('| measure | value | target | met |');
console.log('|---|---|---|---|');
console.log(`| tools/call run, stdio (baton mcp), calls/s | ${fmt(col('stdio_calls_s'), 0)} | | |`);
console.log(`| tools/call run, HTTP keep-alive (baton serve), calls/s | ${fmt(col('http_calls_s'), 0)} | | |`);
console.log(`| HTTP / stdio | ${fmt(httpRatio)} | ≥ 0.5 | ${httpRatio.median >= 0.5 ? 'yes' : 'no'} |`);
console.log(`| end → \`baton wait\` exits, ms | ${fmt(col('cli_wake_ms'))} | | |`);
console.log(`| end → subscriptions/listen told, ms | ${fmt(col('listen_wake_ms'))} | | |`);
console.log(`| listen / CLI | ${fmt(wakeRatio)} | ≤ 1.5 | ${wakeRatio.median <= 1.5 ? 'yes' : 'no'} |`);
console.log(`| serve RSS idle, MiB | ${fmt(col('rss_idle_mib'), 1)} | | |`);
console.log(`| serve RSS with ${STREAMS} open SSE streams, MiB | ${fmt(col('rss_streams_mib'), 1)} | ≤ 64 | ${col('rss_streams_mib').median <= 64 ? 'yes' : 'no'} |`);
console.log(`| idle serve, wake-ups/s (context switches, all threads, ${IDLE_S} s) | ${fmt(col('idle_wakeups_s'), 1)} | 0 | ${col('idle_wakeups_s').median === 0 ? 'yes' : 'no'} |`);
