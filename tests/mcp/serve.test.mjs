// End-to-end: `baton serve`, MCP over Streamable HTTP, driven by the
// official SDK clients' HTTP transports: the 1.x SDK in the 2025-11-25 era
// (initialize, a session, a wait whose progress comes over SSE, DELETE) and
// the v2 client (@modelcontextprotocol/client) in the 2026-07-28 era
// (stateless requests, subscriptions/listen with notifications/tasks), and
// raw requests for what no client sends on purpose: a wrong token, a
// foreign Origin or Host, an unknown session, a body over 4 MiB, malformed
// JSON, headers that disagree with the body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { createServer as createTcpServer, connect as tcpConnect } from 'node:net';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { makeHome, stopDaemon, sleep, text, startServe } from './helpers.mjs';

const T = { timeout: Number(process.env.SERVE_TEST_TIMEOUT ?? 60_000) };
const TASKS = 'io.modelcontextprotocol/tasks';
const any = z.object({}).passthrough();

async function withServe(body, env = {}, args = []) {
  const home = makeHome();
  let serve;
  const closers = [];
  try {
    serve = await startServe(home, { env, args });
    await body(serve, home, (c) => { closers.push(c); return c; });
  } finally {
    if (process.env.SERVE_DEBUG) console.log(serve?.stderr());
    for (const c of closers) await c.close().catch(() => {});
    await serve?.stop();
    await stopDaemon(home);
  }
}

// A raw POST with node:http (which, unlike fetch, lets a test set Host).
function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    }, (res) => {
      let data = '';
      res.on('data', (chunk) => { data += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('no answer')));
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

function raw(url, method, headers) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let data = '';
      res.on('data', (chunk) => { data += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end();
  });
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };

const modernMeta = (capabilities = { extensions: { [TASKS]: {} } }) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
});

