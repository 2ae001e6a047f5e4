// Regenerates the board's screenshots in doc/board/ (doc/board.md): a
// private BATON_HOME with a few tasks of every kind, `baton serve`, and
// Debian's Chromium driven by playwright-core. Run by scripts/board-screenshots.
//
//   node tests/mcp/board_screenshots.mjs [--baton build/dev/baton] [--out doc/board]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { baton, makeHome, startServe, stopDaemon, sleep } from './helpers.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const OUT = option('--out', new URL('../../doc/board', import.meta.url).pathname);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FAKES = new URL('../agents/fakes', import.meta.url).pathname;
const agentEnv = { PATH: `${FAKES}:${process.env.PATH}` };

function run(home, line, flags = []) {
  const reply = JSON.parse(baton(home, ['--json', 'run', ...flags, '--', 'sh', '-c', line]));
  return (reply.task ?? reply).id;
}

function status(home, id) {
  const reply = JSON.parse(baton(home, ['--json', 'status', id]));
  return (reply.task ?? reply).status;
}

async function until(what, check) {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const home = makeHome();
const project = mkdtempSync(join(tmpdir(), 'board-shot-'));
let serve;
let browser;
try {
  writeFileSync(join(project, 'parse.c'), 'int parse(void) { return 0; }\n');
  // Ended: a build that passed its check, a test run that failed, one killed.
  const build = run(home, 'printf "\\033[1;32mcompiling\\033[0m parse.c\\n"; echo "linking baton"; echo "build ok"',
    ['--label', 'build', '--cwd', project, '--check', 'test -e parse.c']);
  const tests = run(home, 'echo "running 42 tests"; echo "\\033[31mFAIL\\033[0m parse_test: expected 3, got 2"; exit 1',
    ['--label', 'tests', '--cwd', project]);
  const killed = run(home, 'sleep 300', ['--label', 'server']);
  await until(`${build} ended`, () => !['queued', 'running'].includes(status(home, build)));
  await until(`${tests} ended`, () => status(home, tests) === 'failed');
  baton(home, ['kill', killed, '--reason', 'not needed any more']);
  // Running: a long watch; needs input: an agent that asks.
  run(home, 'for i in $(seq 1 600); do echo "watching: $i changes"; sleep 1; done', ['--label', 'watch']);
  const agent = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', project,
    '--label', 'db-choice', 'please ASK me which database to use'], agentEnv));
  const asker = (agent.task ?? agent).id;
  await until(`${asker} asks`, () => status(home, asker) === 'waiting');

  serve = await startServe(home, { env: agentEnv });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  mkdirSync(OUT, { recursive: true });
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ viewport: { width: 1100, height: 720 }, colorScheme: scheme });
    const page = await context.newPage();
    await page.goto(serve.newLogin());
    await page.locator('#live', { hasText: /^live$/ }).waitFor();
    await page.locator(`tr[data-task="${asker}"]`).waitFor();
    const suffix = scheme === 'light' ? '' : '-dark';
    await page.screenshot({ path: join(OUT, `tasks${suffix}.png`) });
    await page.getByRole('button', { name: `Open ${asker}` }).click();
    await page.locator('#questions button').first().waitFor();
    await page.locator('#output', { hasText: /\S/ }).waitFor();
    await page.locator('#earlier').waitFor({ state: 'hidden' });
    await page.screenshot({ path: join(OUT, `question${suffix}.png`) });
    await page.getByRole('button', { name: 'Back to all tasks' }).click();
    await page.getByRole('button', { name: `Open ${tests}` }).click();
    await page.locator('#output', { hasText: 'FAIL' }).waitFor();
    await page.screenshot({ path: join(OUT, `output${suffix}.png`) });
    await context.close();
  }
  console.log(`board screenshots written to ${OUT}`);
} finally {
  await browser?.close().catch(() => {});
  await serve?.stop();
  await stopDaemon(home);
  rmSync(project, { recursive: true, force: true });
}
