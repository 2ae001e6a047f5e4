// Smoke tests: the real Claude Code CLI (pinned in package.json) registers
// `baton mcp` (stdio) and `baton serve` (Streamable HTTP, with the bearer
// token) and reports each connected. No API key is needed for `claude mcp
// add` / `claude mcp list`; HOME is a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATON, makeHome, startServe, stopDaemon } from './helpers.mjs';

const CLAUDE = fileURLToPath(new URL('./node_modules/.bin/claude', import.meta.url));

test('Claude Code: claude mcp add, then claude mcp list says Connected after its server/discover probe', { timeout: 120_000 }, async () => {
  const home = makeHome();
  const ccHome = mkdtempSync(join(tmpdir(), 'bcc-'));
  const env = { PATH: process.env.PATH, HOME: ccHome, DISABLE_AUTOUPDATER: '1' };
  try {
    execFileSync(CLAUDE, ['mcp', 'add', 'baton', '-e', `BATON_HOME=${home}`, '--', BATON, 'mcp'],
      { env, encoding: 'utf8', timeout: 60_000 });
    const out = execFileSync(CLAUDE, ['mcp', 'list'], { env, encoding: 'utf8', timeout: 60_000 });
    assert.match(out, /^baton: .*baton mcp - (✓|✔) Connected$/m, out);
    // Claude Code probes with server/discover before it falls back to
    // initialize; a server that ignored the probe would cost the client its
    // probe timeout. baton answers it and logs so (doc/mcp.md). A wall-clock
    // bound here failed on a loaded CI machine; the log is the behaviour.
    const log = readFileSync(join(home, 'mcp.log'), 'utf8');
    assert.match(log, /server\/discover from /, log);
  } finally {
    rmSync(ccHome, { recursive: true, force: true });
    await stopDaemon(home);
  }
});

test('Claude Code over HTTP: claude mcp add --transport http with the token, then claude mcp list says Connected', { timeout: 120_000 }, async () => {
  const home = makeHome();
  const ccHome = mkdtempSync(join(tmpdir(), 'bcc-'));
  const env = { PATH: process.env.PATH, HOME: ccHome, DISABLE_AUTOUPDATER: '1' };
  let serve;
  try {
    serve = await startServe(home);
    execFileSync(CLAUDE, ['mcp', 'add', '--transport', 'http', 'baton', serve.url,
      '--header', `Authorization: Bearer ${serve.token}`], { env, encoding: 'utf8', timeout: 60_000 });
    const out = execFileSync(CLAUDE, ['mcp', 'list'], { env, encoding: 'utf8', timeout: 60_000 });
    assert.match(out, new RegExp(`^baton: ${serve.url.replace(/[.]/g, '\\.')} \\(HTTP\\) - (✓|✔) Connected$`, 'm'), out);
    // It spoke the 2026-07-28 era: its server/discover probe reached the
    // MCP server of baton serve, which answered it (doc/serve.md).
    const log = readFileSync(join(home, 'serve.log'), 'utf8');
    assert.match(log, /server\/discover from .*"name":"claude-code"/, log);
  } finally {
    await serve?.stop();
    rmSync(ccHome, { recursive: true, force: true });
    await stopDaemon(home);
  }
});
