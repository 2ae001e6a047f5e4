// End-to-end: the 2026-07-28 era of `baton mcp` over stdio, beside the
// legacy one: the official v2 SDK client (@modelcontextprotocol/client,
// pinned to 2026-07-28) for discovery, tools, subscriptions and the tasks
// methods, and a raw line client where the SDK's codecs refuse the traffic
// (it rejects a `resultType: "task"` answer to tools/call: the ext-tasks
// package leaves that to a host-owned raw dispatch). Both share one baton
// session (BATON_SESSION), so both see the same tasks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';
import { BATON, batonEnv, baton, sleep, withHome } from './helpers.mjs';

const T = { timeout: 60_000 };
const TASKS = 'io.modelcontextprotocol/tasks';
const FAKES = new URL('../agents/fakes', import.meta.url).pathname;
const any = z.object({}).passthrough();

const meta = (capabilities = { extensions: { [TASKS]: {} } }) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
});

// A raw client: one `baton mcp`, lines in and out; request() resolves with
// the whole response, notifications are kept in `notes`.
function rawClient(home, env) {
  const child = spawn(BATON, ['mcp'], { env: batonEnv(home, env), stdio: ['pipe', 'pipe', 'ignore'] });
  const pending = new Map();
  const notes = [];
  let next = 1000;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    } else {
      notes.push(m);
    }
  });
  return {
    notes,
    request(method, params) {
      const id = next++;
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return new Promise((resolve, reject) => {
        pending.set(id, resolve);
        setTimeout(() => reject(new Error(`no answer to ${method}`)), 20_000);
      });
    },
    send(method, params) {
      const id = next++;
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return id;
    },
    close() {
      const exit = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      return exit;
    },
  };
}

// The v2 SDK client in the modern era, declaring the tasks extension.
async function modernClient(home, env, capabilities = { extensions: { [TASKS]: {} } }) {
  const transport = new StdioClientTransport({ command: BATON, args: ['mcp'], env: batonEnv(home, env), stderr: 'pipe' });
  const client = new Client({ name: 'baton-e2e-v2', version: '0.0.1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities });
  await client.connect(transport);
  return client;
}


async function rpcError(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a JSON-RPC error');
}

test('modern era: discover, per-request _meta, resultType, tools; the legacy era beside it', T, async () => {
  await withHome(async (home, track) => {
    const client = track(await modernClient(home, { BATON_SESSION: 'm1' }));
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getServerVersion().name, 'baton');
    assert.match(client.getInstructions(), /never busy-poll/);
    assert.ok(client.getServerCapabilities().extensions[TASKS]);
    const { tools } = await client.listTools();
    assert.equal(tools.length, 17);
    const r = await client.callTool({ name: 'task_list', arguments: {} });
    assert.equal(r.isError, false);
    assert.deepEqual(r.structuredContent.tasks, []);

    const raw = track(rawClient(home, { BATON_SESSION: 'm1' }));
    let m = await raw.request('tools/list', { _meta: meta() });
    assert.equal(m.result.resultType, 'complete');
    assert.equal(m.result.cacheScope, 'public');
    assert.ok(m.result.ttlMs > 0);
    assert.equal(m.result._meta['io.modelcontextprotocol/serverInfo'].name, 'baton');
    m = await raw.request('tools/call', { name: 'task_list', arguments: {}, _meta: meta({}) });
    assert.equal(m.result.resultType, 'complete');
    assert.equal(m.result.isError, false);
    // A version we do not serve per request, and missing capabilities.
    m = await raw.request('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } });
    assert.equal(m.error.code, -32022);
    assert.deepEqual(m.error.data.supported, ['2026-07-28']);
    m = await raw.request('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } });
    assert.equal(m.error.code, -32602);
    assert.match(m.error.message, /clientCapabilities/);
    // The legacy era in the same process: no resultType.
    m = await raw.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '0' } });
    assert.equal(m.result.protocolVersion, '2025-11-25');
    m = await raw.request('tools/call', { name: 'task_list', arguments: {} });
    assert.equal(m.result.resultType, undefined);
    assert.equal(m.result._meta, undefined);
  });
});