test('legacy era over HTTP (SDK 1.x): session, tools, a wait with progress over SSE, DELETE', T, async () => {
  await withServe(async (serve, home, track) => {
    const transport = new HttpV1(new URL(serve.url), { requestInit: { headers: serve.auth } });
    const client = new ClientV1({ name: 'baton-http-v1', version: '0.0.1' });
    await client.connect(transport);
    track(client);
    assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
    assert.equal(client.getServerVersion().name, 'baton');
    const { tools } = await client.listTools();
    assert.equal(tools.length, 17);

    let r = await client.callTool({ name: 'run', arguments: { command: 'sleep 3.5; echo done-over-http' } });
    assert.equal(r.isError, false, JSON.stringify(r));
    const id = r.structuredContent.task_id;
    // The session is an owner session of batond, like a stdio server.
    assert.match(r.structuredContent.wait_command, /--session serve-[0-9a-f]{8} wait/);
    const progress = [];
    r = await client.callTool({ name: 'task_output', arguments: { task_id: id, wait: true, timeout_s: 20 } }, undefined,
      { timeout: 30_000, onprogress: (p) => progress.push(p) });
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.match(r.content[0].text, /done-over-http/);
    assert.ok(progress.length >= 1, 'progress came over the SSE stream');
    assert.match(progress[0].message, /shell-\d+/);

    // Another session does not see this one's tasks.
    const other = new ClientV1({ name: 'other', version: '0' });
    await other.connect(new HttpV1(new URL(serve.url), { requestInit: { headers: serve.auth } }));
    track(other);
    const list = await other.callTool({ name: 'task_list', arguments: {} });
    assert.deepEqual(list.structuredContent.tasks, []);

    // DELETE ends the session: its id is then unknown (404).
    const session = transport.sessionId;
    await transport.terminateSession();
    const after = await post(serve.url, { ...serve.auth, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
      { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    assert.equal(after.status, 404);
    assert.match(JSON.parse(after.body).error.message, /Session not found/);
  });
});

// A TCP proxy on 127.0.0.2 with the server's port (a Host baton serve
// allows with --allow-host 127.0.0.2), whose connections a test can cut.
async function cuttableProxy(port) {
  const sockets = new Set();
  const proxy = createTcpServer((client) => {
    const upstream = tcpConnect(Number(port), '127.0.0.1');
    client.pipe(upstream);
    upstream.pipe(client);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => { client.destroy(); upstream.destroy(); };
    for (const s of [client, upstream]) { s.on('error', drop); s.on('close', drop); }
  });
  await new Promise((resolve, reject) => { proxy.once('error', reject); proxy.listen(Number(port), '127.0.0.2', resolve); });
  const cut = () => { for (const s of sockets) s.destroy(); sockets.clear(); };
  return {
    cut,
    // Open (keep-alive) connections would hold close() back: cut them.
    close: () => { const closed = new Promise((resolve) => proxy.close(resolve)); cut(); return closed; },
  };
}

test('legacy era: a stream dropped mid-wait is resumed with Last-Event-ID (SDK 1.x)', T, async () => {
  await withServe(async (serve, home, track) => {
    const proxy = track(await cuttableProxy(new URL(serve.url).port));
    const url = new URL(serve.url);
    url.hostname = '127.0.0.2';
    const transport = new HttpV1(url, {
      requestInit: { headers: serve.auth },
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
    });
    const client = new ClientV1({ name: 'baton-http-resume', version: '0.0.1' });
    await client.connect(transport);
    track(client);
    let r = await client.callTool({ name: 'run', arguments: { command: 'sleep 5; echo resumed-ok' } });
    const id = r.structuredContent.task_id;
    let cut = false;
    // The first progress event (3 s into the wait) carries an event id;
    // then every connection is cut, the SDK resumes the stream with GET and
    // Last-Event-ID, and the answer comes on the resumed stream.
    r = await client.callTool({ name: 'task_output', arguments: { task_id: id, wait: true, timeout_s: 20 } }, undefined, {
      timeout: 30_000,
      onprogress: () => { if (!cut) { cut = true; proxy.cut(); } },
    });
    assert.ok(cut, 'the stream was cut');
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.match(r.content[0].text, /resumed-ok/);
    assert.match(serve.stderr(), /stream \d+ resumed after event 1/);
    // Resuming from an event that no dropped stream has: 404.
    const res = await raw(serve.url, 'GET', { ...serve.auth, Accept: 'text/event-stream', 'Mcp-Session-Id': transport.sessionId, 'Last-Event-ID': '99-1' });
    assert.equal(res.status, 404);
    assert.match(JSON.parse(res.body).error.message, /Cannot resume after event '99-1'/);
  }, {}, ['--allow-host', '127.0.0.2']);
});

// The v2 client over HTTP, pinned to 2026-07-28, declaring the tasks
// extension.
async function modernHttpClient(serve) {
  const transport = new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: { headers: serve.auth } });
  const client = new Client({ name: 'baton-http-v2', version: '0.0.1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { extensions: { [TASKS]: {} } } });
  await client.connect(transport);
  return client;
}

test('modern era over HTTP (v2 client): a question is input_required, answered with tasks/update; tasks/cancel', T, async () => {
  const fakes = new URL('../agents/fakes', import.meta.url).pathname;
  await withServe(async (serve, home, track) => {
    const client = track(await modernHttpClient(serve));
    const seen = [];
    client.setNotificationHandler('notifications/tasks', { params: any }, (params) => { seen.push(params); });
    const startTask = async (id, name, args) => {
      const r = await post(serve.url, { ...serve.auth, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': name },
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: modernMeta() } });
      assert.equal(r.status, 200, r.body);
      const created = JSON.parse(r.body).result;
      assert.equal(created.resultType, 'task', r.body);
      return created.taskId;
    };
    const asker = await startTask(11, 'delegate', { brief: 'please ASK me' });
    const sleeper = await startTask(12, 'run', { command: 'sleep 300' });
    const sub = await client.listen({ taskIds: [asker, sleeper] });
    let deadline = Date.now() + 20_000;
    const asking = () => seen.find((t) => t.taskId === asker && t.status === 'input_required');
    while (!asking() && Date.now() < deadline) await sleep(20);
    assert.ok(asking(), JSON.stringify(seen));
    const [key] = Object.keys(asking().inputRequests);
    assert.match(asking().inputRequests[key].params.message, /Which database\?/);
    const ack = await client.request({ method: 'tasks/update', params: { taskId: asker, inputResponses: { [key]: { action: 'accept', content: { answer_1: 'Postgres' } } } } }, any);
    assert.ok(ack);
    deadline = Date.now() + 20_000;
    const done = () => seen.find((t) => t.taskId === asker && t.status === 'completed');
    while (!done() && Date.now() < deadline) await sleep(20);
    assert.ok(done(), JSON.stringify(seen.map((t) => [t.taskId, t.status])));
    assert.match(done().result.content[0].text, /\[answer: Postgres\]/);
    // tasks/update on a task that is not waiting: a clear error.
    let e;
    try { await client.request({ method: 'tasks/update', params: { taskId: sleeper, inputResponses: { q1: { action: 'accept', content: {} } } } }, any); } catch (err) { e = err; }
    assert.equal(e?.code, -32602);
    assert.match(e.message, /not waiting for input/);
    // tasks/cancel kills it: cancelled, told, and so says the CLI.
    await client.request({ method: 'tasks/cancel', params: { taskId: sleeper } }, any);
    deadline = Date.now() + 20_000;
    while (!seen.some((t) => t.taskId === sleeper && t.status === 'cancelled') && Date.now() < deadline) await sleep(20);
    const got = await client.request({ method: 'tasks/get', params: { taskId: sleeper } }, any);
    assert.equal(got.status, 'cancelled');
    await sub.close();
  }, { PATH: `${fakes}:${process.env.PATH}` });
});

test('modern era over HTTP (v2 client): discover, tools, a task told through subscriptions/listen', T, async () => {
  await withServe(async (serve, home, track) => {
    const client = track(await modernHttpClient(serve));
    assert.equal(client.getProtocolEra(), 'modern');
    assert.ok(client.getServerCapabilities().extensions[TASKS]);
    const { tools } = await client.listTools();
    assert.equal(tools.length, 17);
    const listed = await client.callTool({ name: 'task_list', arguments: {} });
    assert.equal(listed.isError, false);

    // run as a task (raw: the SDK's codecs refuse resultType "task"), in the
    // same session: the serve process's own.
    const started = await post(serve.url, { ...serve.auth, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run' },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run', arguments: { command: 'sleep 0.5; echo modern-http' }, _meta: modernMeta() } });
    assert.equal(started.status, 200, started.body);
    const created = JSON.parse(started.body).result;
    assert.equal(created.resultType, 'task');
    const id = created.taskId;
    const seen = [];
    client.setNotificationHandler('notifications/tasks', { params: any }, (params) => { seen.push(params); });
    const sub = await client.listen({ taskIds: [id] });
    const deadline = Date.now() + 10_000;
    while (!seen.some((t) => t.status === 'completed') && Date.now() < deadline) await sleep(20);
    const done = seen.find((t) => t.status === 'completed');
    assert.ok(done, JSON.stringify(seen));
    assert.match(done.result.content[0].text, /modern-http/);
    const got = await client.request({ method: 'tasks/get', params: { taskId: id } }, any);
    assert.equal(got.status, 'completed');
    await sub.close();
    let e;
    try { await client.request({ method: 'tasks/get', params: { taskId: 'shell-999' } }, any); } catch (err) { e = err; }
    assert.equal(e?.code, -32602);

    // Headers that disagree with the body: 400 HeaderMismatch.
    const mismatch = await post(serve.url, { ...serve.auth, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'task_kill' },
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'run', arguments: { command: 'true' }, _meta: modernMeta() } });
    assert.equal(mismatch.status, 400);
    assert.equal(JSON.parse(mismatch.body).error.code, -32020);
    // An unsupported version: 400 with the versions we speak.
    const old = await post(serve.url, { ...serve.auth, 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' },
      { jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } });
    assert.equal(old.status, 400);
    assert.equal(JSON.parse(old.body).error.code, -32022);
    // A method we do not serve: 404 with -32601.
    const unknown = await post(serve.url, { ...serve.auth, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'nope/x' },
      { jsonrpc: '2.0', id: 10, method: 'nope/x', params: { _meta: modernMeta() } });
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.body).error.code, -32601);
  });
});

