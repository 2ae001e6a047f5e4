// End-to-end: `baton serve`'s /metrics (doc/metrics.md). Real tasks run on
// a real batond; the text a real `baton serve` answers is parsed and its
// values checked, `promtool check metrics` lints it, and a real Prometheus
// (Debian's `prometheus`, on loopback, its own data folder) scrapes it with
// the bearer token and answers a PromQL query over what it scraped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATON, baton, batonEnv, makeHome, sleep, startServe, stopDaemon } from './helpers.mjs';

const T = { timeout: 90_000 };

function run(home, args) {
  const reply = JSON.parse(baton(home, ['--json', 'run', ...args]));
  return (reply.task ?? reply).id;
}

function status(home, id) {
  const reply = JSON.parse(baton(home, ['--json', 'status', id]));
  return (reply.task ?? reply).status;
}

// The samples of an exposition text: "name{labels}" -> value.
function parse(text) {
  const samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

async function scrape(serve, headers = serve.auth) {
  const res = await fetch(new URL('/metrics', serve.base), { headers, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// A home with tasks in every state the test counts: three that completed
// (one printed a secret) and one that failed (each waited for while it ran, so that its end wakes
// a waiter), one running in queue `gated` (at most one at a time) and one
// queued behind it.
async function withTasks(body) {
  const home = makeHome();
  let serve;
  try {
    serve = await startServe(home);
    baton(home, ['queue', 'add', 'gated', '--max', '1']);
    // The first prints a secret of a well-known shape, which is masked.
    const secret = `echo ghp_${'Z'.repeat(36)}; sleep 0.6`;
    for (const line of [secret, 'sleep 0.6', 'sleep 0.6', 'sleep 0.6; exit 3']) {
      const id = run(home, ['--', 'sh', '-c', line]);
      // Exit code 1 for the failed one: the wait reports its failure.
      const waited = spawnSync(BATON, ['wait', id, '--timeout', '20s'], { env: batonEnv(home), encoding: 'utf8', timeout: 30_000 });
      assert.ok(waited.status === 0 || waited.status === 1, `wait ${id}: ${waited.stderr}`);
    }
    const running = run(home, ['--queue', 'gated', '--', 'sleep', '60']);
    const queued = run(home, ['--queue', 'gated', '--', 'true']);
    // Until its spawn is reported, a dispatched task is still `queued`.
    const deadline = Date.now() + 10_000;
    while (status(home, running) !== 'running') {
      assert.ok(Date.now() < deadline, `${running} never ran`);
      await sleep(50);
    }
    await body({ home, serve, running, queued });
  } finally {
    await serve?.stop();
    await stopDaemon(home);
  }
}

test('/metrics: the token, the method, and values that match the tasks', T, async () => {
  await withTasks(async ({ home, serve, running, queued }) => {
    // Without the token (or with another): 401, as /mcp.
    assert.equal((await scrape(serve, {})).status, 401);
    assert.equal((await scrape(serve, { Authorization: 'Bearer nope' })).status, 401);
    const post = await fetch(new URL('/metrics', serve.base), { method: 'POST', headers: serve.auth });
    assert.equal(post.status, 405);

    const got = await scrape(serve);
    assert.equal(got.status, 200);
    assert.match(got.type, /^text\/plain; version=0\.0\.4/);
    const m = parse(got.body);
    const v = (key) => {
      assert.ok(m.has(key), `no sample ${key} in:\n${got.body}`);
      return m.get(key);
    };
    assert.equal(v('baton_tasks{kind="shell",status="running"}'), 1);
    assert.equal(v('baton_tasks{kind="shell",status="queued"}'), 1);
    assert.equal(v('baton_tasks{kind="agent",status="running"}'), 0);
    assert.equal(v('baton_queued_tasks{queue="gated"}'), 1);
    assert.equal(v('baton_queue_running_tasks{queue="gated"}'), 1);
    assert.equal(v('baton_queued_tasks{queue="default"}'), 0);
    assert.equal(v('baton_running_tasks{executor="local"}'), 1);
    assert.equal(v('baton_running_tasks{executor="slurm"}'), 0);
    assert.equal(v('baton_tasks_started_total{kind="shell"}'), 5);
    assert.equal(v('baton_tasks_ended_total{kind="shell",status="completed"}'), 3);
    assert.equal(v('baton_tasks_ended_total{kind="shell",status="failed"}'), 1);
    assert.equal(v('baton_tasks_ended_total{kind="shell",status="killed"}'), 0);
    // Each of the four ends woke the wait that named it.
    assert.equal(v('baton_wake_seconds_count'), 4);
    assert.equal(v('baton_wake_seconds_bucket{le="+Inf"}'), 4);
    assert.ok(v('baton_wake_seconds_sum') > 0);
    // batond's own part of a wake is ~1 ms; a second is a bug.
    assert.equal(v('baton_wake_seconds_bucket{le="1"}'), 4);
    // Five dispatched, each once; the queued one not yet.
    assert.equal(v('baton_queue_wait_seconds_count'), 5);
    assert.equal(v('baton_redactions_total{kind="github-token"}'), 1);
    assert.equal(v('baton_supervisor_restarts_total'), 0);
    assert.ok(v('baton_daemon_resident_memory_bytes') > 1_000_000);
    assert.ok(v('baton_daemon_connections') >= 1);
    assert.ok(v('baton_daemon_uptime_seconds') > 0);

    // Killing the running task frees the queue's slot: the queued one
    // starts and completes. Counters and gauges follow.
    baton(home, ['kill', running]);
    const waited = spawnSync(BATON, ['wait', queued, '--timeout', '20s'], { env: batonEnv(home), encoding: 'utf8', timeout: 30_000 });
    assert.equal(waited.status, 0, waited.stderr);
    const after = parse((await scrape(serve)).body);
    assert.equal(after.get('baton_tasks_ended_total{kind="shell",status="killed"}'), 1);
    assert.equal(after.get('baton_tasks_ended_total{kind="shell",status="completed"}'), 4);
    assert.equal(after.get('baton_tasks_started_total{kind="shell"}'), 6);
    assert.equal(after.get('baton_tasks{kind="shell",status="queued"}'), 0);
    assert.equal(after.get('baton_tasks{kind="shell",status="running"}'), 0);
    assert.equal(after.get('baton_queued_tasks{queue="gated"}'), 0);
    assert.equal(after.get('baton_running_tasks{executor="local"}'), 0);
    // The queued one waited in its queue: the histogram's sum grew.
    assert.equal(after.get('baton_queue_wait_seconds_count'), 6);
    assert.ok(after.get('baton_queue_wait_seconds_sum') > v('baton_queue_wait_seconds_sum'));
  });
});

test('/metrics passes promtool check metrics', { ...T, skip: !has('promtool') && 'promtool is not installed (scripts/setup installs prometheus)' }, async () => {
  await withTasks(async ({ serve }) => {
    const got = await scrape(serve);
    assert.equal(got.status, 200);
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: got.body, encoding: 'utf8', timeout: 20_000 });
    assert.equal(checked.status, 0, `promtool: ${checked.stdout}${checked.stderr}\n${got.body}`);
  });
});

test('a real Prometheus scrapes baton serve and PromQL counts the tasks', { ...T, skip: !has('prometheus') && 'prometheus is not installed (scripts/setup installs it)' }, async () => {
  await withTasks(async ({ serve }) => {
    const dir = mkdtempSync(join(tmpdir(), 'bprom-'));
    let prometheus;
    try {
      writeFileSync(join(dir, 'token'), serve.token, { mode: 0o600 });
      const target = new URL(serve.base).host;
      writeFileSync(join(dir, 'prometheus.yml'), [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: baton',
        '    scrape_interval: 1s',
        '    scrape_timeout: 1s',
        '    authorization:',
        `      credentials_file: ${join(dir, 'token')}`,
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'));
      const port = await freePort();
      let log = '';
      prometheus = spawn('prometheus', [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      prometheus.stdout.on('data', (c) => { log += c; });
      prometheus.stderr.on('data', (c) => { log += c; });
      const api = `http://127.0.0.1:${port}/api/v1`;
      // Within 30 s: Prometheus up, a scrape done, the series queryable.
      const query = 'sum by (status) (baton_tasks{kind="shell"})';
      const deadline = Date.now() + 30_000;
      let result;
      while (Date.now() < deadline) {
        try {
          const res = await fetch(`${api}/query?query=${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(2_000) });
          const reply = await res.json();
          if (reply.status === 'success' && reply.data.result.length > 0) { result = reply.data.result; break; }
        } catch { /* not up yet */ }
        await sleep(250);
      }
      assert.ok(result, `Prometheus never had baton_tasks; its log:\n${log}`);
      const byStatus = Object.fromEntries(result.map((r) => [r.metric.status, Number(r.value[1])]));
      assert.equal(byStatus.running, 1);
      assert.equal(byStatus.queued, 1);
      assert.equal(byStatus.waiting, 0);
      // Its own view of the target: up, scraped with the token.
      const up = await (await fetch(`${api}/query?query=up{job="baton"}`)).json();
      assert.equal(up.data.result[0].value[1], '1');
      const ended = await (await fetch(`${api}/query?query=${encodeURIComponent('baton_tasks_ended_total{status="completed",kind="shell"}')}`)).json();
      assert.equal(ended.data.result[0].value[1], '3');
    } finally {
      if (prometheus && prometheus.exitCode === null) {
        const exit = new Promise((resolve) => prometheus.once('exit', resolve));
        prometheus.kill('SIGTERM');
        const timer = setTimeout(() => prometheus.kill('SIGKILL'), 5_000);
        await exit;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
