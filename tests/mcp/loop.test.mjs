// End-to-end: the director's loop (issue 13) through `baton mcp` with the
// official SDK client: what a director hands out comes back to it whole
// (evidence, questions), once, at the right moment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, stopDaemon, sleep, connect, call, text, baton } from './helpers.mjs';

function pidAlive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

const T = { timeout: 60_000 };
const FAKES = new URL('../agents/fakes', import.meta.url).pathname;
const agentEnv = () => ({ PATH: `${FAKES}:${process.env.PATH}` });

async function withHome(body) {
  const home = makeHome();
  const sessions = [];
  try {
    await body(home, (s) => { sessions.push(s); return s; });
  } finally {
    for (const s of sessions) await s.client.close().catch(() => {});
    await stopDaemon(home);
  }
}

test('a failed check fails the task; its evidence is in text and structuredContent', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const dir = join(home, 'work');
    mkdirSync(dir);
    const r = await call(client, 'run', {
      command: 'echo x > made.txt', cwd: dir, checks: ['echo broken; exit 2'], label: 'build',
    });
    assert.equal(r.isError, false, text(r));
    const id = r.structuredContent.task_id;
    const w = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 20 });
    const entry = w.structuredContent.tasks[0];
    assert.equal(entry.status, 'failed', text(w));
    assert.equal(entry.exit_code, 0);
    assert.equal(entry.detail, 'check failed: echo broken; exit 2 (exit code 2)');
    assert.deepEqual(entry.evidence.checks, [{ command: 'echo broken; exit 2', exit_code: 2, tail: 'broken\n' }]);
    assert.equal(entry.evidence.changed_files_count, 1);
    assert.deepEqual(entry.evidence.changed_files, ['made.txt']);
    assert.deepEqual(entry.evidence.overlapping_tasks, []);
    assert.match(text(w), /check `echo broken; exit 2`: exit code 2\n {2}\| broken\nchanged files: 1 \(made\.txt\)/);

    const st = await call(client, 'task_status', { task_id: id });
    assert.equal(st.structuredContent.status, 'failed');
    assert.equal(st.structuredContent.evidence.checks[0].exit_code, 2);
    assert.match(text(st), /check `echo broken; exit 2`: exit code 2/);
  });
});

test('the ended notice carries the evidence', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const dir = join(home, 'work');
    mkdirSync(dir);
    const r = await call(client, 'run', { command: 'true', cwd: dir, checks: ['exit 5'] });
    const id = r.structuredContent.task_id;
    let notices = [];
    let last;
    for (let i = 0; i < 50 && notices.length === 0; i++) {
      await sleep(100);
      last = await call(client, 'task_list');
      notices = last.structuredContent.notices;
    }
    assert.equal(notices.length, 1, JSON.stringify(last));
    assert.equal(notices[0].task_id, id);
    assert.equal(notices[0].status, 'failed');
    assert.equal(notices[0].evidence.checks[0].command, 'exit 5');
    assert.match(text(last), new RegExp(`- ${id} failed \\(check failed: exit 5 \\(exit code 5\\)\\)\\n {2}check \`exit 5\`: exit code 5`));
  });
});

test('a question is noticed once, with numbered options; instructions say so', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    assert.match(client.getInstructions(), /when an agent asks a question, once each/);
    const d = await call(client, 'delegate', { brief: 'please ASK me', label: 'asker' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    let last;
    let notices = [];
    for (let i = 0; i < 100 && notices.length === 0; i++) {
      await sleep(100);
      last = await call(client, 'task_list');
      notices = last.structuredContent.notices;
    }
    assert.equal(notices.length, 1, JSON.stringify(last));
    assert.equal(notices[0].task_id, id);
    assert.equal(notices[0].status, 'waiting');
    assert.equal(notices[0].questions[0].items[0].prompt, 'Which database?');
    assert.match(text(last), new RegExp(`- ${id} waiting \\(asks a question\\) — asker\\n {2}\\[DB\\] Which database\\?\\n {4}1\\. SQLite — embedded\\n {4}2\\. Postgres — server\\n {2}answer with task_answer`));
    const next = await call(client, 'task_list');
    assert.deepEqual(next.structuredContent.notices, [], 'told once');
    // Told by the notice: a wait on it alone returns at once (nothing else can happen).
    const w = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 10 });
    assert.equal(w.structuredContent.tasks[0].status, 'waiting');
    const a = await call(client, 'task_answer', { task_id: id, answers: ['1'] });
    assert.equal(a.isError, false, text(a));
  });
});

