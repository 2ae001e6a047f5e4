// End-to-end: the official TypeScript SDK client drives `baton mcp` over
// stdio. Each test has its own BATON_HOME (its own batond) and stops it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BATON, makeHome, batonEnv, baton, stopDaemon, sleep, connect, call, text } from './helpers.mjs';

const T = { timeout: 90_000 };

// Runs `body(home, track)` with a fresh home; `track(session)` registers
// clients to close; the daemon is stopped whatever happens.
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

test('initialize, tools/list: seventeen tools with schemas and honest annotations', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    assert.equal(client.getServerVersion().name, 'baton');
    assert.match(client.getInstructions(), /never busy-poll/);
    assert.match(client.getInstructions(), /one\s+task_output call/);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.match(client.getInstructions(), /delegate/);
    assert.match(client.getInstructions(), /task_answer/);
    // A director that lost track is told how to find what it did not collect,
    // and how to wait from its own background shell.
    assert.match(client.getInstructions(), /lost track[^.]*call\s+task_list: it marks the ended tasks you have not collected/);
    assert.match(client.getInstructions(), /wait_command/);
    assert.match(client.getInstructions(), /questions?[^.]*once each/);
    assert.deepEqual(Object.keys(byName).sort(), [
      'conflicts', 'delegate', 'land', 'land_queue', 'run', 'session_budget', 'task_answer', 'task_edit', 'task_events', 'task_kill', 'task_list', 'task_output',
      'task_questions', 'task_rerun', 'task_send', 'task_status', 'worktrees']);
    for (const name of ['run', 'delegate'])
      assert.match(byName[name].description, /wait_command/, name);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema.type, 'object', tool.name);
      assert.ok(tool.outputSchema.required.includes('notices'), tool.name);
      assert.ok(tool.description.length > 40, tool.name);
    }
    assert.deepEqual(byName.run.inputSchema.required, ['command']);
    // A longer wait is cut to 50 s (with a note), not refused.
    assert.match(byName.task_output.inputSchema.properties.timeout_s.description, /at most 50/);
    for (const name of ['task_output', 'task_status', 'task_list', 'task_events', 'task_questions']) {
      assert.equal(byName[name].annotations.readOnlyHint, true, name);
    }
    assert.equal(byName.run.annotations.readOnlyHint, false);
    assert.equal(byName.task_kill.annotations.readOnlyHint, false);
    assert.equal(byName.task_kill.annotations.destructiveHint, true);
    assert.equal(byName.task_kill.annotations.idempotentHint, true);
    // The agent tools.
    assert.deepEqual(byName.delegate.inputSchema.required, ['brief']);
    for (const key of ['brief', 'agent', 'model', 'label', 'cwd', 'resume_from', 'checks', 'timeout_s']) {
      assert.ok(byName.delegate.inputSchema.properties[key], `delegate.${key}`);
    }
    assert.equal(byName.delegate.inputSchema.properties.checks.type, 'array');
    assert.ok(byName.delegate.outputSchema.required.includes('wait_command'));
    assert.equal(byName.delegate.annotations.readOnlyHint, false);
    assert.deepEqual(byName.task_send.inputSchema.required, ['task_id']);
    assert.deepEqual(byName.task_send.inputSchema.properties.mode.enum, ['followup', 'steer']);
    assert.ok(byName.task_send.outputSchema.required.includes('delivery'));
    assert.deepEqual(byName.task_answer.inputSchema.required, ['task_id', 'answers']);
    assert.equal(byName.task_answer.inputSchema.properties.answers.items.type, 'string');
    assert.ok(byName.task_answer.outputSchema.required.includes('answered'));
    assert.equal(byName.task_output.outputSchema.properties.tasks.items.properties.questions.type, 'array');
    assert.equal(byName.task_status.outputSchema.properties.pending_questions.type, 'array');
    for (const name of ['delegate', 'task_send', 'task_answer']) {
      assert.equal(byName[name].annotations.readOnlyHint, false, name);
      assert.equal(byName[name].inputSchema.additionalProperties, false, name);
    }
  });
});

test('run + wait-any returns tasks in the order they end', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const ids = [];
    // Seconds apart, so that a spawn delayed under a loaded sanitizer run
    // cannot swap two ends.
    for (const [label, delay] of [['slow', 4.4], ['fast', 0.2], ['middle', 2.2]]) {
      const r = await call(client, 'run', { command: `sleep ${delay}; echo ${label}-done`, label });
      assert.equal(r.isError, false, text(r));
      assert.match(r.structuredContent.task_id, /^shell-\d+$/);
      // Answered once committed, its spawn already on its way: running
      // (detail "starting" until the supervisor reports it), not queued.
      assert.equal(r.structuredContent.status, 'running');
      assert.match(r.structuredContent.wait_command, new RegExp(`--session \\S+ wait ${r.structuredContent.task_id}$`));
      assert.match(r.structuredContent.wait_command, new RegExp(`^BATON_HOME=${home} `));
      ids.push(r.structuredContent.task_id);
    }
    const [slow, fast, middle] = ids;
    const order = [];
    let waiting = [...ids];
    while (waiting.length) {
      const r = await call(client, 'task_output', { task_ids: waiting, wait: true, timeout_s: 20 });
      assert.equal(r.isError, false, text(r));
      const s = r.structuredContent;
      assert.equal(s.waited, true);
      assert.equal(s.timed_out, false);
      assert.equal(s.tasks.length, 1, text(r));
      const ended = s.tasks[0];
      order.push(ended.task_id);
      assert.equal(ended.status, 'completed');
      assert.equal(ended.exit_code, 0);
      assert.match(ended.output, new RegExp(`${ended.label}-done`));
      assert.match(text(r), /\[status: completed, exit code: 0\]/);
      waiting = waiting.filter((id) => id !== ended.task_id);
      assert.deepEqual([...s.still_running].sort(), [...waiting].sort());
    }
    assert.deepEqual(order, [fast, middle, slow]);

    // An external waiter (the wait_command) works too.
    const r = await call(client, 'run', { command: 'sleep 0.3', label: 'ext' });
    const out = execFileSync('/bin/sh', ['-c', r.structuredContent.wait_command], { encoding: 'utf8', timeout: 20_000 });
    assert.match(out, /completed/);
  });
});

test('run with queue, priority and after: held tasks say why, start in order, a failed dependency fails its dependent', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    baton(home, ['queue', 'add', 'one', '--max', '1']);
    const tools = await client.listTools();
    const run = tools.tools.find((t) => t.name === 'run');
    for (const name of ['queue', 'priority', 'after', 'after_any'])
      assert.ok(run.inputSchema.properties[name], `run's schema lacks ${name}`);
    const start = async (args) => {
      const r = await call(client, 'run', args);
      assert.equal(r.isError, false, text(r));
      return r.structuredContent.task_id;
    };
    const gate = join(home, 'gate');
    const log = join(home, 'order');
    const first = await start({ command: `while [ ! -e ${gate} ]; do sleep 0.01; done; echo first >> ${log}`, queue: 'one' });
    const low = await start({ command: `echo low >> ${log}`, queue: 'one' });
    const high = await start({ command: `echo high >> ${log}`, queue: 'one', priority: 3 });
    const held = await call(client, 'task_status', { task_id: low });
    assert.match(text(held), /queue one: 1 of 1 running/, text(held));
    const failing = await start({ command: 'exit 4' });
    const after = await start({ command: `echo after >> ${log}`, after: [failing] });
    execFileSync('/bin/sh', ['-c', `touch ${gate}`]);
    for (const id of [first, low, high, after]) {
      const r = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 30 });
      assert.equal(r.isError, false, text(r));
    }
    const order = execFileSync('cat', [log], { encoding: 'utf8' });
    assert.equal(order, 'first\nhigh\nlow\n');
    const status = await call(client, 'task_status', { task_id: after });
    assert.match(text(status), new RegExp(`dependency ${failing} failed`), text(status));
    const bad = [
      [{ command: 'true', queue: 'nope' }, /no queue 'nope'; create it first/],
      [{ command: 'true', after: ['shell-999'] }, /(?<!-)after: .*shell-999/],
      [{ command: 'true', after: 'shell-1' }, /'after' must be a list of non-empty strings/],
      [{ command: 'true', priority: 1.5 }, /'priority' must be a whole number from -1000000 to 1000000/],
    ];
    for (const [args, pattern] of bad) {
      const r = await call(client, 'run', args);
      assert.equal(r.isError, true, `${JSON.stringify(args)}: ${text(r)}`);
      assert.match(text(r), pattern, text(r));
    }
  });
});

