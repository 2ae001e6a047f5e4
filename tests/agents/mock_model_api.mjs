#!/usr/bin/env node
// A loopback stand-in for the model APIs of Claude Code (Anthropic Messages), Codex (OpenAI
// Responses) and Gemini CLI (Gemini generateContent / streamGenerateContent).
//
// Usage: node mock_model_api.mjs [--log FILE] [--port N]
//   Listens on 127.0.0.1 (port 0 = ephemeral unless --port/MOCK_PORT) and prints {"port":N}
//   as its first stdout line. Every request is appended to the JSONL log (--log or MOCK_LOG).
//   Stops on SIGTERM/SIGINT, on stdin EOF when MOCK_EXIT_ON_STDIN_EOF=1, and after
//   MOCK_MAX_SECONDS (default 1800) in any case.
//
// The model's turns are canned. The scenario is the keyword in the most recent *user*
// message that contains one (so steer messages, reminders and tool results do not change it);
// the step inside the scenario is the number of tool results that came after that message.
//   SCEN_TEXT   text "mock final answer"
//   SCEN_TOOL   shell tool `echo hello-from-tool`, then "mock final answer"
//   SCEN_WRITE  a change that needs approval: claude Bash `printf 'hi\n' > out.txt`, codex
//               apply_patch adding out.txt, gemini write_file out.txt; then "mock final answer"
//   SCEN_ASK    claude AskUserQuestion / codex request_user_input / gemini ask_user with two
//               options (SQLite, Postgres), then "mock final answer: <what the tool returned>"
//   SCEN_SLOW   shell tool `sleep $MOCK_SLOW_SECONDS` (default 4), then "mock final answer"
//   SCEN_FAIL   an HTTP 400 invalid_request error (not retried by the CLIs)
//   SCEN_BATON  the `run` tool of an MCP server named baton (the CLI as baton's MCP client:
//               claude mcp__baton__run, codex's name for it) with {"command": "echo
//               from-baton-mcp"}, then "mock final answer: <what the tool returned>"
// Any final answer gets " (steer: <text>)" appended when a message containing "STEER" reached
// the model after the scenario prompt, and " [history: N earlier prompts]" when the
// conversation holds N>0 earlier scenario prompts (a resumed session).
// Without a keyword (side requests such as titles, or MOCK_DEFAULT_SCENARIO unset) the answer
// is plain text "ok". Requests without the needed tool in their tool list get text too.
import http from 'node:http';
import fs from 'node:fs';

