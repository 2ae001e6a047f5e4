// The real agent CLIs as MCP *clients* of baton (issue 14): Claude Code 2.1.332 (`claude -p
// --mcp-config`) and Codex 0.171.0 (`codex exec` with `[mcp_servers.baton]`), each in its
// default setup, start `baton mcp` over stdio and call its `run` tool when the model (the
// loopback stand-in, scenario SCEN_BATON) asks for it. Both CLIs defer MCP tools behind a
// tool search (Claude's ToolSearch, Codex's tool_search); the stand-in searches first, as a
// model does. Then baton itself is asked: the task exists in the CLI's session, ran, and its
// audit record says it came through MCP.
//
//   node --test mcp_clients.test.mjs          (BATON_BINARY=/path/to/baton; default build/dev)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BIN, claudeEnv, codexConfig } from './agent_env.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BATON = process.env.BATON_BINARY ?? join(HERE, '..', '..', 'build', 'dev', 'baton');
const SKIP = ['claude', 'codex'].some((cli) => !existsSync(join(BIN, cli)))
  ? 'tests/agents/node_modules/.bin lacks claude or codex: run scripts/setup --tests'
  : !existsSync(BATON)
    ? `no baton binary at ${BATON} (set BATON_BINARY)`
    : false;

const world = { root: '', home: '', port: 0, mock: null, log: '' };

// Runs a program to its end, killed (its own process group) after `timeout` ms.
function exec(cmd, args, { env, cwd, timeout = 60_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, timeout);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

function baseEnv(extra) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', ...extra };
}

async function baton(session, args) {
  const r = await exec(BATON, args, { env: baseEnv({ BATON_HOME: world.home, BATON_SESSION: session }) });
  assert.equal(r.code, 0, `baton ${args.join(' ')}: ${r.err}${r.out}`);
  return r.out;
}

// What baton says of the task the CLI started through MCP, from the CLI's last words.
async function checkTaskStarted(session, answer) {
  const id = answer.match(/"task_id":"(shell-\d+)"/)?.[1];
  assert.ok(id, `no task id in the answer: ${answer}`);
  assert.match(answer, /"command":"echo from-baton-mcp"/);
  const waited = JSON.parse(await baton(session, ['--json', 'wait', '--timeout', '30s', id]));
  assert.equal(waited.ended[0].status, 'completed', JSON.stringify(waited));
  assert.equal(await baton(session, ['output', id]), 'from-baton-mcp\n');
  const audit = JSON.parse(await baton(session, ['--json', 'audit', '--task', id]));
  const records = audit.records ?? audit;
  assert.equal(records[0].action, 'run', JSON.stringify(audit));
  assert.equal(records[0].client, 'mcp', JSON.stringify(audit));
  assert.equal(records[0].session, session, JSON.stringify(audit));
  return id;
}

// The stand-in's requests (as logged) of the SCEN_BATON conversation that hold `text`.
function requestsWith(text) {
  return readFileSync(world.log, 'utf8')
    .split('\n')
    .filter((line) => line.includes('SCEN_BATON') && line.includes(text));
}

// The lines of mcp.log written by the `baton mcp` processes that served `session`.
function serverLog(session) {
  const lines = readFileSync(join(world.home, 'mcp.log'), 'utf8').split('\n');
  const pids = lines.map((line) => line.match(/baton-mcp\[(\d+)\] serving MCP on stdio as session (\S+)/))
    .filter((m) => m && m[2] === session).map((m) => `baton-mcp[${m[1]}]`);
  assert.ok(pids.length, `no baton mcp served ${session}`);
  return lines.filter((line) => pids.some((pid) => line.includes(pid))).join('\n');
}