test('reads consume: each read returns only what is new, with a status line', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'echo one; sleep 1.5; echo two' });
    const id = r.structuredContent.task_id;
    await sleep(500);
    let o = await call(client, 'task_output', { task_id: id });
    assert.equal(o.isError, false, text(o));
    assert.equal(o.structuredContent.tasks[0].output, 'one\n');
    assert.match(text(o), /one\n\[status: running\]/);
    o = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 10 });
    assert.equal(o.structuredContent.tasks[0].output, 'two\n');
    assert.doesNotMatch(text(o), /one/);
    assert.match(text(o), /\[status: completed, exit code: 0\]/);
    o = await call(client, 'task_output', { task_id: id });
    assert.equal(o.structuredContent.tasks[0].output, '');
    assert.match(text(o), /\(no new output\)\n\[status: completed, exit code: 0\]/);
    // A failing command reports its exit code.
    const f = await call(client, 'run', { command: 'echo oops >&2; exit 3' });
    o = await call(client, 'task_output', { task_id: f.structuredContent.task_id, wait: true });
    assert.match(text(o), /oops\n\[status: failed, exit code: 3\]/);
    assert.equal(o.structuredContent.tasks[0].exit_code, 3);
  });
});

test('long output keeps head and tail and says exactly what it left out', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const expected = execFileSync('seq', ['1', '30000'], { encoding: 'utf8' });
    const r = await call(client, 'run', { command: 'seq 1 30000' });
    const id = r.structuredContent.task_id;
    const o = await call(client, 'task_output', { task_id: id, wait: true });
    const entry = o.structuredContent.tasks[0];
    assert.equal(entry.output_from, 0);
    assert.equal(entry.output_to, Buffer.byteLength(expected));
    assert.ok(entry.omitted_bytes > 100_000, `omitted ${entry.omitted_bytes}`);
    const m = entry.output.match(/\[\.\.\. (\d+) bytes omitted here \(bytes (\d+) to (\d+) of the output\)\. To read them: task_output with \{"task_id": "([^"]+)", "offset": (\d+)\}/);
    assert.ok(m, entry.output.slice(0, 300));
    const [, omitted, from, to, markerId, offset] = m;
    assert.equal(Number(omitted), entry.omitted_bytes);
    assert.equal(Number(to) - Number(from), entry.omitted_bytes);
    assert.equal(markerId, id);
    assert.equal(Number(offset), Number(from));
    const [head, tail] = entry.output.split(m[0]);
    assert.equal(head, expected.slice(0, Number(from)));
    assert.equal(tail.replace(/^[^\n]*\]\n/, ''), expected.slice(Number(to)));
    assert.equal(head.length + (expected.length - Number(to)) + entry.omitted_bytes, expected.length);
    assert.ok(text(o).length < 25_000, `text is ${text(o).length} chars`);
    // The offset read returns the left-out bytes, from where they start.
    const p = await call(client, 'task_output', { task_id: id, offset: Number(offset) });
    const page = p.structuredContent.tasks[0];
    assert.equal(page.output_from, Number(offset));
    assert.ok(page.output.startsWith(expected.slice(Number(offset), page.output_to)));
    assert.match(page.output, /more bytes after byte \d+\. To read on: task_output with \{"task_id": "shell-\d+", "offset": \d+\}/);
  });
});

test('max_output_bytes caps the output: the kept part, then the exact marker; a bad value is isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const bad = await call(client, 'run', { command: 'true', max_output_bytes: -1 });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /'max_output_bytes' must be a whole number from 0 to \d+, e.g. \{"max_output_bytes": 104857600\} \(got -1\)/);
    const r = await call(client, 'run', { command: 'seq 1 1000', max_output_bytes: 10 });
    assert.equal(r.isError, false, text(r));
    const o = await call(client, 'task_output', { task_id: r.structuredContent.task_id, wait: true, timeout_s: 20 });
    const entry = o.structuredContent.tasks[0];
    const dropped = Buffer.byteLength(execFileSync('seq', ['1', '1000'], { encoding: 'utf8' })) - 10;
    assert.equal(entry.output, `1\n2\n3\n4\n5\n[baton: output capped at 10 bytes (max_output); ${dropped} more bytes were dropped]\n`);
  });
});

test('secrets in output are masked in place: task_output and task_status; redact: false keeps them; a bad value is isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    // A made-up token of GitHub's shape, built here so it is on no command line.
    const token = 'ghp_' + 'Q'.repeat(36);
    const bad = await call(client, 'run', { command: 'true', redact: 'no' });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /'redact' must be true or false/);
    const env = { SECRET: token };
    const r = await call(client, 'run', { command: 'echo "push with $SECRET"', env });
    const o = await call(client, 'task_output', { task_id: r.structuredContent.task_id, wait: true, timeout_s: 20 });
    const shown = o.structuredContent.tasks[0].output;
    assert.equal(shown, `push with [redacted: github-token]${'*'.repeat(16)}\n`);
    assert.ok(!text(o).includes(token));
    const s = await call(client, 'task_status', { task_id: r.structuredContent.task_id });
    assert.deepEqual(s.structuredContent.redactions, { 'github-token': 1 });
    assert.match(text(s), /redacted: 1 secret masked \(1 github-token\)/);
    const kept = await call(client, 'run', { command: 'echo "push with $SECRET"', env, redact: false });
    const k = await call(client, 'task_output', { task_id: kept.structuredContent.task_id, wait: true, timeout_s: 20 });
    assert.equal(k.structuredContent.tasks[0].output, `push with ${token}\n`);
    const ks = await call(client, 'task_status', { task_id: kept.structuredContent.task_id });
    assert.equal(ks.structuredContent.redact, false);
  });
});

test('hard limits: memory, cpus and pids hold a run; task_status says what holds them; a bad size is isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const bad = await call(client, 'run', { command: 'true', memory: '12Q' });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /argument 'memory': '12Q' is not a size/);
    const r = await call(client, 'run', { command: 'head -c 1G /dev/zero | tail', memory: '64M', cpus: 0.5, pids: 50 });
    assert.equal(r.isError, false, text(r));
    const id = r.structuredContent.task_id;
    await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 60 });
    const s = await call(client, 'task_status', { task_id: id });
    const limits = s.structuredContent.limits;
    assert.equal(limits.memory_bytes, 64 * 1024 * 1024);
    assert.equal(limits.cpu_millis, 500);
    assert.equal(limits.pids, 50);
    assert.match(text(s), /limits: memory 64 MiB, 0\.5 CPUs, 50 processes \(held by /);
    if (limits.held_by.startsWith('cgroup')) {
      assert.equal(s.structuredContent.status, 'failed');
      assert.match(text(s), /out of memory: the limit of 64 MiB was reached/);
    } else {
      assert.notEqual(process.getuid(), 0, `as root, no cgroup held it: ${limits.held_by}`);
    }
  });
});

test('sandbox: run with sandbox strict writes only its folder; task_status names it; an unknown profile is isError', T, async (t) => {
  if (spawnSync('sh', ['-c', 'command -v bwrap']).status !== 0) {
    t.skip('bubblewrap (bwrap) is not installed: apt install bubblewrap (scripts/setup --tests)');
    return;
  }
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const bad = await call(client, 'run', { command: 'true', sandbox: 'nosuch' });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /no sandbox profile 'nosuch'; the profiles are strict, agent, build/);
    const folder = join(home, 'work');
    mkdirSync(folder);
    const outside = `/var/tmp/baton-sandbox-mcp-${process.pid}`;
    const r = await call(client, 'run', {
      command: `echo kept > mine.txt; echo escaped > ${outside} || echo refused`,
      cwd: folder, sandbox: 'strict',
    });
    assert.equal(r.isError, false, text(r));
    const id = r.structuredContent.task_id;
    const o = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 30 });
    assert.match(o.structuredContent.tasks[0].output, /Read-only file system\nrefused\n/);
    assert.equal(existsSync(outside), false);
    assert.equal(existsSync(join(folder, 'mine.txt')), true);
    const s = await call(client, 'task_status', { task_id: id });
    assert.deepEqual(s.structuredContent.sandbox, { name: 'strict', network: 'none' });
    assert.match(text(s), /sandbox: strict \(network none\)/);
  });
});

