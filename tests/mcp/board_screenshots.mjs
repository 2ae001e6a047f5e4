// Regenerates the board's screenshots in doc/board/ (doc/board.md): a
// private BATON_HOME with 30 tasks of mixed kinds, `baton serve`, and
// Debian's Chromium driven by playwright-core: the list, a question, a
// failed task's output and a task's evidence, light and dark, and the list
// and a task at phone width. Run by scripts/board-screenshots.
//
//   node tests/mcp/board_screenshots.mjs [--baton build/dev/baton] [--out doc/board]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
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
  const git = (...a) => execFileSync('git', ['-c', 'user.email=me@example.com', '-c', 'user.name=me', ...a], { cwd: project });
  writeFileSync(join(project, 'parse.c'), 'int parse(void) {\n  return 0;\n}\n');
  writeFileSync(join(project, 'README'), 'parse: a parser\n');
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'init');
  // Ended: builds and test runs that passed, one that failed, one killed,
  // agents that finished; an edit whose checks ran, with its diff.
  const ended = [];
  for (let i = 1; i <= 15; i++) {
    ended.push(run(home, `echo "step ${i}: compiling"; echo "step ${i}: ok"`, ['--label', i % 3 ? 'build' : 'lint', '--cwd', project]));
  }
  for (let i = 1; i <= 6; i++) {
    const reply = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', project,
      '--label', 'docs', `update the docs of module ${i}`], agentEnv));
    ended.push((reply.task ?? reply).id);
  }
  const evidence = run(home, "printf 'int parse(void) {\\n  return 1; /* the fix */\\n}\\n' > parse.c; echo 'parse.h' > notes.txt",
    ['--label', 'fix', '--cwd', project, '--check', 'grep -q fix parse.c', '--check', 'test -e notes.txt']);
  const build = run(home, 'printf "\\033[1;32mcompiling\\033[0m parse.c\\n"; echo "linking baton"; echo "build ok"',
    ['--label', 'build', '--cwd', project, '--check', 'test -e parse.c']);
  const tests = run(home, 'echo "running 42 tests"; echo "\\033[31mFAIL\\033[0m parse_test: expected 3, got 2"; exit 1',
    ['--label', 'tests', '--cwd', project]);
  const killed = run(home, 'sleep 300', ['--label', 'server']);
  for (const id of [...ended, evidence, build]) await until(`${id} ended`, () => !['queued', 'running'].includes(status(home, id)));
  await until(`${tests} ended`, () => status(home, tests) === 'failed');
  baton(home, ['kill', killed, '--reason', 'not needed any more']);
  // Running: long watches; an agent at work; needs input: an agent that asks.
  run(home, 'for i in $(seq 1 600); do echo "watching: $i changes"; sleep 1; done', ['--label', 'watch']);
  run(home, 'for i in $(seq 1 600); do echo "serving request $i"; sleep 2; done', ['--label', 'dev-server', '--cwd', project]);
  run(home, 'sleep 600', ['--label', 'soak']);
  JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', project, '--label', 'refactor',
    'SLOW600 refactor the parser into two passes'], agentEnv));
  const agent = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', project,
    '--label', 'db-choice', 'please ASK me which database to use'], agentEnv));
  const asker = (agent.task ?? agent).id;
  await until(`${asker} asks`, () => status(home, asker) === 'waiting');
  await sleep(2500);  // The running rows' clocks read a few seconds.

  serve = await startServe(home, { env: agentEnv });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  mkdirSync(OUT, { recursive: true });
  const open = async (page, id) => {
    await page.goto(`${new URL(serve.login).origin}/#task=${id}`);
    await page.locator('#task-title', { hasText: id }).waitFor();
  };
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme });
    const page = await context.newPage();
    await page.goto(serve.newLogin());
    await page.locator('#live', { hasText: /^live$/ }).waitFor();
    await page.locator(`tr[data-task="${asker}"]`).waitFor();
    const suffix = scheme === 'light' ? '' : '-dark';
    await page.screenshot({ path: join(OUT, `tasks${suffix}.png`) });
    await open(page, asker);
    await page.locator('#questions button').first().waitFor();
    await page.locator('#output', { hasText: /\S/ }).waitFor();
    await page.locator('#earlier').waitFor({ state: 'hidden' });
    await page.screenshot({ path: join(OUT, `question${suffix}.png`) });
    await open(page, tests);
    await page.locator('#output', { hasText: 'FAIL' }).waitFor();
    await page.screenshot({ path: join(OUT, `output${suffix}.png`) });
    await open(page, evidence);
    await page.locator('#diff span.diff-add').first().waitFor();
    await page.locator('#evidence-view').scrollIntoViewIfNeeded();
    await page.locator('#checks').evaluate((node) => node.closest('section').scrollIntoView());
    await page.screenshot({ path: join(OUT, `evidence${suffix}.png`) });
    await context.close();
  }
  // A phone: the list reflows, the task's page too.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const page = await phone.newPage();
  await page.goto(serve.newLogin());
  await page.locator('#live', { hasText: /^live$/ }).waitFor();
  await page.locator(`tr[data-task="${asker}"]`).waitFor();
  await page.screenshot({ path: join(OUT, 'tasks-phone.png') });
  await open(page, asker);
  await page.locator('#questions button').first().waitFor();
  await page.screenshot({ path: join(OUT, 'question-phone.png') });
  await phone.close();
  console.log(`board screenshots written to ${OUT}`);
} finally {
  await browser?.close().catch(() => {});
  await serve?.stop();
  await stopDaemon(home);
  rmSync(project, { recursive: true, force: true });
}