test('waiting again on a collected id blocks until another ends', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const quick = (await call(client, 'run', { command: 'true' })).structuredContent.task_id;
    const slow = (await call(client, 'run', { command: 'sleep 1.5' })).structuredContent.task_id;
    const first = await call(client, 'task_output', { task_id: quick, wait: true, timeout_s: 10 });
    assert.equal(first.structuredContent.tasks[0].task_id, quick);
    const start = Date.now();
    const again = await call(client, 'task_output', { task_ids: [quick, slow], wait: true, timeout_s: 10 });
    assert.ok(Date.now() - start >= 700, `returned after ${Date.now() - start} ms: ${text(again)}`);
    assert.deepEqual(again.structuredContent.tasks.map((t) => t.task_id), [slow], text(again));
    assert.deepEqual(again.structuredContent.already_told, [quick]);
    assert.match(text(again), new RegExp(`already collected \\(told before\\): ${quick}`));
    // Everything ended and was told: at once, with all of them (not after
    // the 10 s timeout; the bound leaves room for a loaded machine).
    const t0 = Date.now();
    const all = await call(client, 'task_output', { task_ids: [quick, slow], wait: true, timeout_s: 10 });
    assert.ok(Date.now() - t0 < 8000, `returned after ${Date.now() - t0} ms`);
    assert.equal(all.structuredContent.timed_out, false, text(all));
    assert.deepEqual(all.structuredContent.tasks.map((t) => t.task_id).sort(), [quick, slow].sort());
    // ... saying that none was news, so a director looping on the same ids
    // sees why, and the habit: wait only on ids not collected.
    assert.deepEqual(all.structuredContent.told_before.sort(), [quick, slow].sort(), text(all));
    assert.match(text(all), /collected before this wait, so not news: .*wait only on ids you have not collected/);
    // A fresh wait with news names nothing as told before.
    assert.deepEqual(again.structuredContent.told_before, []);
  });
});

test('until "turn": a wait returns per turn with the turn\'s final text', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const d = await call(client, 'delegate', { brief: 'SLOW first' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    for (let i = 0; i < 100; i++) {
      const st = await call(client, 'task_status', { task_id: id });
      if (st.structuredContent.status === 'running' && st.structuredContent.tools_used?.length) break;
      await sleep(50);
    }
    const follow = await call(client, 'task_send', { task_id: id, message: 'then SLOW second' });
    assert.match(follow.structuredContent.delivery, /queued/, text(follow));
    const bad = await call(client, 'task_output', { task_id: id, until: 'turn' });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /wait: true/);
    const first = await call(client, 'task_output', { task_id: id, wait: true, until: 'turn', timeout_s: 20 });
    const e1 = first.structuredContent.tasks[0];
    assert.equal(e1.status, 'running', text(first));
    assert.equal(e1.turn_ended, true);
    assert.equal(e1.turn_text, 'turn 1: SLOW first');
    assert.match(text(first), /ended a turn \(it runs on\); its final text:\nturn 1: SLOW first/);
    const second = await call(client, 'task_output', { task_id: id, wait: true, until: 'turn', timeout_s: 20 });
    const e2 = second.structuredContent.tasks[0];
    assert.equal(e2.turn_text, 'turn 2: then SLOW second', text(second));
    // Without until "turn", a turn's end does not end the wait: the task's end does.
    const end = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 20 });
    assert.equal(end.structuredContent.tasks[0].status, 'completed', text(end));
  });
});