test('retries run a failing command again under one id; task_status lists the attempts; a bad value is isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const bad = await call(client, 'run', { command: 'true', retries: 101 });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /'retries' must be a whole number from 0 to 100/);
    const slow = await call(client, 'run', { command: 'true', retries: 1, retry_delay_s: 601 });
    assert.equal(slow.isError, true, text(slow));
    assert.match(text(slow), /'retry_delay_s' must be a number of seconds >= 0 and at most 600/);
    const counter = `${home}/count`;
    const command = `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; echo try $n; [ $n -ge 2 ]`;
    const r = await call(client, 'run', { command, retries: 2, retry_delay_s: 0.1 });
    assert.equal(r.isError, false, text(r));
    const id = r.structuredContent.task_id;
    const o = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 30 });
    const entry = o.structuredContent.tasks[0];
    assert.equal(entry.status, 'completed');
    assert.equal(entry.output, 'try 1\n[baton: attempt 2 of 3 (attempt 1: exit code: 1)]\ntry 2\n');
    const s = await call(client, 'task_status', { task_id: id });
    assert.equal(s.structuredContent.retries, 2);
    assert.equal(s.structuredContent.attempts.length, 1);
    assert.equal(s.structuredContent.attempts[0].exit_code, 1);
    assert.deepEqual([s.structuredContent.attempts[0].output_from, s.structuredContent.attempts[0].output_to], [0, 6]);
    assert.match(text(s), /attempt 1: exit code: 1, ran [\d.]+m?s, output bytes 0-6\n/);
  });
});

test('kill: requested, then already-terminal; the task ends as killed', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'sleep 60' });
    const id = r.structuredContent.task_id;
    let k = await call(client, 'task_kill', { task_id: id, reason: 'not needed' });
    assert.equal(k.isError, false, text(k));
    assert.deepEqual(k.structuredContent.results, [{ task_id: id, outcome: 'requested' }]);
    const o = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 20 });
    assert.equal(o.structuredContent.tasks[0].status, 'killed');
    assert.match(text(o), /\[status: killed, not needed\]/);
    k = await call(client, 'task_kill', { task_ids: [id] });
    assert.deepEqual(k.structuredContent.results, [{ task_id: id, outcome: 'already-terminal' }]);
    k = await call(client, 'task_kill', { task_ids: [id, 'shell-999'] });
    assert.equal(k.isError, true);
    assert.match(text(k), /shell-999/);
    // The audit trail names the MCP client and its session: one run and one
    // kill (the kill of an ended task and the refused one change nothing).
    const { records } = JSON.parse(baton(home, ['--json', 'audit', '--task', id]));
    assert.deepEqual(records.map((r) => r.action), ['run', 'kill']);
    for (const record of records) {
      assert.equal(record.client, 'mcp');
      assert.match(record.session, /^mcp-/);
      assert.notEqual(record.pid, process.pid);
    }
    assert.equal(records[1].reason, 'not needed');
  });
});

test('task_rerun: an ended task again as a new task; a live one is isError and starts nothing', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const first = (await call(client, 'run', { command: 'echo again-$MODE', env: { MODE: 'x' }, label: 'twice' }))
      .structuredContent.task_id;
    await call(client, 'task_output', { task_id: first, wait: true, timeout_s: 20 });
    const r = await call(client, 'task_rerun', { task_id: first });
    assert.equal(r.isError, false, text(r));
    const second = r.structuredContent.task_id;
    assert.notEqual(second, first);
    assert.match(r.structuredContent.wait_command, new RegExp(second));
    const o = await call(client, 'task_output', { task_id: second, wait: true, timeout_s: 20 });
    assert.equal(o.structuredContent.tasks[0].status, 'completed');
    assert.match(text(o), /again-x/);
    const task = JSON.parse(baton(home, ['--session', '*', '--json', 'status', second]));
    assert.equal((task.task ?? task).rerun_of, first);
    assert.equal((task.task ?? task).label, 'twice');
    const live = (await call(client, 'run', { command: 'sleep 60' })).structuredContent.task_id;
    const refused = await call(client, 'task_rerun', { task_id: live });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /is still (queued|running); a task runs again once it ended/);
    const listed = await call(client, 'task_list', {});
    assert.equal(listed.structuredContent.tasks.length, 3);
    await call(client, 'task_kill', { task_id: live });
  });
});

test('task_edit: a held task takes new values before it starts; a running one is isError and unchanged', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const first = (await call(client, 'run', { command: 'sleep 60' })).structuredContent.task_id;
    const held = (await call(client, 'run', { command: 'echo before', after: [first], label: 'old' }))
      .structuredContent.task_id;
    const r = await call(client, 'task_edit', { task_id: held, label: 'new', priority: 2, command: 'echo after-$MODE', env: { MODE: 'y' } });
    assert.equal(r.isError, false, text(r));
    assert.equal(r.structuredContent.status, 'queued');
    assert.equal(r.structuredContent.label, 'new');
    assert.equal(r.structuredContent.command, 'echo after-$MODE');
    assert.match(text(r), /^Edited .*\[status: queued, after shell-\d+\]/);
    const refused = await call(client, 'task_edit', { task_id: first, label: 'x' });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /is running: only a queued task can be edited/);
    assert.match(text(refused), /nothing was changed/);
    // Waiting for nothing any more, it starts.
    const freed = await call(client, 'task_edit', { task_id: held, after: [] });
    assert.equal(freed.isError, false, text(freed));
    const o = await call(client, 'task_output', { task_id: held, wait: true, timeout_s: 20 });
    assert.equal(o.structuredContent.tasks[0].status, 'completed');
    assert.match(text(o), /after-y/);
    await call(client, 'task_kill', { task_id: first });
  });
});

test('notices: a task that ended unseen is told once, in text and structuredContent', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'echo quick', label: 'quick' });
    const id = r.structuredContent.task_id;
    await sleep(800);
    const first = await call(client, 'task_list');
    assert.match(text(first), new RegExp(`^${id} \\[shell\\] completed — quick`, 'm'));
    const notices = first.structuredContent.notices;
    assert.equal(notices.length, 1, JSON.stringify(first));
    assert.equal(notices[0].task_id, id);
    assert.match(notices[0].text, new RegExp(`${id} completed`));
    assert.match(text(first), new RegExp(`Notices[^\\n]*\\n- ${id} completed`));
    const second = await call(client, 'task_list');
    assert.deepEqual(second.structuredContent.notices, []);
    assert.doesNotMatch(text(second), /Notices/);
    // A task the session waited on gets no notice at all.
    const w = await call(client, 'run', { command: 'sleep 0.2' });
    await call(client, 'task_output', { task_id: w.structuredContent.task_id, wait: true });
    await sleep(300);
    const third = await call(client, 'task_list');
    assert.deepEqual(third.structuredContent.notices, []);
  });
});

test('two sessions are isolated', T, async () => {
  await withHome(async (home, track) => {
    const a = track(await connect(home));
    const b = track(await connect(home));
    const r = await call(a.client, 'run', { command: 'sleep 30', label: 'mine' });
    const id = r.structuredContent.task_id;
    const listB = await call(b.client, 'task_list');
    assert.deepEqual(listB.structuredContent.tasks, []);
    const listA = await call(a.client, 'task_list');
    assert.equal(listA.structuredContent.tasks.length, 1);
    for (const [tool, args] of [['task_output', { task_id: id }], ['task_status', { task_id: id }], ['task_kill', { task_id: id }]]) {
      const res = await call(b.client, tool, args);
      assert.equal(res.isError, true, `${tool}: ${text(res)}`);
      assert.match(text(res), /permission_denied|another session/);
    }
    const st = await call(a.client, 'task_status', { task_id: id });
    assert.match(st.structuredContent.status, /^(queued|running)$/);  // Spawned at once, or about to be.
  });
});