test('tasks extension: run as a task, notifications/tasks, tasks/get, cancel, the owner fence', T, async () => {
  await withHome(async (home, track) => {
    const client = track(await modernClient(home, { BATON_SESSION: 't1' }));
    const raw = track(rawClient(home, { BATON_SESSION: 't1' }));
    const seen = [];
    client.setNotificationHandler('notifications/tasks', { params: any }, (params) => { seen.push(params); });

    // run, answered as a CreateTaskResult whose id is baton's.
    let m = await raw.request('tools/call', { name: 'run', arguments: { command: 'echo one; sleep 0.6; echo two' }, _meta: meta() });
    assert.equal(m.result.resultType, 'task', JSON.stringify(m));
    assert.equal(m.result.status, 'working');
    assert.match(m.result.taskId, /^shell-\d+$/);
    assert.equal(m.result.ttlMs, null);
    const id = m.result.taskId;
    // Durable before the reply: tasks/get knows it at once.
    let got = await client.request({ method: 'tasks/get', params: { taskId: id } }, any);
    assert.equal(got.taskId, id);

    // The end is pushed on the subscription (no polling by the client).
    const sub = await client.listen({ taskIds: [id, 'shell-999'] });
    // (The SDK keeps only the core fields of the acknowledged filter; the
    // raw client sees the task ids honored.)
    raw.send('subscriptions/listen', { notifications: { taskIds: [id, 'shell-999'] }, _meta: meta() });
    while (!raw.notes.some((n) => n.method === 'notifications/subscriptions/acknowledged')) await sleep(10);
    const acked = raw.notes.find((n) => n.method === 'notifications/subscriptions/acknowledged');
    assert.deepEqual(acked.params.notifications, { taskIds: [id] });
    assert.equal(typeof acked.params._meta['io.modelcontextprotocol/subscriptionId'], 'number');
    const deadline = Date.now() + 10_000;
    while (!seen.some((t) => t.status === 'completed') && Date.now() < deadline) await sleep(20);
    const done = seen.find((t) => t.status === 'completed');
    assert.ok(done, JSON.stringify(seen));
    assert.equal(done.taskId, id);
    assert.equal(done.result.isError, false);
    assert.match(done.result.content[0].text, /one\ntwo/);
    got = await client.request({ method: 'tasks/get', params: { taskId: id } }, any);
    assert.equal(got.status, 'completed');
    assert.equal(got.result.structuredContent.exit_code, 0);
    await sub.close();

    // A failing command: completed, with isError and the output tail.
    m = await raw.request('tools/call', { name: 'run', arguments: { command: 'echo broken >&2; exit 3' }, _meta: meta() });
    const failing = m.result.taskId;
    for (let i = 0; i < 100 && got.taskId !== failing || got.status === 'working'; i++) {
      got = await client.request({ method: 'tasks/get', params: { taskId: failing } }, any);
      if (got.status === 'working') await sleep(50);
    }
    assert.equal(got.status, 'completed');
    assert.equal(got.result.isError, true);
    assert.match(got.result.content[0].text, /exit code: 3/);
    assert.match(got.result.content[0].text, /broken/);

    // tasks/cancel kills: cancelled.
    m = await raw.request('tools/call', { name: 'run', arguments: { command: 'sleep 30' }, _meta: meta() });
    const slow = m.result.taskId;
    const ack = await raw.request('tasks/cancel', { taskId: slow, _meta: meta() });
    assert.deepEqual(Object.keys(ack.result).sort(), ['_meta', 'resultType']);
    assert.equal(ack.result.resultType, 'complete');
    for (let i = 0; i < 100; i++) {
      got = await client.request({ method: 'tasks/get', params: { taskId: slow } }, any);
      if (got.status !== 'working') break;
      await sleep(50);
    }
    assert.equal(got.status, 'cancelled');

    // Bad input: unknown id, not waiting, undeclared extension, another
    // session's task (the owner fence).
    let e = await rpcError(client.request({ method: 'tasks/get', params: { taskId: 'shell-999' } }, any));
    assert.equal(e.code, -32602);
    e = await rpcError(client.request({ method: 'tasks/update', params: { taskId: id, inputResponses: {} } }, any));
    assert.equal(e.code, -32602);
    assert.match(e.message, /not waiting/);
    m = await raw.request('tasks/get', { taskId: id, _meta: meta({}) });
    assert.equal(m.error.code, -32021);
    assert.deepEqual(m.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } });
    m = await raw.request('subscriptions/listen', { notifications: { taskIds: [id] }, _meta: meta({}) });
    assert.equal(m.error.code, -32021);
    const other = track(rawClient(home, { BATON_SESSION: 'someone-else' }));
    m = await other.request('tasks/get', { taskId: id, _meta: meta() });
    assert.equal(m.error.code, -32602);
    // Without the extension, run answers as before (a plain result).
    m = await raw.request('tools/call', { name: 'run', arguments: { command: 'true' }, _meta: meta({}) });
    assert.equal(m.result.resultType, 'complete');
    assert.match(m.result.structuredContent.task_id, /^shell-/);
  });
});

