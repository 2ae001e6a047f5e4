// End-to-end: `delegate` with ask: "person" (doc/mcp.md, "Questions for
// the person"). The scripted claude of tests/agents asks "Which database?";
// the question goes to the client's user instead of the director model:
// - legacy era over stdio (SDK 1.x): baton mcp sends elicitation/create,
//   the client's form handler answers;
// - legacy era over HTTP (`baton serve`, SDK 1.x): the same request on the
//   session's stream, the answer POSTed back;
// - 2026-07-28 over stdio (v2 SDK): task_output's wait answers
//   input_required, the SDK fills the form and retries the call.
// The first answer wins: a form answered after the director's answers
// nothing. A client without elicitation is refused and nothing starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BATON, batonEnv, sleep, call, text, connect, startServe, withHome } from './helpers.mjs';

const T = { timeout: 90_000 };
const FAKES = new URL('../agents/fakes', import.meta.url).pathname;
const agentEnv = () => ({ PATH: `${FAKES}:${process.env.PATH}` });


// A form handler: records each elicitation/create and answers with
// `answer(params)` (a promise of the ElicitResult).
function formHandler(answer) {
  const asked = [];
  const handler = async (request) => {
    const params = request.params;
    asked.push(params);
    return answer(params);
  };
  return { asked, handler };
}

const choose = (label) => async () => ({ action: 'accept', content: { answer_1: label } });

// Waits with task_output until `id` ends; returns what it printed and the
// last result.
async function untilEnded(client, id) {
  let output = '';
  for (let i = 0; i < 100; i++) {
    const r = await call(client, 'task_output', { task_ids: [id], wait: true, timeout_s: 20 });
    assert.equal(r.isError, false, text(r));
    const e = r.structuredContent.tasks.find((t) => t.task_id === id);
    output += e?.output ?? '';
    if (e && ['completed', 'failed', 'killed', 'interrupted'].includes(e.status)) return { output, e, r };
    // A question told before comes back at once: give the form its time.
    if (e?.status === 'waiting') await sleep(100);
  }
  assert.fail(`${id} did not end`);
}

function assertTheForm(params, id) {
  assert.equal(params.mode, 'form');
  assert.match(params.message, new RegExp(`${id} asks:`));
  assert.match(params.message, /Which database\?/);
  const field = params.requestedSchema.properties.answer_1;
  assert.deepEqual(field.enum, ['SQLite', 'Postgres']);
}

async function legacyStdio(home, capabilities, handler) {
  const transport = new StdioV1({ command: BATON, args: ['mcp'], env: batonEnv(home, agentEnv()), stderr: 'pipe' });
  const client = new ClientV1({ name: 'ask-person-v1', version: '0.0.1' }, { capabilities });
  if (handler) client.setRequestHandler(ElicitRequestSchema, handler);
  await client.connect(transport);
  return client;
}