test('bad arguments are isError results the model can act on', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const cases = [
      ['run', {}, /missing argument 'command'/],
      ['run', { command: 42 }, /'command' must be a non-empty string/],
      ['run', { command: 'true', timeout_s: 'soon' }, /'timeout_s' must be a number/],
      ['run', { command: 'true', env: { A: 1 } }, /'env'/],
      ['run', { command: 'true', comand: 'x' }, /unknown argument 'comand'/],
      ['task_output', {}, /task_id/],
      ['task_output', { task_ids: 'shell-1' }, /'task_ids' must be a list/],
      ['task_output', { task_id: 'shell-1', wait: 'yes' }, /'wait' must be true or false/],
      ['task_output', { task_id: 'nonsense' }, /invalid_argument|not_found/],
      ['task_status', { task_id: 'shell-77' }, /not_found.*shell-77/],
      ['task_kill', {}, /task_id/],
    ];
    for (const [tool, args, pattern] of cases) {
      const res = await call(client, tool, args);
      assert.equal(res.isError, true, `${tool} ${JSON.stringify(args)}: ${text(res)}`);
      assert.match(text(res), pattern, `${tool} ${JSON.stringify(args)}`);
    }
    // The error names every tool, not a stale list of some.
    const unknown = await call(client, 'no_such_tool', {}).then(
      (res) => text(res), (error) => String(error.message));
    assert.match(unknown, /Unknown tool/);
    for (const name of ['delegate', 'run', 'task_answer', 'task_events', 'task_kill', 'task_list', 'task_output', 'task_questions', 'task_send', 'task_status', 'session_budget'])
      assert.ok(unknown.includes(name), `${name} missing from: ${unknown}`);
  });
});

test('task_list marks what is not collected; task_output naming an unknown id consumes nothing', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'echo kept' });
    const id = r.structuredContent.task_id;
    // Ended, as task_list shows, which marks nothing seen: not collected.
    let listed;
    for (let i = 0; i < 200; i++) {
      listed = await call(client, 'task_list');
      if (listed.structuredContent.tasks[0].status === 'completed') break;
      await sleep(100);
    }
    assert.equal(listed.structuredContent.tasks[0].uncollected, true, text(listed));
    assert.match(text(listed), /\[not collected: /);
    const bad = await call(client, 'task_output', { task_ids: [id, 'shell-77'] });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /not_found: no task shell-77 in this session .*nothing was read/);
    assert.doesNotMatch(text(bad), /kept/);
    assert.equal((await call(client, 'task_list')).structuredContent.tasks[0].uncollected, true);
    const good = await call(client, 'task_output', { task_id: id });
    assert.equal(good.structuredContent.tasks[0].output, 'kept\n');
    listed = await call(client, 'task_list');
    assert.equal(listed.structuredContent.tasks[0].uncollected, false);
    assert.doesNotMatch(text(listed), /not collected/);
  });
});

test('progress notifications at least every 5 s during a long wait', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'sleep 7' });
    const seen = [];
    const start = Date.now();
    const o = await call(client, 'task_output', { task_id: r.structuredContent.task_id, wait: true, timeout_s: 30 },
      { onprogress: (p) => seen.push({ at: Date.now() - start, progress: p.progress, message: p.message }) });
    assert.equal(o.structuredContent.tasks[0].status, 'completed');
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    let last = 0;
    for (const p of seen) {
      assert.ok(p.at - last <= 5_000, JSON.stringify(seen));
      last = p.at;
    }
    assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress));
    assert.match(seen[0].message, /waiting for shell-\d+/);
  });
});

test('a wait times out with the state only, well before the client limit', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'echo hidden; sleep 30' });
    const id = r.structuredContent.task_id;
    const start = Date.now();
    const o = await call(client, 'task_output', { task_id: id, wait: true, timeout_s: 1 });
    assert.ok(Date.now() - start < 5_000);
    assert.equal(o.structuredContent.timed_out, true);
    assert.deepEqual(o.structuredContent.still_running, [id]);
    assert.doesNotMatch(text(o), /hidden/);
    assert.match(text(o), /\[status: running\]/);
    // Nothing was consumed by the wait.
    const n = await call(client, 'task_output', { task_id: id });
    assert.equal(n.structuredContent.tasks[0].output, 'hidden\n');
  });
});

test('cancelling a wait ends it; the server keeps serving and the task runs on', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home));
    const r = await call(client, 'run', { command: 'sleep 60' });
    const id = r.structuredContent.task_id;
    const connections = () => JSON.parse(baton(home, ['--json', 'daemon', 'status'])).connections;
    const before = connections();
    const controller = new AbortController();
    const pending = call(client, 'task_output', { task_id: id, wait: true, timeout_s: 40 }, { signal: controller.signal });
    await sleep(300);
    assert.equal(connections(), before + 1, 'the wait has a connection of its own');
    // While the wait is pending, other requests are served at once: not
    // after the wait's 40 s (the bound leaves room for a loaded machine).
    let t0 = Date.now();
    await client.ping();
    const list = await call(client, 'task_list');
    assert.ok(Date.now() - t0 < 10_000, `served in ${Date.now() - t0} ms`);
    assert.equal(list.structuredContent.tasks.length, 1);
    t0 = Date.now();
    controller.abort('no longer needed');
    await assert.rejects(pending, /abort|no longer needed/i);
    // The server dropped the wait (its connection closed) ...
    const deadline = Date.now() + 3_000;
    while (connections() !== before && Date.now() < deadline) await sleep(50);
    assert.equal(connections(), before);
    // ... and nothing else changed.
    const st = await call(client, 'task_status', { task_id: id });
    assert.match(st.structuredContent.status, /^(queued|running)$/);  // Spawned at once, or about to be.
    await client.ping();
  });
});

test('EOF exits cleanly; the same BATON_SESSION reattaches and sees its tasks', T, async () => {
  await withHome(async (home, track) => {
    const env = { BATON_SESSION: 'e2e-reattach' };
    const first = await connect(home, env);
    const r = await call(first.client, 'run', { command: 'sleep 60', label: 'survivor' });
    const id = r.structuredContent.task_id;
    const proc = first.transport._process;
    const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
    // EOF alone, not the SDK's close(), which sends SIGTERM after 2 s: so
    // the exit below is the server's own, however long a loaded machine
    // takes (the bound only keeps a hung server from hanging the test).
    proc.stdin.end();
    let timer;
    const hung = new Promise((resolve) => { timer = setTimeout(resolve, 20_000, 'still running 20 s after EOF'); });
    const how = await Promise.race([exited, hung]);
    clearTimeout(timer);
    assert.deepEqual(how, { code: 0, signal: null });
    await first.client.close();
    const second = track(await connect(home, env));
    const list = await call(second.client, 'task_list');
    const live = (status) => (status === 'queued' || status === 'running' ? 'live' : status);
    assert.deepEqual(list.structuredContent.tasks.map((t) => [t.task_id, live(t.status), t.label]), [[id, 'live', 'survivor']]);
    const other = track(await connect(home));
    assert.deepEqual((await call(other.client, 'task_list')).structuredContent.tasks, []);
  });
});