test('task_send: a queued follow-up is replaced or withdrawn until delivered, then already_delivered', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    // The question holds the first turn open: follow-ups queue behind it.
    const d = await call(client, 'delegate', { brief: 'please ASK me' });
    const id = d.structuredContent.task_id;
    const asked = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 20 });
    assert.equal(asked.structuredContent.tasks[0].status, 'waiting', text(asked) + JSON.stringify(asked.structuredContent));
    const one = await call(client, 'task_send', { task_id: id, message: 'first version' });
    assert.equal(one.isError, false, text(one));
    assert.equal(one.structuredContent.message_id, 'm-1');
    assert.match(one.structuredContent.delivery, /queued/);
    assert.match(text(one), /replace: "m-1"/);
    const two = await call(client, 'task_send', { task_id: id, message: 'second' });
    assert.equal(two.structuredContent.message_id, 'm-2', text(two));

    const rep = await call(client, 'task_send', { task_id: id, replace: 'm-1', message: 'REPLACED text' });
    assert.equal(rep.isError, false, text(rep));
    assert.equal(rep.structuredContent.delivery, 'replaced');
    assert.deepEqual(rep.structuredContent.queued,
      [{ id: 'm-1', text: 'REPLACED text' }, { id: 'm-2', text: 'second' }]);
    const wd = await call(client, 'task_send', { task_id: id, withdraw: 'm-2' });
    assert.equal(wd.isError, false, text(wd));
    assert.equal(wd.structuredContent.delivery, 'withdrawn');
    assert.deepEqual(wd.structuredContent.queued, [{ id: 'm-1', text: 'REPLACED text' }]);
    const unknown = await call(client, 'task_send', { task_id: id, withdraw: 'm-7' });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /has no message m-7; the queued ones are m-1/);
    const both = await call(client, 'task_send', { task_id: id, replace: 'm-1', withdraw: 'm-1' });
    assert.equal(both.isError, true);
    assert.match(text(both), /either 'replace' or 'withdraw'/);

    // The answer ends the turn: the replaced text goes in.
    const a = await call(client, 'task_answer', { task_id: id, answers: ['2'] });
    assert.equal(a.isError, false, text(a));
    let transcript = '';
    for (let i = 0; i < 5; i++) {
      const r = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 20 });
      transcript += r.structuredContent.tasks[0].output ?? '';
      if (r.structuredContent.tasks[0].status === 'completed') break;
    }
    assert.match(transcript, /turn 2: REPLACED text/);
    assert.doesNotMatch(transcript, /turn \d: (second|first version)/);
    assert.match(transcript, /< followup m-2 \(withdrawn\)/);

    const late = await call(client, 'task_send', { task_id: id, replace: 'm-1', message: 'too late' });
    assert.equal(late.isError, true);
    assert.match(text(late), /already_delivered: agent-\d+: message m-1 was already delivered at /);
    const again = await call(client, 'task_send', { task_id: id, withdraw: 'm-2' });
    assert.match(text(again), /already_delivered: .*m-2 was already withdrawn at /);
  });
});

test('errors name MCP arguments: one rule for timeout_s, cwd without CLI flags', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const rule = /argument 'timeout_s' must be a number of seconds > 0 \(got (0|-1)\); leave it out for /;
    const cases = [
      ['run', { command: 'true', timeout_s: 0 }],
      ['run', { command: 'true', timeout_s: -1 }],
      ['delegate', { brief: 'x', timeout_s: -1 }],
      ['task_output', { task_id: 'shell-1', wait: true, timeout_s: 0 }],
      ['task_output', { task_id: 'shell-1', wait: true, timeout_s: -1 }],
    ];
    for (const [tool, args] of cases) {
      const res = await call(client, tool, args);
      assert.equal(res.isError, true, `${tool} ${JSON.stringify(args)}: ${text(res)}`);
      assert.match(text(res), rule, `${tool} ${JSON.stringify(args)}`);
    }
    const { tools } = await client.listTools();
    const output = tools.find((t) => t.name === 'task_output');
    assert.equal(output.inputSchema.properties.timeout_s.exclusiveMinimum, 0);
    const r = await call(client, 'run', { command: 'true', cwd: join(home, 'missing') });
    assert.equal(r.isError, true);
    assert.match(text(r), /working directory .*missing cannot be used.*; give an existing directory as cwd/);
    assert.doesNotMatch(text(r), /--/);
  });
});