const args = process.argv.slice(2);
function arg(name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
const LOG = arg('--log') ?? process.env.MOCK_LOG ?? '';
const PORT = Number(arg('--port') ?? process.env.MOCK_PORT ?? 0);
const SLOW = Number(process.env.MOCK_SLOW_SECONDS ?? 4);
const DEFAULT_SCENARIO = process.env.MOCK_DEFAULT_SCENARIO ?? '';
const MAX_SECONDS = Number(process.env.MOCK_MAX_SECONDS ?? 1800);
const SCENARIOS = ['SCEN_TEXT', 'SCEN_TOOL', 'SCEN_WRITE', 'SCEN_ASK', 'SCEN_SLOW', 'SCEN_FAIL', 'SCEN_BATON'];
// The MCP tool SCEN_BATON calls, by the names the CLIs give a server's tools.
const BATON_RUN = /^(mcp__)?baton(__|\.|_)run$/;
const BATON_COMMAND = 'echo from-baton-mcp';
const FINAL = 'mock final answer';
const ASK = {
  question: 'Which database should I use?',
  header: 'Database',
  options: [
    { label: 'SQLite', description: 'embedded' },
    { label: 'Postgres', description: 'server' },
  ],
};

let seq = 0;
function log(entry) {
  if (!LOG) return;
  fs.appendFileSync(LOG, JSON.stringify({ seq: ++seq, ts: new Date().toISOString(), ...entry }) + '\n');
}

// ---------------------------------------------------------------------------------------------
// Conversation analysis, vendor-neutral. `items` is a list of
//   {kind:'user', text} | {kind:'result', text} | {kind:'call'}
// in conversation order.
function findScenario(text) {
  return SCENARIOS.find((s) => text.includes(s)) ?? '';
}

function plan(items) {
  let at = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i].kind === 'user' && findScenario(items[i].text)) {
      at = i;
      break;
    }
  }
  const scenario = at >= 0 ? findScenario(items[at].text) : DEFAULT_SCENARIO;
  const after = items.slice(at + 1);
  const step = after.filter((x) => x.kind === 'result').length;
  const earlier = items.slice(0, Math.max(at, 0)).filter((x) => x.kind === 'user' && findScenario(x.text)).length;
  let suffix = '';
  const steer = after.map((x) => x.text ?? '').join('\n').match(/STEER[^\n<"\\]*/);
  if (steer) suffix += ` (steer: ${steer[0].trim()})`;
  if (earlier > 0) suffix += ` [history: ${earlier} earlier prompts]`;
  const lastResult = [...after].reverse().find((x) => x.kind === 'result');
  return { scenario, step, suffix, lastResultText: lastResult?.text ?? '' };
}

// What the model does next: {type:'text', text} | {type:'shell', command, preface}
// | {type:'write'} | {type:'ask'} | {type:'fail'}
function decide(p) {
  const final = { type: 'text', text: FINAL + p.suffix };
  switch (p.scenario) {
    case 'SCEN_TEXT':
      return final;
    case 'SCEN_TOOL':
      return p.step === 0 ? { type: 'shell', command: 'echo hello-from-tool', preface: 'I will run a command.' } : final;
    case 'SCEN_SLOW':
      return p.step === 0 ? { type: 'shell', command: `sleep ${SLOW}`, preface: 'This will take a moment.' } : final;
    case 'SCEN_WRITE':
      return p.step === 0 ? { type: 'write', preface: 'I will write out.txt.' } : final;
    case 'SCEN_ASK':
      if (p.step === 0) return { type: 'ask', preface: 'I need to ask you something.' };
      return { type: 'text', text: `${FINAL}: ${p.lastResultText.slice(0, 300)}${p.suffix}` };
    case 'SCEN_FAIL':
      return { type: 'fail' };
    case 'SCEN_BATON':
      // Until baton's run answered (a tool search may come first), at most 3 steps.
      if (!p.lastResultText.includes('task_id') && p.step < 3)
        return { type: 'baton', preface: 'I will run it through baton.' };
      return { type: 'text', text: `${FINAL}: ${p.lastResultText.slice(0, 300)}${p.suffix}` };
    default:
      return { type: 'text', text: 'ok' };
  }
}

function textOf(content) {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('\n');
  if (typeof content === 'object') {
    if (typeof content.text === 'string') return content.text;
    if (content.content !== undefined) return textOf(content.content);
    if (typeof content.output === 'string') return content.output;
    return JSON.stringify(content);
  }
  return String(content);
}

// ---------------------------------------------------------------------------------------------
// HTTP plumbing
function send(res, status, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function sse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

function sseEvent(res, event, data) {
  res.write((event ? `event: ${event}\n` : '') + `data: ${JSON.stringify(data)}\n\n`);
}

let idCounter = 0;
function id(prefix) {
  idCounter++;
  return `${prefix}${Date.now().toString(16)}${idCounter.toString(16).padStart(4, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages
function anthropicItems(body) {
  const items = [];
  for (const m of body.messages ?? []) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content ?? [];
    for (const b of blocks) {
      if (b.type === 'tool_result') items.push({ kind: 'result', text: textOf(b.content) });
      else if (b.type === 'tool_use') items.push({ kind: 'call' });
      else if (b.type === 'text' && m.role === 'user') items.push({ kind: 'user', text: b.text });
      else if (b.type === 'text') items.push({ kind: 'assistant', text: b.text });
    }
  }
  return items;
}

function anthropicContent(body, d) {
  const tools = new Set((body.tools ?? []).map((t) => t.name));
  const text = (t) => ({ type: 'text', text: t });
  const tool = (name, input) => ({ type: 'tool_use', id: id('toolu_01MOCK'), name, input });
  if (d.type === 'shell' && tools.has('Bash'))
    return [text(d.preface), tool('Bash', { command: d.command, description: 'Run the scripted command' })];
  if (d.type === 'write' && tools.has('Bash'))
    return [text(d.preface), tool('Bash', { command: "printf 'hi\\n' > out.txt", description: 'Write out.txt' })];
  if (d.type === 'ask' && tools.has('AskUserQuestion'))
    return [text(d.preface), tool('AskUserQuestion', { questions: [{ ...ASK, multiSelect: false }] })];
  const batonRun = [...tools].find((name) => BATON_RUN.test(name));
  if (d.type === 'baton' && batonRun) return [text(d.preface), tool(batonRun, { command: BATON_COMMAND })];
  // Claude Code defers MCP tools behind ToolSearch: load the tool first.
  if (d.type === 'baton' && tools.has('ToolSearch'))
    return [text('Loading the baton tool.'), tool('ToolSearch', { query: 'select:mcp__baton__run', max_results: 5 })];
  if (d.type === 'ask' || d.type === 'shell' || d.type === 'write' || d.type === 'baton')
    return [text(`mock: the tool for ${d.type} is not offered (${[...tools].slice(0, 12).join(',')})`)];
  return [text(d.text)];
}

function anthropicMessages(req, res, body) {
  const d = decide(plan(anthropicItems(body)));
  if (d.type === 'fail')
    return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'mock upstream failure' } });
  const content = anthropicContent(body, d);
  const stop = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const msg = {
    id: id('msg_01MOCK'),
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'claude-mock',
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: 120, output_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  if (!body.stream) return send(res, 200, msg, { 'request-id': id('req_mock') });
  sse(res);
  sseEvent(res, 'message_start', {
    type: 'message_start',
    message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } },
  });
  content.forEach((b, index) => {
    if (b.type === 'text') {
      sseEvent(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sseEvent(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      sseEvent(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
      });
      sseEvent(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      });
    }
    sseEvent(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sseEvent(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 15 },
  });
  sseEvent(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses
function openaiItems(body) {
  const items = [];
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input ?? [];
  for (const it of input) {
    const type = it.type ?? (it.role ? 'message' : '');
    if (type === 'message' && it.role === 'user') items.push({ kind: 'user', text: textOf(it.content) });
    else if (type === 'message') items.push({ kind: 'assistant', text: textOf(it.content) });
    else if (type.endsWith('_call_output')) items.push({ kind: 'result', text: textOf(it.output) });
    else if (type.endsWith('_call')) items.push({ kind: 'call' });
  }
  return items;
}

function openaiOutput(body, d) {
  const tools = new Map((body.tools ?? []).map((t) => [t.name ?? t.type, t]));
  const message = (t) => ({
    type: 'message',
    id: id('msg_mock'),
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: t, annotations: [] }],
  });
  const call = (name, args) => ({
    type: 'function_call',
    id: id('fc_mock'),
    call_id: id('call_mock'),
    name,
    arguments: JSON.stringify(args),
    status: 'completed',
  });
  const shell = (command) => {
    if (tools.has('exec_command')) return call('exec_command', { cmd: command, yield_time_ms: 10000 });
    if (tools.has('shell_command')) return call('shell_command', { command });
    if (tools.has('shell')) return call('shell', { command: ['bash', '-lc', command] });
    return null;
  };
  if (d.type === 'shell') {
    const c = shell(d.command);
    if (c) return [c];
  }
  if (d.type === 'write') {
    const patch = '*** Begin Patch\n*** Add File: out.txt\n+hi\n*** End Patch\n';
    const t = tools.get('apply_patch');
    if (t && t.type === 'custom')
      return [{ type: 'custom_tool_call', id: id('ctc_mock'), call_id: id('call_mock'), name: 'apply_patch', input: patch, status: 'completed' }];
    if (t) return [call('apply_patch', { input: patch })];
  }
  if (d.type === 'ask' && tools.has('request_user_input'))
    return [
      call('request_user_input', {
        questions: [{ id: 'db', header: ASK.header, question: ASK.question, options: ASK.options }],
      }),
    ];
  const batonRun = [...tools.keys()].find((name) => BATON_RUN.test(name));
  if (d.type === 'baton' && batonRun) return [call(batonRun, { command: BATON_COMMAND })];
  // Codex defers MCP tools behind its tool_search: search, then call the namespaced tool
  // that the search returned.
  const found = (body.input ?? []).filter((it) => it.type === 'tool_search_output').flatMap((it) => it.tools ?? []);
  const namespace = found.find((t) => t.type === 'namespace' && /baton/.test(t.name) && (t.tools ?? []).some((f) => f.name === 'run'));
  if (d.type === 'baton' && namespace)
    return [{ ...call('run', { command: BATON_COMMAND }), namespace: namespace.name }];
  if (d.type === 'baton' && tools.has('tool_search'))
    return [{ type: 'tool_search_call', id: id('ts_mock'), call_id: id('call_mock'), execution: 'client', status: 'completed', arguments: { query: 'baton run', limit: 8 } }];
  if (d.type === 'ask' || d.type === 'shell' || d.type === 'write' || d.type === 'baton')
    return [message(`mock: the tool for ${d.type} is not offered (${[...tools.keys()].join(',')})`)];
  return [message(d.text)];
}

function openaiResponses(req, res, body) {
  const d = decide(plan(openaiItems(body)));
  if (d.type === 'fail')
    return send(res, 400, { error: { type: 'invalid_request_error', code: 'mock_failure', message: 'mock upstream failure' } });
  const output = openaiOutput(body, d);
  const usage = {
    input_tokens: 400,
    input_tokens_details: { cached_tokens: 100 },
    output_tokens: 40,
    output_tokens_details: { reasoning_tokens: 10 },
    total_tokens: 440,
  };
  const response = {
    id: id('resp_mock'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? 'gpt-mock',
    status: 'completed',
    output,
    usage,
  };
  if (!body.stream) return send(res, 200, response);
  sse(res);
  let n = 0;
  const ev = (type, data) => sseEvent(res, type, { type, sequence_number: n++, ...data });
  ev('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const t = item.content[0].text;
      const half = Math.ceil(t.length / 2);
      for (const delta of [t.slice(0, half), t.slice(half)])
        ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta });
      ev('response.output_item.done', { output_index, item });
    } else {
      ev('response.output_item.added', { output_index, item });
      ev('response.output_item.done', { output_index, item });
    }
  });
  ev('response.completed', { response });
  res.end();
}

// ---------------------------------------------------------------------------------------------
// Gemini generateContent / streamGenerateContent
function geminiItems(body) {
  const items = [];
  for (const c of body.contents ?? []) {
    for (const p of c.parts ?? []) {
      if (p.functionResponse) items.push({ kind: 'result', text: textOf(p.functionResponse.response) });
      else if (p.functionCall) items.push({ kind: 'call' });
      else if (typeof p.text === 'string') items.push({ kind: c.role === 'user' ? 'user' : 'assistant', text: p.text });
    }
  }
  return items;
}

function geminiTools(body) {
  const names = new Set();
  for (const t of body.tools ?? []) for (const f of t.functionDeclarations ?? []) names.add(f.name);
  return names;
}

function jsonFromSchema(schema) {
  if (!schema || typeof schema !== 'object') return null;
  const type = String(schema.type ?? '').toLowerCase();
  if (schema.enum) return schema.enum.includes('user') ? 'user' : schema.enum[0];
  if (type === 'object' || schema.properties) {
    const out = {};
    for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = jsonFromSchema(v);
    return out;
  }
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'number' || type === 'integer') return 1;
  return 'mock';
}

function geminiResponse(body, d, model) {
  const tools = geminiTools(body);
  const gc = body.generationConfig ?? body.config ?? {};
  let parts;
  if (gc.responseMimeType === 'application/json' || gc.responseJsonSchema || gc.responseSchema) {
    // Side requests (model router, next-speaker and loop checks) want JSON of a given schema.
    parts = [{ text: JSON.stringify(jsonFromSchema(gc.responseJsonSchema ?? gc.responseSchema) ?? {}) }];
  } else if (d.type === 'shell' && tools.has('run_shell_command')) {
    parts = [{ text: d.preface }, { functionCall: { name: 'run_shell_command', args: { command: d.command, description: 'Run the scripted command' } } }];
  } else if (d.type === 'write' && tools.has('write_file')) {
    parts = [{ text: d.preface }, { functionCall: { name: 'write_file', args: { file_path: 'out.txt', content: 'hi\n' } } }];
  } else if (d.type === 'ask' && tools.has('ask_user')) {
    parts = [
      { text: d.preface },
      {
        functionCall: {
          name: 'ask_user',
          args: { questions: [{ question: ASK.question, header: ASK.header, type: 'choice', options: ASK.options, multiSelect: false }] },
        },
      },
    ];
  } else if (d.type !== 'text') {
    parts = [{ text: `mock: the tool for ${d.type} is not offered (${[...tools].join(',')})` }];
  } else {
    parts = [{ text: d.text }];
  }
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 200, candidatesTokenCount: 20, totalTokenCount: 220 },
    modelVersion: model,
    responseId: id('mockresp'),
  };
}

function gemini(req, res, body, model, method) {
  if (method === 'countTokens') return send(res, 200, { totalTokens: 200 });
  if (method === 'embedContent') return send(res, 200, { embedding: { values: [0, 0, 0] } });
  const gc = body.generationConfig ?? {};
  const wantsJson = gc.responseMimeType === 'application/json' || gc.responseJsonSchema || gc.responseSchema;
  const d = wantsJson ? { type: 'text', text: '' } : decide(plan(geminiItems(body)));
  if (d.type === 'fail') return send(res, 400, { error: { code: 400, message: 'mock upstream failure', status: 'INVALID_ARGUMENT' } });
  const r = geminiResponse(body, d, model);
  if (method === 'generateContent') return send(res, 200, r);
  sse(res);
  // Text first, then the function call (if any) in a second chunk, as the real API streams.
  const parts = r.candidates[0].content.parts;
  const texts = parts.filter((p) => p.text !== undefined);
  const calls = parts.filter((p) => p.functionCall);
  if (texts.length && calls.length) {
    res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: texts }, index: 0 }], modelVersion: model })}\r\n\r\n`);
    r.candidates[0].content.parts = calls;
  }
  res.write(`data: ${JSON.stringify(r)}\r\n\r\n`);
  res.end();
}