// Raw stdio, no SDK: the protocol faults and the discover probe.
test('raw protocol: discover probe, parse errors, bad shapes, string ids', T, async () => {
  await withHome(async (home) => {
    const child = spawn(BATON, ['mcp'], { env: batonEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
    // A failed assertion must not leave the server holding the runner.
    try {
      const lines = createInterface({ input: child.stdout });
      const replies = [];
      const waiters = [];
      lines.on('line', (line) => { replies.push(JSON.parse(line)); waiters.splice(0).forEach((w) => w()); });
      const next = async () => {
        const deadline = Date.now() + 5_000;
        while (!replies.length) {
          assert.ok(Date.now() < deadline, 'no reply within 5 s');
          await new Promise((resolve) => { waiters.push(resolve); setTimeout(resolve, 100); });
        }
        return replies.shift();
      };
      const send = (obj) => child.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n');
      // The probe is answered (next() allows 5 s), not left to a client's
      // fallback timeout.
      send({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: {} });
      let m = await next();
      // A dual-era server: the probe finds the modern era, and initialize
      // still serves the legacy one (modern.test.mjs covers the modern era).
      assert.equal(m.id, 'server-discover-probe-1');
      assert.equal(m.result.resultType, 'complete');
      assert.deepEqual(m.result.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
      send({ jsonrpc: '2.0', id: 'init-1', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
      m = await next();
      assert.equal(m.id, 'init-1');
      assert.equal(m.result.protocolVersion, '2024-11-05');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2099-01-01' } });
      assert.equal((await next()).result.protocolVersion, '2025-11-25');
      send('{"jsonrpc": "2.0", "id": 3, "method": ');
      m = await next();
      assert.equal(m.error.code, -32700);
      assert.equal(m.id, null);
      send({ jsonrpc: '1.0', id: 4, method: 'ping' });
      m = await next();
      assert.deepEqual([m.id, m.error.code], [4, -32600]);
      send([{ jsonrpc: '2.0', id: 5, method: 'ping' }]);
      assert.equal((await next()).error.code, -32600);
      send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
      assert.deepEqual(await next(), { jsonrpc: '2.0', id: 'p', result: {} });
      send({ jsonrpc: '2.0', id: 6, method: 'resources/list' });
      assert.equal((await next()).error.code, -32601);
      send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run', arguments: 'x' } });
      assert.equal((await next()).error.code, -32602);
      const exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
      child.stdin.end();
      assert.equal(await exit, 0);
      assert.equal(replies.length, 0, 'nothing but replies on stdout');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

test('raw protocol: deep nesting and an over-long line get one error each, and the server keeps serving', T, async () => {
  // Issue 12, findings 3 and 10: a cancellation whose requestId nests
  // 60,000 lists deep killed `baton mcp` (SIGSEGV), and one over-long line
  // was answered with two errors.
  await withHome(async (home) => {
    const child = spawn(BATON, ['mcp'], { env: batonEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = createInterface({ input: child.stdout });
    const replies = [];
    lines.on('line', (line) => replies.push(JSON.parse(line)));
    const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const next = async (ms = 5_000) => {
      const deadline = Date.now() + ms;
      while (!replies.length) {
        assert.ok(Date.now() < deadline, `no reply within ${ms} ms`);
        await sleep(20);
      }
      return replies.shift();
    };
    const send = (line) => new Promise((resolve) => child.stdin.write(line + '\n', resolve));
    const deep = '['.repeat(60_000) + ']'.repeat(60_000);

    await send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    assert.deepEqual(await next(), { jsonrpc: '2.0', id: 1, result: {} });
    await send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${deep},"reason":5}}`);
    let m = await next();
    assert.equal(m.error.code, -32700);
    assert.equal(m.id, null);
    assert.match(m.error.message, /nested deeper than/);
    await send(`{"jsonrpc":"2.0","id":${deep},"method":"ping"}`);
    m = await next();
    assert.deepEqual([m.id, m.error.code], [null, -32700]);
    // A cancellation with a reason of the wrong type is ignored, not fatal.
    await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 5 } }));

    // 64 MiB and 1 MiB more in one line: one error, then the next line.
    await send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"${'x'.repeat((64 << 20) + (1 << 20))}"}}`);
    await send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' }));
    m = await next(30_000);
    assert.deepEqual([m.id, m.error.code], [null, -32700]);
    assert.match(m.error.message, /too long/);
    assert.deepEqual(await next(), { jsonrpc: '2.0', id: 4, result: {} }, 'one error for the long line, then the ping');

    child.stdin.end();
    assert.deepEqual(await exit, { code: 0, signal: null });
    assert.equal(replies.length, 0, 'nothing but replies on stdout');
  });
});

// ---- Agent tasks (delegate) against the scripted claude of tests/agents.

const FAKES = new URL('../agents/fakes', import.meta.url).pathname;
const agentEnv = () => ({ PATH: `${FAKES}:${process.env.PATH}` });

test('delegate: a question comes back with task_output wait, task_answer answers it, a late answer is refused', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const d = await call(client, 'delegate', { brief: 'please ASK me', label: 'asker' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    assert.match(id, /^agent-\d+$/);
    assert.equal(d.structuredContent.kind, 'agent');
    assert.equal(d.structuredContent.agent, 'claude');
    assert.match(d.structuredContent.wait_command, new RegExp(`--session \\S+ wait ${id}$`));
    assert.match(text(d), /task_answer/);

    // The wait returns when it asks, with the question.
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.isError, false, text(w));
    assert.equal(w.structuredContent.timed_out, false);
    const entry = w.structuredContent.tasks[0];
    assert.equal(entry.status, 'waiting', text(w));
    assert.equal(entry.questions.length, 1);
    const item = entry.questions[0].items[0];
    assert.equal(item.prompt, 'Which database?');
    assert.deepEqual(item.options.map((o) => o.label), ['SQLite', 'Postgres']);
    assert.match(text(w), /Which database\?/);
    assert.match(text(w), /\[2\] Postgres — server/);
    assert.match(text(w), /task_answer \{"task_id": "agent-\d+", "answers": \["1"\]\}/);

    // task_status shows it too, with the tools used.
    const st = await call(client, 'task_status', { task_id: id });
    assert.equal(st.isError, false, text(st));
    assert.equal(st.structuredContent.status, 'waiting');
    assert.deepEqual(st.structuredContent.tools_used, ['Bash']);
    assert.equal(st.structuredContent.pending_questions[0].items[0].prompt, 'Which database?');
    assert.match(text(st), /tools used: Bash/);

    const a = await call(client, 'task_answer', { task_id: id, answers: ['2'] });
    assert.equal(a.isError, false, text(a));
    assert.deepEqual(a.structuredContent.answered, ['Postgres']);
    assert.match(text(a), /answered Postgres/);

    const late = await call(client, 'task_answer', { task_id: id, answers: ['1'] });
    assert.equal(late.isError, true, text(late));
    assert.match(text(late), /no open question/);

    // Then it ends, with the transcript.
    let done;
    let transcript = '';
    for (let i = 0; i < 5 && !done; i++) {
      const r = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
      assert.equal(r.isError, false, text(r));
      const e = r.structuredContent.tasks.find((t) => t.task_id === id);
      transcript += e?.output ?? '';
      if (e && e.status !== 'waiting' && e.status !== 'running') done = { r, e };
    }
    assert.ok(done, 'the agent task ended');
    assert.equal(done.e.status, 'completed', text(done.r));
    assert.equal(done.e.questions, undefined);
    assert.match(transcript, /turn 1: please ASK me \[answer: Postgres\]/);
    assert.match(text(done.r), /\[status: completed/);
    const st2 = await call(client, 'task_status', { task_id: id });
    assert.match(st2.structuredContent.last_text, /\[answer: Postgres\]/);
    assert.deepEqual(st2.structuredContent.pending_questions, []);
    // Its brief reads back, and everything it did, a page at a time.
    assert.equal(st2.structuredContent.brief, 'please ASK me');
    assert.match(text(st2), /agent: claude, model its default\nbrief:\nplease ASK me\n/);
    const types = [];
    let after = 0;
    let pages = 0;
    for (let more = true; more; pages++) {
      const page = await call(client, 'task_events', { task_id: id, after, limit: 2 });
      assert.equal(page.isError, false, text(page));
      assert.ok(page.structuredContent.events.length <= 2);
      for (const event of page.structuredContent.events) {
        assert.ok(event.seq > after, `${event.seq} after ${after}`);
        types.push(event.type);
      }
      if (page.structuredContent.more)
        assert.match(text(page), new RegExp(`more: task_events with after: ${page.structuredContent.next_after}`));
      else
        assert.match(text(page), /that was its last event/);
      after = page.structuredContent.next_after;
      more = page.structuredContent.more;
      assert.ok(pages < 50, 'pages end');
    }
    assert.ok(pages >= 2, `${pages} pages of ${types}`);
    for (const type of ['tool', 'question', 'answer', 'text', 'result'])
      assert.ok(types.includes(type), `${type} in ${types}`);
    assert.ok(types.indexOf('question') < types.indexOf('answer'), `${types}`);
    const past = await call(client, 'task_events', { task_id: id, after });
    assert.deepEqual(past.structuredContent.events, []);
    assert.equal(past.structuredContent.next_after, after);
    for (const [args, why] of [
      [{ task_id: id, limit: 0 }, /argument 'limit' must be a whole number from 1 to 500/],
      [{ task_id: id, limit: 501 }, /argument 'limit' must be a whole number from 1 to 500/],
      [{ task_id: id, after: -1 }, /argument 'after' must be a whole number >= 0/],
      [{ task_id: 'agent-999' }, /agent-999/],
      [{}, /task_id/],
    ]) {
      const bad = await call(client, 'task_events', args);
      assert.equal(bad.isError, true, text(bad));
      assert.match(text(bad), why);
    }
  });
});

test('a question the agent withdrew is no longer pending (batond decides which are open)', T, async () => {
  // The scripted codex resolves its own question after 1 s (AUTORESOLVE)
  // and works 4 s more. baton mcp used to decide pending questions from the
  // events itself, forgot withdrawals, and showed this one until the end.
  await withHome(async (home, track) => {
    const agentHome = join(home, 'agent-home');
    mkdirSync(agentHome);
    const { client } = track(await connect(home, { ...agentEnv(), HOME: agentHome, CODEX_HOME: join(agentHome, '.codex') }));
    const d = await call(client, 'delegate', { brief: 'ASK AUTORESOLVE pick', agent: 'codex' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.structuredContent.tasks[0].status, 'waiting', text(w));
    assert.equal(w.structuredContent.tasks[0].questions.length, 1, text(w));

    let st;
    for (let i = 0; i < 100; i++) {
      st = await call(client, 'task_status', { task_id: id });
      if (st.structuredContent.status !== 'waiting') break;
      await sleep(100);
    }
    assert.equal(st.structuredContent.status, 'running', text(st));
    assert.deepEqual(st.structuredContent.pending_questions, [], text(st));
    assert.doesNotMatch(text(st), /asks|task_answer/);
    const r = await call(client, 'task_output', { task_id: id });
    assert.equal(r.structuredContent.tasks[0].questions, undefined, text(r));

    const done = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(done.structuredContent.tasks[0].status, 'completed', text(done));
  });
});

test('task_send: steer into a SLOW turn and a follow-up after it', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const d = await call(client, 'delegate', { brief: 'SLOW work' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    // A message goes to a running agent: wait until it runs (its first
    // event, the session, is written once the CLI answered).
    for (let i = 0; i < 100; i++) {
      const st = await call(client, 'task_status', { task_id: id });
      if (st.structuredContent.status === 'running' && st.structuredContent.tools_used?.length) break;
      await sleep(50);
    }
    const steer = await call(client, 'task_send', { task_id: id, message: 'also STEERED', mode: 'steer' });
    assert.equal(steer.isError, false, text(steer));
    assert.equal(steer.structuredContent.mode, 'steer');
    assert.equal(steer.structuredContent.delivery, 'steered');
    const follow = await call(client, 'task_send', { task_id: id, message: 'then FOLLOWED' });
    assert.equal(follow.isError, false, text(follow));
    assert.equal(follow.structuredContent.mode, 'followup');
    assert.match(follow.structuredContent.delivery, /queued/);

    const bad = await call(client, 'task_send', { task_id: id, message: 'x', mode: 'shout' });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /'mode' must be one of "followup", "steer"/);

    let transcript = '';
    let ended;
    for (let i = 0; i < 5 && !ended; i++) {
      const r = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
      assert.equal(r.isError, false, text(r));
      const e = r.structuredContent.tasks.find((t) => t.task_id === id);
      transcript += e?.output ?? '';
      if (e && e.status !== 'running') ended = e;
    }
    assert.equal(ended?.status, 'completed', transcript);
    assert.match(transcript, /turn 2: also STEERED/);
    assert.match(transcript, /turn 3: then FOLLOWED/);

    // An ended task takes no message.
    const late = await call(client, 'task_send', { task_id: id, message: 'too late' });
    assert.equal(late.isError, true, text(late));
    assert.match(text(late), /resume_from/);
  });
});

test('delegate: worktree true runs it on a branch of its own; outside a repository it is isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const repo = join(home, 'repo');
    mkdirSync(repo);
    const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
    git('init', '-q');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'base');

    const bad = await call(client, 'delegate', { brief: 'x', cwd: repo, worktree: 'yes' });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /argument 'worktree' must be true or false/);
    const outside = await call(client, 'delegate', { brief: 'x', cwd: home, worktree: true });
    assert.equal(outside.isError, true, text(outside));
    assert.match(text(outside), /is not in a git repository.*\(nothing was started\)/s);
    // MCP texts name MCP arguments, never the CLI's flags.
    assert.doesNotMatch(text(outside), /--worktree/);

    const d = await call(client, 'delegate', { brief: 'isolated work: COMMIT', cwd: repo, worktree: true });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const worktree = d.structuredContent.worktree;
    assert.equal(worktree.branch, `baton/${id}`);
    assert.equal(worktree.base, git('rev-parse', 'HEAD').trim());
    assert.equal(d.structuredContent.cwd, worktree.path);
    assert.match(text(d), new RegExp(`own git worktree .* on branch baton/${id}`));
    assert.match(git('worktree', 'list'), new RegExp(`\\[baton/${id}\\]`));
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.structuredContent.tasks[0].status, 'completed', text(w));
    // What the worker did reaches the director without git: the branch,
    // its commits and the diff, in the text and the structured result.
    const evidence = w.structuredContent.tasks[0].evidence;
    assert.equal(evidence.branch.branch, `baton/${id}`, JSON.stringify(evidence));
    assert.equal(evidence.branch.commits.length, 1);
    assert.match(evidence.branch.commits[0], /^[0-9a-f]+ turn 1: work$/);
    assert.match(evidence.diff_path, new RegExp(`/${id}/diff\\.patch$`));
    assert.match(text(w), /diff: \/\S+diff\.patch/);
    const s = await call(client, 'task_status', { task_id: id });
    assert.match(s.structuredContent.evidence.diff, /\+\+\+ b\/work\.txt\n@@ .* @@\n\+work of turn 1\n/);
    assert.equal(s.structuredContent.evidence.diff_bytes, s.structuredContent.evidence.diff.length);
    assert.match(text(s), /the diff \(\d+ bytes\):\n(.*\n)*\+work of turn 1\n/);
    assert.match(text(s), new RegExp(`branch baton/${id}: 1 commit on`));

    // Its worktree's life is batond's, for MCP as for the CLI: listed as
    // git tells it, kept by a plain clean (its commit is not merged),
    // removed when named, its branch (the work) kept.
    const listed = await call(client, 'worktrees', {});
    assert.equal(listed.isError, false, text(listed));
    assert.equal(listed.structuredContent.worktrees.length, 1, text(listed));
    assert.equal(listed.structuredContent.worktrees[0].state, '1 commit not merged', text(listed));
    const kept = await call(client, 'worktrees', { clean: true });
    assert.equal(kept.structuredContent.worktrees[0].outcome, 'kept', text(kept));
    assert.match(kept.structuredContent.worktrees[0].note, /1 commit not in HEAD/);
    assert.ok(existsSync(worktree.path));
    const gone = await call(client, 'worktrees', { clean: true, task_ids: [id] });
    assert.equal(gone.structuredContent.worktrees[0].outcome, 'removed', text(gone));
    assert.match(gone.structuredContent.worktrees[0].note, new RegExp(`kept branch baton/${id} \\(1 commit not merged`));
    assert.ok(!existsSync(worktree.path));
    assert.match(git('branch', '--list', `baton/${id}`), new RegExp(`baton/${id}`));
    // A rule across fields is the request's own, batond's for every front end.
    const forced = await call(client, 'worktrees', { force: true });
    assert.equal(forced.isError, true, text(forced));
    assert.match(text(forced), /'force' goes with 'clean'/);
    const unknown = await call(client, 'worktrees', { task_ids: ['agent-99'] });
    assert.equal(unknown.isError, true, text(unknown));
    assert.match(text(unknown), /not_found: agent-99 has no worktree/);
  });
});

test('land: a finished worker\'s branch lands on the branch it was made from; land_queue shows it; a bad id is isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const repo = join(home, 'repo');
    mkdirSync(repo);
    const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 't');
    git('commit', '-q', '--allow-empty', '-m', 'base');

    const d = await call(client, 'delegate', { brief: 'isolated work: COMMIT', cwd: repo, worktree: true });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const running = await call(client, 'land', { task_ids: [id] });
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.structuredContent.tasks[0].status, 'completed', text(w));
    // Refused while it ran (unless it had ended already), and for an unknown id.
    if (running.isError) assert.match(text(running), /land it once it ended completed/);
    const unknown = await call(client, 'land', { task_ids: ['agent-99'] });
    assert.equal(unknown.isError, true, text(unknown));
    assert.match(text(unknown), /agent-99/);

    const l = running.isError ? await call(client, 'land', { task_ids: [id], check: 'test -e work.txt' }) : running;
    assert.equal(l.isError, false, text(l));
    assert.equal(l.structuredContent.entries[0].task, id);
    assert.equal(l.structuredContent.entries[0].target, 'main');
    let entry;
    for (let i = 0; i < 200; i++) {
      const q = await call(client, 'land_queue', { task_id: id });
      assert.equal(q.isError, false, text(q));
      entry = q.structuredContent.entries[0];
      if (entry.state === 'landed' || entry.state === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(entry.state, 'landed', JSON.stringify(entry));
    assert.equal(entry.result, git('rev-parse', 'main').trim());
    assert.match(git('log', '--format=%s', 'main'), /turn 1: work/);
  });
});