test('a wait survives a kill -9 of batond and reports the real end', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const gate = join(home, 'gate');
    const { id, pending, daemon } = await waitingOn(home, client, gate, 45, 'exit 3');
    const status = () => JSON.parse(baton(home, ['--json', 'daemon', 'status']));
    process.kill(daemon.daemon_pid, 'SIGKILL');
    while (pidAlive(daemon.daemon_pid)) await sleep(10);
    writeFileSync(gate, '');
    const w = await pending;
    assert.equal(w.isError, false, text(w));
    const entry = w.structuredContent.tasks[0];
    assert.equal(entry.task_id, id);
    assert.equal(entry.status, 'failed', text(w));
    assert.equal(entry.exit_code, 3, text(w));
    assert.match(text(w), /bye/);
    assert.notEqual(status().daemon_pid, daemon.daemon_pid);
  });
});

// Runs a task that waits for `gate`, says bye and runs `then`, starts a
// task_output wait on it, and returns once batond holds the wait's own
// connection too (the main connection, the wait's, and a status call's).
async function waitingOn(home, client, gate, timeoutS, then = 'true') {
  const r = await call(client, 'run', { command: `while [ ! -e ${gate} ]; do sleep 0.01; done; echo bye; ${then}` });
  const id = r.structuredContent.task_id;
  const status = () => JSON.parse(baton(home, ['--json', 'daemon', 'status']));
  const started = Date.now();
  const pending = call(client, 'task_output', { task_id: id, wait: true, timeout_s: timeoutS });
  let daemon;
  for (let i = 0; i < 1000; ++i) {
    daemon = status();
    if (daemon.connections >= 3) break;
    await sleep(10);
  }
  assert.ok(daemon.connections >= 3, JSON.stringify(daemon));
  return { id, pending, daemon, started };
}

test('a wait keeps its deadline across a kill -9 of batond', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const gate = join(home, 'gate');
    const { pending, daemon, started } = await waitingOn(home, client, gate, 8);
    await sleep(1000);
    process.kill(daemon.daemon_pid, 'SIGKILL');
    const w = await pending;
    const took = (Date.now() - started) / 1000;
    assert.equal(w.isError, false, text(w));
    assert.equal(w.structuredContent.timed_out, true, text(w));
    assert.equal(w.structuredContent.tasks[0].status, 'running', text(w));
    // The same deadline, not a new one from the reconnection.
    assert.ok(took >= 7.5 && took < 16, `answered after ${took} s`);
    writeFileSync(gate, '');
  });
});

test('a wait gives up with an error when batond cannot come back within 10 s', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const gate = join(home, 'gate');
    const { id, pending, daemon } = await waitingOn(home, client, gate, 45);
    // A folder where batond's socket goes: nothing connects, no new batond
    // can listen there (as in the CLI's test, reconnect_test.cc).
    renameSync(daemon.socket, `${daemon.socket}.moved`);
    mkdirSync(daemon.socket);
    process.kill(daemon.daemon_pid, 'SIGKILL');
    const w = await pending;
    assert.equal(w.isError, true, text(w));
    assert.match(text(w), /could not bring batond back within 10 s/);
    // Put things right; the task is still there to collect.
    rmdirSync(daemon.socket);
    writeFileSync(gate, '');
    const again = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 30 });
    assert.equal(again.structuredContent.tasks[0].status, 'completed', text(again));
  });
});