// ---------------------------------------------------------------------------------------------
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw.slice(0, 2000);
    }
    const url = new URL(req.url, 'http://127.0.0.1');
    const path = url.pathname;
    const h = req.headers;
    log({
      method: req.method,
      path,
      query: url.search,
      headers: {
        'user-agent': h['user-agent'],
        'content-type': h['content-type'],
        'anthropic-beta': h['anthropic-beta'],
        'x-api-key': h['x-api-key'] ? '<set>' : undefined,
        authorization: h.authorization ? '<set>' : undefined,
        'x-goog-api-key': h['x-goog-api-key'] ? '<set>' : undefined,
      },
      body,
    });
    try {
      route(req, res, path, body ?? {});
    } catch (e) {
      log({ error: String(e?.stack ?? e) });
      if (!res.headersSent) send(res, 500, { error: { message: 'mock error: ' + e } });
      else res.end();
    }
  });
});

function route(req, res, path, body) {
  if (req.method === 'POST' && /\/v1\/messages\/count_tokens$/.test(path)) return send(res, 200, { input_tokens: 120 });
  if (req.method === 'POST' && /\/v1\/messages$/.test(path)) return anthropicMessages(req, res, body);
  if (req.method === 'POST' && /\/responses$/.test(path)) return openaiResponses(req, res, body);
  if (req.method === 'GET' && /\/models$/.test(path) && !path.includes('v1beta'))
    return send(res, 200, { object: 'list', data: [], models: [] });
  const g = path.match(/\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens|embedContent)$/);
  if (req.method === 'POST' && g) return gemini(req, res, body, g[1], g[2]);
  if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) return send(res, 200, {});
  return send(res, 404, { error: { type: 'not_found_error', message: `mock: no route for ${req.method} ${path}` } });
}

server.listen(PORT, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
const stop = () => {
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (process.env.MOCK_EXIT_ON_STDIN_EOF === '1') {
  process.stdin.resume();
  process.stdin.on('end', stop);
}
setTimeout(stop, MAX_SECONDS * 1000).unref();
