// Smoke test: the MCP Inspector CLI (pinned in package.json) lists and
// calls baton's tools over stdio.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BATON, makeHome, batonEnv, stopDaemon } from './helpers.mjs';

const INSPECTOR = fileURLToPath(new URL('./node_modules/.bin/mcp-inspector', import.meta.url));

function inspector(home, args) {
  return execFileSync(INSPECTOR, ['--cli', '-e', `BATON_HOME=${home}`, BATON, 'mcp', ...args],
    { env: batonEnv(home), encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

test('Inspector CLI: tools/list and tools/call', { timeout: 120_000 }, async () => {
  const home = makeHome();
  try {
    const list = JSON.parse(inspector(home, ['--method', 'tools/list']));
    assert.deepEqual(list.tools.map((t) => t.name), ['run', 'delegate', 'task_output', 'task_status', 'task_list', 'task_events', 'task_questions', 'task_send', 'task_answer', 'task_kill', 'session_budget', 'worktrees', 'task_rerun', 'task_edit', 'conflicts', 'land', 'land_queue']);
    const run = JSON.parse(inspector(home, ['--method', 'tools/call', '--tool-name', 'run', '--tool-arg', 'command=echo from-inspector']));
    assert.equal(run.isError, false);
    assert.match(run.structuredContent.task_id, /^shell-\d+$/);
  } finally {
    await stopDaemon(home);
  }
});
