// Self-test of the model-API stand-in (no agent CLI needed): node --test mock_model_api.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mock-api-test-'));
const LOG = path.join(dir, 'requests.jsonl');
let proc;
let base;

before(async () => {
  proc = spawn(process.execPath, [path.join(HERE, 'mock_model_api.mjs'), '--log', LOG], {
    env: { PATH: process.env.PATH, MOCK_MAX_SECONDS: '60' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve) => readline.createInterface({ input: proc.stdout }).once('line', resolve));
  base = `http://127.0.0.1:${JSON.parse(line).port}`;
});
after(() => {
  proc.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

async function post(p, body) {
  const r = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
}
const sseData = (text) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));

test('anthropic: SCEN_TOOL streams a Bash tool_use, then the final text after its result', async () => {
  const tools = [{ name: 'Bash' }, { name: 'AskUserQuestion' }];
  const user = { role: 'user', content: [{ type: 'text', text: 'SCEN_TOOL go' }] };
  const r1 = await post('/v1/messages?beta=true', { model: 'm', stream: true, tools, messages: [user] });
  assert.equal(r1.status, 200);
  const ev = sseData(r1.text);
  const start = ev.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use');
  assert.equal(start.content_block.name, 'Bash');
  const json = ev.find((e) => e.delta?.type === 'input_json_delta').delta.partial_json;
  assert.equal(JSON.parse(json).command, 'echo hello-from-tool');
  assert.equal(ev.find((e) => e.type === 'message_delta').delta.stop_reason, 'tool_use');
  const id = start.content_block.id;
  const messages = [
    user,
    { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'hello-from-tool\n<system-reminder>STEER: x</system-reminder>' }] },
    { role: 'user', content: [{ type: 'text', text: 'a reminder added by the CLI' }] },
  ];
  const r2 = await post('/v1/messages', { model: 'm', stream: false, tools, messages });
  const msg = JSON.parse(r2.text);
  assert.equal(msg.content[0].text, 'mock final answer (steer: STEER: x)');
  assert.equal(msg.stop_reason, 'end_turn');
});

test('anthropic: a request without the tool (a side request) gets text', async () => {
  const r = await post('/v1/messages', { model: 'm', messages: [{ role: 'user', content: 'SCEN_ASK title this' }] });
  assert.match(JSON.parse(r.text).content[0].text, /not offered/);
});

test('openai responses: SCEN_SLOW calls exec_command with sleep, SCEN_FAIL is a 400', async () => {
  const tools = [{ type: 'function', name: 'exec_command' }];
  const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'SCEN_SLOW wait' }] }];
  const r = await post('/v1/responses', { model: 'gpt', stream: true, tools, input });
  const ev = sseData(r.text);
  const done = ev.find((e) => e.type === 'response.output_item.done');
  assert.equal(done.item.type, 'function_call');
  assert.match(JSON.parse(done.item.arguments).cmd, /^sleep \d+/);
  assert.equal(ev.at(-1).type, 'response.completed');
  const f = await post('/v1/responses', { stream: true, input: 'SCEN_FAIL now' });
  assert.equal(f.status, 400);
});

test('openai responses: resumed history is counted', async () => {
  const msg = (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  const r = await post('/v1/responses', { stream: false, input: [msg('SCEN_TEXT one'), msg('SCEN_TEXT two')] });
  assert.equal(JSON.parse(r.text).output[0].content[0].text, 'mock final answer [history: 1 earlier prompts]');
});

test('gemini: streamGenerateContent calls run_shell_command; JSON side requests get schema-shaped JSON', async () => {
  const tools = [{ functionDeclarations: [{ name: 'run_shell_command' }] }];
  const contents = [{ role: 'user', parts: [{ text: 'SCEN_TOOL go' }] }];
  const r = await post('/v1beta/models/g:streamGenerateContent?alt=sse', { contents, tools });
  const calls = sseData(r.text).flatMap((c) => c.candidates[0].content.parts).filter((p) => p.functionCall);
  assert.equal(calls[0].functionCall.name, 'run_shell_command');
  const j = await post('/v1beta/models/g:generateContent', {
    contents,
    generationConfig: {
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'OBJECT', properties: { next_speaker: { type: 'STRING', enum: ['model', 'user'] }, n: { type: 'INTEGER' } } },
    },
  });
  assert.deepEqual(JSON.parse(JSON.parse(j.text).candidates[0].content.parts[0].text), { next_speaker: 'user', n: 1 });
});

test('every request is logged', async () => {
  const lines = fs.readFileSync(LOG, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.length >= 7);
  assert.ok(lines.every((l) => l.seq && l.method && l.path));
  assert.equal(lines[0].body.messages[0].content[0].text, 'SCEN_TOOL go');
});

test('SCEN_BATON: a tool search first where the CLI defers MCP tools, then baton run, then its answer', async () => {
  const user = { role: 'user', content: [{ type: 'text', text: 'SCEN_BATON go' }] };
  // Claude Code: ToolSearch while mcp__baton__run is deferred, the call once it is loaded.
  let msg = JSON.parse((await post('/v1/messages', { model: 'm', tools: [{ name: 'ToolSearch' }], messages: [user] })).text);
  assert.deepEqual(msg.content[1].input, { query: 'select:mcp__baton__run', max_results: 5 });
  msg = JSON.parse((await post('/v1/messages', { model: 'm', tools: [{ name: 'mcp__baton__run' }], messages: [user] })).text);
  assert.equal(msg.content[1].name, 'mcp__baton__run');
  assert.deepEqual(msg.content[1].input, { command: 'echo from-baton-mcp' });
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: '{"task_id":"shell-1"}' }] };
  msg = JSON.parse((await post('/v1/messages', { model: 'm', tools: [{ name: 'mcp__baton__run' }], messages: [user, result] })).text);
  assert.equal(msg.content[0].text, 'mock final answer: {"task_id":"shell-1"}');
  // Codex: tool_search, then the tool of the namespace it returned.
  const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'SCEN_BATON go' }] }];
  let r = JSON.parse((await post('/v1/responses', { model: 'm', tools: [{ type: 'tool_search' }], input })).text);
  assert.equal(r.output[0].type, 'tool_search_call');
  input.push(r.output[0], {
    type: 'tool_search_output',
    call_id: r.output[0].call_id,
    tools: [{ type: 'namespace', name: 'mcp__baton', tools: [{ type: 'function', name: 'run' }] }],
  });
  r = JSON.parse((await post('/v1/responses', { model: 'm', tools: [{ type: 'tool_search' }], input })).text);
  assert.equal(r.output[0].type, 'function_call');
  assert.equal(r.output[0].namespace, 'mcp__baton');
  assert.equal(r.output[0].name, 'run');
  assert.deepEqual(JSON.parse(r.output[0].arguments), { command: 'echo from-baton-mcp' });
});