before(async () => {
  if (SKIP) return;
  world.root = mkdtempSync(join(tmpdir(), 'baton-mcp-clients-'));
  world.home = join(world.root, 'baton');
  mkdirSync(world.home);
  chmodSync(world.home, 0o700);
  world.log = join(world.root, 'requests.jsonl');
  world.mock = spawn(process.execPath, [join(HERE, 'mock_model_api.mjs'), '--log', world.log], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, MOCK_MAX_SECONDS: '600', MOCK_EXIT_ON_STDIN_EOF: '1' },
  });
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: world.mock.stdout }).once('line', resolve);
    world.mock.once('exit', () => reject(new Error('the model stand-in exited')));
  });
  world.port = JSON.parse(first).port;
});

after(async () => {
  if (SKIP) return;
  await exec(BATON, ['daemon', 'stop', '--kill-tasks'], { env: baseEnv({ BATON_HOME: world.home }) });
  world.mock?.stdin.end();
  world.mock?.kill('SIGTERM');
  if (!process.env.BATON_AGENTS_KEEP) rmSync(world.root, { recursive: true, force: true });
});

test('Claude Code as an MCP client: claude -p calls baton run (stdio) and gets its task', { skip: SKIP, timeout: 150_000 }, async () => {
  const home = join(world.root, 'claude-home');
  const config = join(world.root, 'claude-mcp.json');
  writeFileSync(config, JSON.stringify({
    mcpServers: { baton: { command: BATON, args: ['mcp'], env: { BATON_HOME: world.home, BATON_SESSION: 'claude-client' } } },
  }));
  const r = await exec(join(BIN, 'claude'),
    ['-p', 'SCEN_BATON run the command through baton', '--mcp-config', config,
      '--allowedTools', 'mcp__baton__run', '--output-format', 'json'],
    { env: baseEnv(claudeEnv(world.port, home)), cwd: world.root, timeout: 120_000 });
  assert.equal(r.code, 0, r.err + r.out);
  const result = JSON.parse(r.out.trim().split('\n').pop());
  assert.equal(result.is_error, false, r.out);
  assert.match(result.result, /^mock final answer: /);
  await checkTaskStarted('claude-client', result.result);
  // The tool was loaded through ToolSearch, then called.
  assert.ok(requestsWith('"name":"ToolSearch","input":{"query":"select:mcp__baton__run"').length > 0);
  assert.ok(requestsWith('"name":"mcp__baton__run","input":{"command":"echo from-baton-mcp"}').length > 0);
  // The 2026-07-28 era: Claude Code's server/discover probe, answered.
  assert.match(serverLog('claude-client'), /server\/discover from .*"name":"claude-code"/);
});

test('Codex as an MCP client: codex exec calls baton run (stdio, its default era) and gets its task', { skip: SKIP, timeout: 150_000 }, async () => {
  const home = join(world.root, 'codex-home');
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(join(codexHome, 'config.toml'), codexConfig(world.port) + [
    '',
    '[mcp_servers.baton]',
    `command = ${JSON.stringify(BATON)}`,
    'args = ["mcp"]',
    // exec asks no one: without this an MCP call "requires approval, but approval policy
    // is never".
    'default_tools_approval_mode = "approve"',
    `env = { BATON_HOME = ${JSON.stringify(world.home)}, BATON_SESSION = "codex-client" }`,
    '',
  ].join('\n'));
  const r = await exec(join(BIN, 'codex'),
    ['exec', '--skip-git-repo-check', 'SCEN_BATON run the command through baton'],
    { env: baseEnv({ HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: 'mock-not-a-key' }), cwd: world.root, timeout: 120_000 });
  assert.equal(r.code, 0, r.err + r.out);
  assert.match(r.err + r.out, /mcp: baton\/run started/);
  // The tool was found through tool_search, then called in its namespace.
  assert.ok(requestsWith('"type":"tool_search_call"').length > 0);
  assert.ok(requestsWith('"namespace":"mcp__baton"').length > 0);
  const answer = r.out.trim();
  assert.match(answer, /mock final answer: /, r.err + r.out);
  await checkTaskStarted('codex-client', answer);
  // Its default era: the initialize handshake (2025-06-18), not server/discover.
  const log = serverLog('codex-client');
  assert.match(log, /initialize: client asked "2025-06-18", we speak 2025-06-18/);
  assert.doesNotMatch(log, /server\/discover/);
});
