// End-to-end: the board of `baton serve` (doc/board.md) in a real Chromium
// (Debian's `chromium`, driven by playwright-core, pinned; no browser is
// downloaded). A private BATON_HOME, its own batond, `baton serve` on port
// 0; every process is bounded in time and stopped by its pid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { BATON, baton, batonEnv, makeHome, stopDaemon } from './helpers.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Generous: under ASan+UBSan everything starts slowly. Waits end as soon as
// their condition holds; nothing sleeps a fixed time.
const WAIT = Number(process.env.BOARD_TEST_WAIT ?? 30_000);
const T = { timeout: Number(process.env.BOARD_TEST_TIMEOUT ?? 180_000) };

// `baton serve` on port 0; resolves with the login URL it printed.
async function startServe(home) {
  const child = spawn(BATON, ['serve', '--listen', '127.0.0.1:0'], {
    env: batonEnv(home), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const login = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baton serve did not start: ${stderr}`)), WAIT);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = line.match(/board at (http:\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.once('exit', (code) => reject(new Error(`baton serve exited ${code}: ${stderr}`)));
  });
  return {
    login, base: new URL(login).origin, stderr: () => stderr,
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

// Starts a shell task from the CLI (unowned, as the board sees them).
function run(home, line) {
  const reply = JSON.parse(baton(home, ['--json', 'run', '--', 'sh', '-c', line]));
  return (reply.task ?? reply).id;
}

function status(home, id) {
  const reply = JSON.parse(baton(home, ['--json', 'status', id]));
  return (reply.task ?? reply).status;
}

// Until `check()` is true (the CLI's view of a task, say), within WAIT.
async function until(what, check) {
  const deadline = Date.now() + WAIT;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the board: login, live tasks, literal output, kill, refusals', { ...T, skip: !existsSync(CHROMIUM) && `no ${CHROMIUM} (scripts/setup --tests installs it)` }, async () => {
  const home = makeHome();
  let serve;
  let browser;
  try {
    serve = await startServe(home);
    browser = await chromium.launch({
      executablePath: CHROMIUM, timeout: WAIT,
      // Root in a container has no user namespaces for the sandbox.
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    let dialogs = 0;
    page.on('dialog', (dialog) => { dialogs += 1; dialog.dismiss(); });

    // Login: the printed URL sets the cookie and moves the token out of
    // the address bar.
    await page.goto(serve.login);
    assert.equal(page.url(), `${serve.base}/`);
    const cookies = await context.cookies();
    assert.equal(cookies.length, 1);
    assert.equal(cookies[0].httpOnly, true);
    assert.equal(cookies[0].sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie), '');
    assert.ok(!(await page.content()).includes(new URL(serve.login).searchParams.get('token')));
    await page.locator('#live', { hasText: /^live$/ }).waitFor();

    // A task started from the CLI appears, and its end shows, pushed.
    const echo = run(home, 'echo "<script>alert(1)</script>"; sleep 1');
    await page.locator(`#running tr[data-task="${echo}"], #ended tr[data-task="${echo}"]`).waitFor();
    await page.locator(`#ended tr[data-task="${echo}"] .status`, { hasText: 'completed' }).waitFor();

    // Its output is text: the characters, no element, no alert.
    await page.getByRole('button', { name: `Open ${echo}` }).click();
    await page.locator('#output', { hasText: '<script>alert(1)</script>' }).waitFor();
    assert.equal(await page.locator('#output script').count(), 0);
    assert.equal(dialogs, 0);

    // Kill from the page: batond ends it as killed, with the reason.
    await page.getByRole('button', { name: 'Back to all tasks' }).click();
    const sleeper = run(home, 'sleep 300');
    await page.getByRole('button', { name: `Open ${sleeper}` }).click();
    await page.locator('#task-title', { hasText: 'running' }).waitFor();
    await page.getByLabel('Reason').fill('not needed');
    await page.getByRole('button', { name: 'Kill' }).click();
    await page.locator('#message', { hasText: `Kill sent to ${sleeper}` }).waitFor();
    await until(`${sleeper} killed`, () => status(home, sleeper) === 'killed');
    await page.locator('#task-title', { hasText: 'killed' }).waitFor();
    await page.locator('#task-facts', { hasText: 'not needed' }).waitFor();

    // An action's error is batond's own text.
    await page.getByRole('button', { name: 'Back to all tasks' }).click();
    await page.locator('#new-task summary').click();
    await page.getByLabel('Command').fill('true');
    await page.getByLabel('Folder').fill('relative/folder');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.locator('#message.error', { hasText: /cwd|absolute/ }).waitFor();

    // Refusals: no cookie; a POST without Origin; a POST from elsewhere.
    const cookie = `${cookies[0].name}=${cookies[0].value}`;
    const kill = JSON.stringify({ tasks: [sleeper], reason: 'x' });
    let r = await fetch(`${serve.base}/board/api/tasks`);
    assert.equal(r.status, 401);
    r = await fetch(`${serve.base}/`);
    assert.equal(r.status, 401);
    r = await fetch(`${serve.base}/board/api/kill`, {
      method: 'POST', headers: { Cookie: cookie, 'Content-Type': 'application/json' }, body: kill,
    });
    assert.equal(r.status, 403);
    assert.match((await r.json()).error.message, /Origin/);
    r = await fetch(`${serve.base}/board/api/kill`, {
      method: 'POST', headers: { Cookie: cookie, Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body: kill,
    });
    assert.equal(r.status, 403);
    r = await fetch(`${serve.base}/board/api/tasks`, { headers: { Cookie: cookie } });
    assert.equal(r.status, 200);
  } finally {
    await browser?.close().catch(() => {});
    if (process.env.BOARD_DEBUG) console.log(serve?.stderr());
    await serve?.stop();
    await stopDaemon(home);
  }
});