test('tasks extension: an agent question is input_required, answered with tasks/update', T, async () => {
  await withHome(async (home, track) => {
    const env = { BATON_SESSION: 'q1', PATH: `${FAKES}:${process.env.PATH}` };
    const client = track(await modernClient(home, env));
    const raw = track(rawClient(home, env));
    const seen = [];
    client.setNotificationHandler('notifications/tasks', { params: any }, (params) => { seen.push(params); });
    const m = await raw.request('tools/call', { name: 'delegate', arguments: { brief: 'please ASK me' }, _meta: meta() });
    assert.equal(m.result.resultType, 'task', JSON.stringify(m));
    const id = m.result.taskId;
    const sub = await client.listen({ taskIds: [id] });
    let deadline = Date.now() + 20_000;
    while (!seen.some((t) => t.status === 'input_required') && Date.now() < deadline) await sleep(20);
    const asking = seen.find((t) => t.status === 'input_required');
    assert.ok(asking, JSON.stringify(seen));
    const [key] = Object.keys(asking.inputRequests);
    assert.match(key, /^q\d+$/);
    const request = asking.inputRequests[key];
    assert.equal(request.method, 'elicitation/create');
    assert.equal(request.params.mode, 'form');
    assert.match(request.params.message, /Which database\?/);
    assert.deepEqual(request.params.requestedSchema.properties.answer_1.enum, ['SQLite', 'Postgres']);
    const got = await client.request({ method: 'tasks/get', params: { taskId: id } }, any);
    assert.deepEqual(got.inputRequests, asking.inputRequests);

    // A label that is no option: a clear error, nothing answered.
    let e = await rpcError(client.request({ method: 'tasks/update', params: { taskId: id, inputResponses: { [key]: { action: 'accept', content: { answer_1: 'Mongo' } } } } }, any));
    assert.equal(e.code, -32602);
    assert.match(e.message, /Mongo.*not one of the options \(SQLite, Postgres\)/);
    const ack = await client.request({ method: 'tasks/update', params: { taskId: id, inputResponses: { [key]: { action: 'accept', content: { answer_1: 'Postgres' } } } } }, any);
    assert.ok(ack);
    // Back to working (told at once), then its end.
    deadline = Date.now() + 20_000;
    while (!seen.some((t) => t.status === 'completed') && Date.now() < deadline) await sleep(20);
    const after = seen.slice(seen.indexOf(asking) + 1).map((t) => t.status);
    assert.equal(after[0], 'working', JSON.stringify(after));
    assert.ok(after.includes('completed'), JSON.stringify(after));
    // The first answer won: a second one finds no question.
    e = await rpcError(client.request({ method: 'tasks/update', params: { taskId: id, inputResponses: { [key]: { action: 'accept', content: { answer_1: 'SQLite' } } } } }, any));
    assert.equal(e.code, -32602);
    await sub.close();
  });
});

test('tasks extension: a task survives a batond restart, and so does its subscription', T, async () => {
  await withHome(async (home, track) => {
    const client = track(await modernClient(home, { BATON_SESSION: 'r1' }));
    const raw = track(rawClient(home, { BATON_SESSION: 'r1' }));
    const seen = [];
    client.setNotificationHandler('notifications/tasks', { params: any }, (params) => { seen.push(params); });
    const m = await raw.request('tools/call', { name: 'run', arguments: { command: 'sleep 1.5; echo survived' }, _meta: meta() });
    const id = m.result.taskId;
    await client.listen({ taskIds: [id] });
    // batond stops (its tasks run on under the supervisor) and comes back
    // with the next request.
    baton(home, ['daemon', 'stop']);
    let got = await client.request({ method: 'tasks/get', params: { taskId: id } }, any);
    assert.equal(got.taskId, id);
    const deadline = Date.now() + 15_000;
    while (!seen.some((t) => t.status === 'completed') && Date.now() < deadline) await sleep(20);
    const done = seen.find((t) => t.status === 'completed');
    assert.ok(done, JSON.stringify(seen));
    assert.match(done.result.content[0].text, /survived/);
    got = await client.request({ method: 'tasks/get', params: { taskId: id } }, any);
    assert.equal(got.status, 'completed');
  });
});