test('conflicts: two workers committing the same file are an overlap, told once in the notices', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, { ...agentEnv(), BATON_SESSION: 'director' }));
    const repo = join(home, 'repo');
    mkdirSync(repo);
    const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
    git('init', '-q');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'base');
    // The fake Claude Code commits work.txt, then stays in its turn.
    const ids = [];
    for (let i = 0; i < 2; i++) {
      const d = await call(client, 'delegate', { brief: 'COMMIT then SLOW30', cwd: repo, worktree: true });
      assert.equal(d.isError, false, text(d));
      ids.push(d.structuredContent.task_id);
    }
    // The radar's rounds run every second or so: until it lists the pair,
    // each call's notices collected.
    const told = [];
    let listed;
    const deadline = Date.now() + 30_000;
    do {
      await new Promise((resolve) => setTimeout(resolve, 200));
      listed = await call(client, 'conflicts', {});
      assert.equal(listed.isError, false, text(listed));
      told.push(...listed.structuredContent.notices.filter((n) => n.overlap));
    } while (listed.structuredContent.overlaps.length === 0 && Date.now() < deadline);
    const [overlap] = listed.structuredContent.overlaps;
    assert.deepEqual(overlap?.tasks, ids, text(listed));
    // Both added the same work.txt, with the same lines: git merges them.
    assert.equal(overlap.kind, 'same_file');
    assert.deepEqual(overlap.files, ['work.txt']);
    assert.match(text(listed), new RegExp(`${ids[0]} and ${ids[1]} both changed work\\.txt .*the same file`));
    // One notice for the director, owner of both, on its older task.
    const more = await call(client, 'conflicts', { task_id: ids[1] });
    told.push(...more.structuredContent.notices.filter((n) => n.overlap));
    assert.equal(told.length, 1, JSON.stringify(told));
    assert.equal(told[0].task_id, ids[0]);
    assert.equal(told[0].overlap.kind, 'same_file');
    assert.match(told[0].text, /both changed work\.txt/);
    assert.equal(more.structuredContent.overlaps.length, 1);
    const unknown = await call(client, 'conflicts', { task_id: 'agent-99' });
    assert.equal(unknown.isError, true, text(unknown));
    assert.match(text(unknown), /agent-99/);
    await call(client, 'task_kill', { task_ids: ids });
  });
});

