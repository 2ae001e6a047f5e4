// Shared pieces of the `baton mcp` end-to-end tests: a private BATON_HOME
// per test (its own batond), SDK clients over stdio, and clean-up by pid.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const BATON = process.env.BATON_BINARY ?? new URL('../../build/dev/baton', import.meta.url).pathname;

// A fresh state dir (short path: it holds Unix sockets).
export function makeHome() {
  return mkdtempSync(join(tmpdir(), 'bmcp-'));
}

export function batonEnv(home, extra = {}) {
  return { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp', BATON_HOME: home, ...extra };
}

// `baton ARGS` against `home`; returns stdout (throws on failure).
export function baton(home, args, extra = {}) {
  return execFileSync(BATON, args, { env: batonEnv(home, extra), encoding: 'utf8', timeout: 30_000 });
}

function pidAlive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

// Stops the home's batond with --kill-tasks, then SIGKILLs by pid whatever
// of batond and the supervisor is left, and removes the home.
export async function stopDaemon(home) {
  let pids = [];
  try {
    const status = JSON.parse(baton(home, ['--json', 'daemon', 'status']));
    pids = [status.daemon_pid, status.supervisor_pid].filter((p) => p > 0);
  } catch { /* not running */ }
  spawnSync(BATON, ['daemon', 'stop', '--kill-tasks'], { env: batonEnv(home), timeout: 30_000 });
  const deadline = Date.now() + 5_000;
  while (pids.some(pidAlive) && Date.now() < deadline) await sleep(50);
  for (const pid of pids) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(home, { recursive: true, force: true });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Runs `body(home, track)` on a fresh home; whatever it tracks (anything
// with a close() that returns a promise) is closed after, then the home's
// batond is stopped and the home removed.
export async function withHome(body) {
  const home = makeHome();
  const closers = [];
  try {
    await body(home, (c) => { closers.push(c); return c; });
  } finally {
    for (const c of closers) await c.close().catch(() => {});
    await stopDaemon(home);
  }
}

// An SDK client connected to `baton mcp` (stdio) with `home` as BATON_HOME.
export async function connect(home, extraEnv = {}) {
  const transport = new StdioClientTransport({
    command: BATON, args: ['mcp'], env: batonEnv(home, extraEnv), stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: 'baton-e2e', version: '0.0.1' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

// tools/call with the SDK; returns the CallToolResult.
export function call(client, name, args = {}, options = {}) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...options });
}

export function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
}

// `baton serve --listen 127.0.0.1:0 ARGS` on `home`; resolves once it
// printed its URLs (within `waitMs`): the MCP endpoint `url`, the board's
// `login` URL (its code works once; newLogin() mints another) and its
// `base`, the `token` and the `auth` header with it.
export async function startServe(home, { env = {}, args = [], waitMs = 15_000 } = {}) {
  const child = spawn(BATON, ['serve', '--listen', '127.0.0.1:0', ...args], {
    env: batonEnv(home, env), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  // serve prints the MCP line, then the board's.
  const [url, login] = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baton serve did not start: ${stderr}`)), waitMs);
    let mcp;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/MCP at (http:\S+)/);
      if (m) mcp = m[1];
      const b = line.match(/board at (http:\S+)/);
      if (b) { clearTimeout(timer); resolve([mcp, b[1]]); }
    });
    child.once('exit', (code) => reject(new Error(`baton serve exited ${code}: ${stderr}`)));
  });
  const token = baton(home, ['serve', '--print-token']).trim();
  return {
    url, login, base: new URL(login).origin, token, stderr: () => stderr,
    // A login code works once: each browser context needs its own URL,
    // which `baton board` mints for the serve that runs.
    newLogin() {
      const printed = baton(home, ['board', '--no-open'], env);
      const m = printed.match(/baton board: (http:\S+)/);
      if (!m) throw new Error(`baton board printed no login URL: ${printed}`);
      return m[1];
    },
    auth: { Authorization: `Bearer ${token}` },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exit = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
