// Smoke test: the real Claude Code CLI (pinned in package.json) registers
// `baton mcp` and reports it connected. No API key is needed for
// `claude mcp add` / `claude mcp list`; HOME is a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATON, makeHome, stopDaemon } from './helpers.mjs';

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