test('task_questions: a sub-worker\'s question reaches the director, who answers it', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, { ...agentEnv(), BATON_SESSION: 'director' }));
    const w = await call(client, 'delegate', { brief: 'SLOW20 work on' });
    assert.equal(w.isError, false, text(w));
    const worker = w.structuredContent.task_id;
    // What the worker's own baton would do: its BATON_TASK_ID, a session of its own.
    const sub = baton(home, ['delegate', '--label', 'db', 'ASK me'],
      { ...agentEnv(), BATON_SESSION: 'worker-mcp', BATON_TASK_ID: worker }).split('\n')[0];
    baton(home, ['wait', '--timeout', '20s', sub], { BATON_SESSION: 'worker-mcp' });
    const q = await call(client, 'task_questions');
    assert.equal(q.isError, false, text(q));
    assert.equal(q.structuredContent.questions.length, 1, text(q));
    const asked = q.structuredContent.questions[0];
    assert.equal(asked.task_id, sub);
    assert.deepEqual(asked.chain, [worker, sub]);
    assert.equal(asked.question.items[0].prompt, 'Which database?');
    assert.match(text(q), new RegExp(`${sub} asked \\(${worker} > ${sub}: a worker's sub-worker\\)`));
    assert.match(text(q), new RegExp(`task_answer \\{"task_id": "${sub}"`));
    const bad = await call(client, 'task_questions', { all: true });
    assert.equal(bad.isError, true, text(bad));
    const a = await call(client, 'task_answer', { task_id: sub, answers: ['2'] });
    assert.equal(a.isError, false, text(a));
    assert.deepEqual(a.structuredContent.answered, ['Postgres']);
    const none = await call(client, 'task_questions');
    assert.deepEqual(none.structuredContent.questions, []);
    assert.match(text(none), /no open questions/);
    await call(client, 'task_kill', { task_id: worker });
  });
});

test('delegate: retries start a failed worker again from its brief; the attempts are linked', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const work = join(home, 'work');
    mkdirSync(work);
    const bad = await call(client, 'delegate', { brief: 'x', cwd: work, retries: 101 });
    assert.equal(bad.isError, true, text(bad));
    assert.match(text(bad), /argument 'retries' must be a whole number from 0 to 100/);
    const d = await call(client, 'delegate', { brief: 'FAILONCE fix it', cwd: work, retries: 2, retry_delay_s: 0.1 });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 30 });
    assert.equal(w.structuredContent.tasks[0].status, 'completed', text(w));
    assert.match(w.structuredContent.tasks[0].detail, /attempt 2 of 3/);
    const s = await call(client, 'task_status', { task_id: id });
    assert.equal(s.structuredContent.attempts.length, 1, text(s));
    assert.equal(s.structuredContent.retries, 2);
    const events = await call(client, 'task_events', { task_id: id, limit: 500 });
    const note = events.structuredContent.events.find((e) => e.type === 'note' && e.attempt === 2);
    assert.ok(note, text(events));
    assert.match(text(events), /attempt 2 of 3 \(attempt 1: /);
  });
});

test('delegate: a max_tokens budget stops the worker; task_status shows usage and budget; bad budgets are isError', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    for (const [args, why] of [
      [{ max_turns: 0 }, /argument 'max_turns' must be a whole number >= 1/],
      [{ max_tokens: 2.5 }, /argument 'max_tokens' must be a whole number >= 1/],
      [{ max_cost_usd: 0 }, /argument 'max_cost_usd' must be a number above 0 and at most 1000000000/],
      [{ max_cost_usd: 2e9 }, /argument 'max_cost_usd' must be a number above 0 and at most 1000000000/],
    ]) {
      const bad = await call(client, 'delegate', { brief: 'LOOP', agent: 'claude', cwd: home, ...args });
      assert.equal(bad.isError, true, text(bad));
      assert.match(text(bad), why);
    }
    // The fake Claude Code reports 1000 tokens in and 100 out per model reply.
    const d = await call(client, 'delegate', { brief: 'LOOP on', agent: 'claude', cwd: home, max_tokens: 3300 });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    // batond stopped it, not the director: its end is for the director to
    // collect, as any end is (task_list marks nothing seen).
    let listed;
    for (let i = 0; i < 200; i++) {
      listed = await call(client, 'task_list');
      if (listed.structuredContent.tasks[0].status === 'killed') break;
      await sleep(100);
    }
    assert.equal(listed.structuredContent.tasks[0].status, 'killed', text(listed));
    assert.equal(listed.structuredContent.tasks[0].uncollected, true, text(listed));
    // A row has what `baton ls` has: the agent and model, the start, the
    // time it ran, what it spent.
    const row = listed.structuredContent.tasks[0];
    assert.equal(row.agent, 'claude');
    assert.equal(row.model, null);
    assert.match(row.started_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    assert.ok(row.elapsed_ms >= 0, JSON.stringify(row));
    assert.ok(row.usage.input_tokens >= 3000, JSON.stringify(row));
    assert.match(text(listed), new RegExp(`${id} \\[agent\\] killed — .* · claude, model its default · started \\S+, ran \\S+ · \\d+ turns?, \\d+ tokens`));
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.structuredContent.tasks[0].status, 'killed', text(w));
    const s = await call(client, 'task_status', { task_id: id });
    assert.equal(s.structuredContent.detail, 'budget: max-tokens 3300 reached', text(s));
    assert.deepEqual(s.structuredContent.budget, { max_tokens: 3300 });
    const usage = s.structuredContent.usage;
    assert.ok(usage.input_tokens + usage.output_tokens >= 3300, JSON.stringify(usage));
    assert.equal(usage.input_tokens, 1000 * usage.turns);
    assert.match(text(s), new RegExp(`usage: ${usage.turns} turns, ${usage.input_tokens + usage.output_tokens} tokens`));
    assert.match(text(s), /budget: max-tokens 3300/);
  });
});