test('security and bad input: token, Origin, Host, sessions, size, JSON', T, async () => {
  await withServe(async (serve) => {
    const mcp = { 'MCP-Protocol-Version': '2025-11-25' };
    // No token, a wrong token: 401, and the SDK client cannot connect.
    let r = await post(serve.url, {}, initialize);
    assert.equal(r.status, 401);
    assert.match(r.headers['www-authenticate'], /^Bearer/);
    assert.match(JSON.parse(r.body).error.message, /baton serve --print-token/);
    r = await post(serve.url, { Authorization: 'Bearer 00' + serve.token.slice(2) }, initialize);
    assert.equal(r.status, 401);
    const client = new ClientV1({ name: 'no-token', version: '0' });
    await assert.rejects(client.connect(new HttpV1(new URL(serve.url), { requestInit: { headers: { Authorization: 'Bearer wrong' } } })));
    // A page of another origin (DNS rebinding), a Host that is not ours: 403.
    r = await post(serve.url, { ...serve.auth, Origin: 'http://evil.example' }, initialize);
    assert.equal(r.status, 403);
    assert.match(JSON.parse(r.body).error.message, /Origin 'http:\/\/evil.example'/);
    r = await post(serve.url, { ...serve.auth, Host: `evil.example:${new URL(serve.url).port}` }, initialize);
    assert.equal(r.status, 403);
    assert.match(JSON.parse(r.body).error.message, /Host 'evil.example/);
    // Our own origin passes.
    r = await post(serve.url, { ...serve.auth, Origin: new URL(serve.url).origin }, initialize);
    assert.equal(r.status, 200, r.body);
    const session = r.headers['mcp-session-id'];
    assert.match(session, /^[0-9a-f]{32}$/);
    // Sessions: none given (400), unknown (404), GET without one (405).
    r = await post(serve.url, { ...serve.auth, ...mcp }, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    assert.equal(r.status, 400);
    assert.match(JSON.parse(r.body).error.message, /Mcp-Session-Id header is required/);
    r = await post(serve.url, { ...serve.auth, ...mcp, 'Mcp-Session-Id': 'f'.repeat(32) }, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    assert.equal(r.status, 404);
    r = await raw(serve.url, 'GET', { ...serve.auth, Accept: 'text/event-stream' });
    assert.equal(r.status, 405);
    r = await raw(serve.url, 'PUT', serve.auth);
    assert.equal(r.status, 405);
    assert.match(r.headers.allow, /POST/);
    // Unsupported MCP-Protocol-Version in a session: 400.
    r = await post(serve.url, { ...serve.auth, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '1999-01-01' }, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    assert.equal(r.status, 400);
    // A notification: 202, no body.
    r = await post(serve.url, { ...serve.auth, ...mcp, 'Mcp-Session-Id': session }, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(r.status, 202);
    assert.equal(r.body, '');
    // Malformed JSON: 400 with -32700; a body over 4 MiB: 413.
    r = await post(serve.url, { ...serve.auth, ...mcp, 'Mcp-Session-Id': session }, '{"jsonrpc": "2.0", "id": 4, ');
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.body).error.code, -32700);
    r = await post(serve.url, { ...serve.auth, ...mcp, 'Mcp-Session-Id': session },
      JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'run', arguments: { command: 'x'.repeat(5 << 20) } } }));
    assert.equal(r.status, 413);
    assert.match(JSON.parse(r.body).error.message, /too large/);
    // Any other path is the board's, which takes its login cookie, not the
    // bearer header (doc/board.md): 401; the session still works.
    r = await raw(new URL('/other', serve.url), 'GET', serve.auth);
    assert.equal(r.status, 401);
    assert.match(JSON.parse(r.body).error.message, /log in to the board/);
    r = await post(serve.url, { ...serve.auth, ...mcp, 'Mcp-Session-Id': session }, { jsonrpc: '2.0', id: 6, method: 'tools/list' });
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.body).result.tools.length, 17);
  });
});