test('legacy stdio: the question is a form for the person, and the answer reaches the agent', T, async () => {
  await withHome(async (home, track) => {
    const form = formHandler(choose('Postgres'));
    const client = await legacyStdio(home, { elicitation: { form: {} } }, form.handler);
    track(client);
    const d = await call(client, 'delegate', { brief: 'please ASK me', ask: 'person' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    assert.equal(d.structuredContent.ask, 'person');
    assert.match(text(d), /Its questions go to your user/);
    const { output, e, r } = await untilEnded(client, id);
    assert.equal(e.status, 'completed', text(r));
    assert.match(output, /\[answer: Postgres\]/);
    assert.equal(form.asked.length, 1, 'one form, for the one question');
    assertTheForm(form.asked[0], id);
  });
});

test('legacy stdio: the first answer wins; a form filled in after the director answered answers nothing', T, async () => {
  await withHome(async (home, track) => {
    let release;
    const late = new Promise((resolve) => { release = resolve; });
    const form = formHandler(async () => { await late; return { action: 'accept', content: { answer_1: 'SQLite' } }; });
    const client = await legacyStdio(home, { elicitation: {} }, form.handler);
    track(client);
    const d = await call(client, 'delegate', { brief: 'please ASK me', ask: 'person' });
    const id = d.structuredContent.task_id;
    const deadline = Date.now() + 20_000;
    while (form.asked.length === 0 && Date.now() < deadline) await sleep(20);
    assert.equal(form.asked.length, 1, 'the person was asked');
    // The director answers first (the task_status of a person's task says
    // who is asked).
    const st = await call(client, 'task_status', { task_id: id });
    assert.equal(st.structuredContent.status, 'waiting', text(st));
    const a = await call(client, 'task_answer', { task_id: id, answers: ['2'] });
    assert.equal(a.isError, false, text(a));
    release();
    const { output, e } = await untilEnded(client, id);
    assert.equal(e.status, 'completed');
    assert.match(output, /\[answer: Postgres\]/);
    assert.doesNotMatch(output, /SQLite\]/);
  });
});

test('ask: "person" needs a client that declared elicitation; a bad value is refused; nothing starts', T, async () => {
  await withHome(async (home, track) => {
    const { client } = await connect(home, agentEnv());
    track(client);
    const r = await call(client, 'delegate', { brief: 'please ASK me', ask: 'person' });
    assert.equal(r.isError, true);
    assert.match(text(r), /did not declare elicitation/);
    assert.match(text(r), /nothing was started/);
    const bad = await call(client, 'delegate', { brief: 'please ASK me', ask: 'human' });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /'ask' must be one of "director", "person" \(got "human"\)/);
    const list = await call(client, 'task_list', {});
    assert.deepEqual(list.structuredContent.tasks, [], text(list));
  });
});

test('2026-07-28 stdio: task_output answers input_required, the v2 SDK fills the form and retries', T, async () => {
  await withHome(async (home, track) => {
    const form = formHandler(choose('Postgres'));
    const transport = new StdioClientTransport({ command: BATON, args: ['mcp'], env: batonEnv(home, agentEnv()), stderr: 'pipe' });
    const client = new Client({ name: 'ask-person-v2', version: '0.0.1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', form.handler);
    await client.connect(transport);
    track(client);
    // A shell task that ends while the person is asked is still reported:
    // the retry's wait counts it as news (requestState).
    const shell = await client.callTool({ name: 'run', arguments: { command: 'sleep 0.5; echo shell-done' } });
    const sid = shell.structuredContent.task_id;
    const d = await client.callTool({ name: 'delegate', arguments: { brief: 'please ASK me', ask: 'person' } });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const seen = new Set();
    let output = '';
    for (let i = 0; i < 10 && !(seen.has(`${id}:completed`) && seen.has(`${sid}:completed`)); i++) {
      const r = await client.callTool({ name: 'task_output', arguments: { task_ids: [id, sid], wait: true, timeout_s: 20 } });
      assert.equal(r.isError, false, text(r));
      for (const t of r.structuredContent.tasks) {
        seen.add(`${t.task_id}:${t.status}`);
        output += t.output ?? '';
        assert.equal(t.questions, undefined, 'the director model never sees the question');
      }
    }
    assert.ok(seen.has(`${id}:completed`), [...seen].join(' '));
    assert.ok(seen.has(`${sid}:completed`), [...seen].join(' '));
    assert.match(output, /\[answer: Postgres\]/);
    assert.match(output, /shell-done/);
    assert.equal(form.asked.length, 1);
    assertTheForm(form.asked[0], id);
  });
});

test('legacy HTTP (baton serve): the form goes out on the session stream and the answer is POSTed back', T, async () => {
  await withHome(async (home, track) => {
    const serve = await startServe(home, { env: agentEnv() });
    track({ close: () => serve.stop() });
    const form = formHandler(choose('SQLite'));
    const client = new ClientV1({ name: 'ask-person-http', version: '0.0.1' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, form.handler);
    await client.connect(new HttpV1(new URL(serve.url), { requestInit: { headers: serve.auth } }));
    track(client);
    const d = await call(client, 'delegate', { brief: 'please ASK me', ask: 'person' });
    assert.equal(d.isError, false, text(d));
    const id = d.structuredContent.task_id;
    const { output, e, r } = await untilEnded(client, id);
    assert.equal(e.status, 'completed', text(r));
    assert.match(output, /\[answer: SQLite\]/);
    assert.equal(form.asked.length, 1);
    assertTheForm(form.asked[0], id);
  });
});