test('session_budget: read, set, reached by the session\'s agents, a delegate refused; bad arguments change nothing', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const empty = await call(client, 'session_budget');
    assert.equal(empty.isError, false, text(empty));
    assert.deepEqual(empty.structuredContent.budget, {});
    assert.equal(empty.structuredContent.agent_tasks, 0);
    assert.equal(empty.structuredContent.reached, '');
    assert.match(text(empty), /: no budget\nspent: 0 agent tasks, 0 turns/);
    for (const [args, why] of [
      [{ max_tokens: -1 }, /argument 'max_tokens' must be a whole number from 0 to/],
      [{ max_cost_usd: 'x' }, /argument 'max_cost_usd' must be a number >= 0/],
      [{ clear: true, max_turns: 2 }, /'clear' removes the whole budget/],
      [{ max_token: 5 }, /unknown argument 'max_token'/],
    ]) {
      const bad = await call(client, 'session_budget', args);
      assert.equal(bad.isError, true, text(bad));
      assert.match(text(bad), why);
    }
    assert.deepEqual((await call(client, 'session_budget')).structuredContent.budget, {});
    const set = await call(client, 'session_budget', { max_tokens: 2200, max_cost_usd: 3 });
    assert.equal(set.isError, false, text(set));
    assert.deepEqual(set.structuredContent.budget, { max_tokens: 2200, max_cost_usd: 3 });
    const session = set.structuredContent.session;
    // The fake Claude Code reports 1000 tokens in and 100 out per model reply.
    const d = await call(client, 'delegate', { brief: 'LOOP on', agent: 'claude', cwd: home });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.structuredContent.tasks[0].status, 'killed', text(w));
    const reached = `budget: session ${session}'s max-tokens 2200 reached`;
    const s = await call(client, 'task_status', { task_id: id });
    assert.equal(s.structuredContent.detail, reached, text(s));
    const refused = await call(client, 'delegate', { brief: 'LOOP', agent: 'claude', cwd: home });
    assert.equal(refused.isError, true, text(refused));
    assert.match(text(refused), /budget_spent: session .*'s max-tokens 2200 reached; no new agent task starts in it/);
    const after = await call(client, 'session_budget');
    assert.equal(after.structuredContent.agent_tasks, 1);
    assert.equal(after.structuredContent.reached, reached);
    assert.ok(after.structuredContent.usage.input_tokens >= 2000, text(after));
    // 0 removes one limit; clear the rest, and delegates start again.
    const lifted = await call(client, 'session_budget', { max_tokens: 0 });
    assert.deepEqual(lifted.structuredContent.budget, { max_cost_usd: 3 });
    const cleared = await call(client, 'session_budget', { clear: true });
    assert.deepEqual(cleared.structuredContent.budget, {});
    const again = await call(client, 'delegate', { brief: 'one turn', agent: 'claude', cwd: home });
    assert.equal(again.isError, false, text(again));
  });
});

test('the same refusal reads the same on the CLI and over MCP', T, async () => {
  // One wording for each refusal, whichever front end meets it (issue 37):
  // the CLI's stderr and the tool's isError text carry the same sentence
  // (each front end names its own argument: --timeout, timeout_s).
  await withHome(async (home, track) => {
    const fakes = join(home, 'bin');
    mkdirSync(fakes);
    writeFileSync(join(fakes, 'dsh'), '#!/bin/sh\necho did it\n', { mode: 0o755 });
    const env = { PATH: `${fakes}:/usr/bin:/bin`, BATON_SESSION: 'director' };
    const { client } = track(await connect(home, env));
    const cli = (args, extra = {}) => spawnSync(BATON, args, {
      env: batonEnv(home, { ...env, ...extra }), encoding: 'utf8', timeout: 30_000,
    });
    const foreign = cli(['run', '--', 'sleep', '30'], { BATON_SESSION: 'someone-else' }).stdout.trim();
    const dsh = cli(['delegate', '--agent', 'dsh', 'x']).stdout.split('\n')[0];
    cli(['wait', '--timeout', '20s', dsh]);
    const same = [
      [['status', foreign], 'task_status', { task_id: foreign },
        `task ${foreign} belongs to another session; use the session that started it`],
      [['kill', foreign], 'task_kill', { task_id: foreign },
        `task ${foreign} belongs to another session; use the session that started it`],
      [['delegate', 'x'], 'delegate', { brief: 'x' },
        'agent claude: its CLI `claude` is not installed (not found on PATH); install it, or name another agent (CLI: baton agents lists them)'],
      [['delegate', '--resume', dsh, 'more'], 'delegate', { brief: 'more', resume_from: dsh },
        `${dsh} ran agent dsh, whose CLI baton cannot resume (its profile sets no resume_flag, doc/agents.md); delegate a new brief instead`],
      [['run', '--timeout', '0', '--', 'true'], 'run', { command: 'true', timeout_s: 0 },
        'must be more than 0|must be a number of seconds > 0', '(got 0); leave it out for no limit'],
      [['delegate', '--timeout', '0', 'x'], 'delegate', { brief: 'x', timeout_s: 0 },
        'must be more than 0|must be a number of seconds > 0', "(got 0); leave it out for the profile's default"],
    ];
    for (const [args, tool, toolArgs, ...parts] of same) {
      const onCli = cli(args);
      assert.equal(onCli.status, 1, `${args}: ${onCli.stderr}`);
      const onMcp = await call(client, tool, toolArgs);
      assert.equal(onMcp.isError, true, `${tool}: ${text(onMcp)}`);
      for (const part of parts) {
        if (part.includes('|')) {
          assert.match(onCli.stderr, new RegExp(part), `${args}`);
          assert.match(text(onMcp), new RegExp(part), tool);
          continue;
        }
        assert.ok(onCli.stderr.includes(part), `CLI ${args}:\n${onCli.stderr}\nlacks ${part}`);
        assert.ok(text(onMcp).includes(part), `MCP ${tool}:\n${text(onMcp)}\nlacks ${part}`);
      }
    }
  });
});

test('delegate: a malformed model and a bad resume are isError; resume_from an ended task', T, async () => {
  await withHome(async (home, track) => {
    const { client } = track(await connect(home, agentEnv()));
    const cases = [
      [{ brief: 'x', model: 'bad model' }, /invalid_model/],
      // Over batond's bound on names (doc/protocol.md, "Limits").
      [{ brief: 'x', model: 'anthropic/' + 'm'.repeat(600) }, /'model' is 610 bytes long; at most 256/],
      [{}, /missing argument 'brief'/],
      [{ brief: 'x', checks: 'make test' }, /'checks' must be a list/],
      [{ brief: 'x', timeout_s: 0 }, /'timeout_s' must be a number of seconds > 0 \(got 0\); leave it out for the profile's default/],
      [{ brief: 'x', agent: 'no-such-agent' }, /no-such-agent/],
      [{ brief: 'x', brif: 'y' }, /unknown argument 'brif'/],
      [{ brief: 'x', resume_from: 'agent-99' }, /not_found/],
    ];
    for (const [args, pattern] of cases) {
      const r = await call(client, 'delegate', args);
      assert.equal(r.isError, true, `${JSON.stringify(args)}: ${text(r)}`);
      assert.match(text(r), pattern, JSON.stringify(args));
    }
    for (const [args, pattern] of [
      [{ task_id: 'agent-1' }, /missing argument 'answers', e.g. \{"answers": \["2"\]\}/],
      [{ task_id: 'agent-1', answers: [] }, /'answers' must be a list/],
      [{ task_id: 'agent-1', answers: [2] }, /'answers' must be a list/],
    ]) {
      const r = await call(client, 'task_answer', args);
      assert.equal(r.isError, true, text(r));
      assert.match(text(r), pattern);
    }
    // Nothing was started by the refusals.
    const list = await call(client, 'task_list', {});
    assert.equal(list.structuredContent.tasks.length, 0, text(list));

    const first = await call(client, 'delegate', { brief: 'first brief', label: 'one' });
    assert.equal(first.isError, false, text(first));
    const id = first.structuredContent.task_id;
    // Still running: refused with the reason.
    const early = await call(client, 'delegate', { brief: 'again', resume_from: id });
    if (early.isError) assert.match(text(early), /still|send it a message/);
    const w = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(w.structuredContent.tasks[0].status, 'completed', text(w));

    const again = await call(client, 'delegate', { brief: 'second brief', resume_from: id });
    assert.equal(again.isError, false, text(again));
    const id2 = again.structuredContent.task_id;
    assert.notEqual(id2, id);
    const w2 = await call(client, 'task_output', { task_ids: [id2], wait: true, timeout_s: 20 });
    assert.equal(w2.structuredContent.tasks[0].status, 'completed', text(w2));
    assert.match(w2.structuredContent.tasks[0].output, /turn 1: second brief \(resumed /);
  });
});
