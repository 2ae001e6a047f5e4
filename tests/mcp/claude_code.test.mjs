// Smoke test: the real Claude Code CLI (pinned in package.json) registers
// `baton mcp` and reports it connected. No API key is needed for
// `claude mcp add` / `claude mcp list`; HOME is a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATON, makeHome, stopDaemon } from './helpers.mjs';

const CLAUDE = fileURLToPath(new URL('./node_modules/.bin/claude', import.meta.url));

test('Claude Code: claude mcp add, then claude mcp list says Connected, quickly', { timeout: 120_000 }, async () => {
  const home = makeHome();
  const ccHome = mkdtempSync(join(tmpdir(), 'bcc-'));
  const env = { PATH: process.env.PATH, HOME: ccHome, DISABLE_AUTOUPDATER: '1' };
  try {
    execFileSync(CLAUDE, ['mcp', 'add', 'baton', '-e', `BATON_HOME=${home}`, '--', BATON, 'mcp'],
      { env, encoding: 'utf8', timeout: 60_000 });
    const t0 = Date.now();
    const out = execFileSync(CLAUDE, ['mcp', 'list'], { env, encoding: 'utf8', timeout: 60_000 });
    const elapsed = Date.now() - t0;
    assert.match(out, /^baton: .*baton mcp - (✓|✔) Connected$/m, out);
    // A server that ignored the server/discover probe would cost seconds.
    assert.ok(elapsed < 5_000, `claude mcp list took ${elapsed} ms`);
  } finally {
    rmSync(ccHome, { recursive: true, force: true });
    await stopDaemon(home);
  }
});
