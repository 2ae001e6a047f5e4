// End-to-end: the board of `baton serve` (doc/board.md) in a real Chromium
// (Debian's `chromium`, driven by playwright-core, pinned; no browser is
// downloaded). A private BATON_HOME, its own batond, `baton serve` on port
// 0; every process is bounded in time and stopped by its pid.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { BATON, baton, batonEnv, makeHome, startServe, stopDaemon } from './helpers.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Generous: under ASan+UBSan everything starts slowly. Waits end as soon as
// their condition holds; nothing sleeps a fixed time.
const WAIT = Number(process.env.BOARD_TEST_WAIT ?? 30_000);
const T = { timeout: Number(process.env.BOARD_TEST_TIMEOUT ?? 180_000) };

// Starts a shell task from the CLI (unowned, as the board sees them);
// `flags` go before the command (--label, --cwd, --check).
function run(home, line, flags = []) {
  const reply = JSON.parse(baton(home, ['--json', 'run', ...flags, '--', 'sh', '-c', line]));
  return (reply.task ?? reply).id;
}

function task(home, id) {
  const reply = JSON.parse(baton(home, ['--json', 'status', id]));
  return reply.task ?? reply;
}

function status(home, id) {
  return task(home, id).status;
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

// Until each of `ids` has ended, as batond tells it (`baton wait --all`:
// no polling), within WAIT. The caller then asserts how each ended.
function waitEnded(home, ids) {
  spawnSync(BATON, ['wait', '--all', '--timeout', `${Math.ceil(WAIT / 1000)}s`, ...ids],
    { env: batonEnv(home), timeout: WAIT + 10_000, stdio: 'ignore' });
}

// A board to test against: its own home, batond, `baton serve` and
// Chromium, logged in; `stop()` ends them all.
async function openBoard() {
  const board = { home: makeHome() };
  board.stop = async () => {
    await board.browser?.close().catch(() => {});
    if (process.env.BOARD_DEBUG) console.log(board.serve?.stderr());
    await board.serve?.stop();
    await stopDaemon(board.home);
  };
  try {
    // Agents delegated from the page run with serve's environment: the
    // scripted Claude Code of tests/agents comes first on its PATH.
    const fakes = new URL('../agents/fakes', import.meta.url).pathname;
    board.serve = await startServe(board.home, { waitMs: WAIT, env: { PATH: `${fakes}:${process.env.PATH}` } });
    board.browser = await chromium.launch({
      executablePath: CHROMIUM, timeout: WAIT,
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    board.page = await (await board.browser.newContext()).newPage();
    board.page.setDefaultTimeout(WAIT);
    await board.page.goto(board.serve.login);
    return board;
  } catch (error) {
    await board.stop();
    throw error;
  }
}

const NEEDS_CHROMIUM = { ...T, skip: !existsSync(CHROMIUM) && `no ${CHROMIUM} (scripts/setup --tests installs it)` };

test('the board: login, live tasks, literal output, kill, refusals', { ...T, skip: !existsSync(CHROMIUM) && `no ${CHROMIUM} (scripts/setup --tests installs it)` }, async () => {
  const home = makeHome();
  let serve;
  let browser;
  try {
    serve = await startServe(home, { waitMs: WAIT });
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

    // Login: the printed URL carries a one-time code, not the token; it
    // sets the cookie and leaves the address bar.
    const code = new URL(serve.login).searchParams.get('login');
    assert.match(code, /^[0-9a-f]{32}$/);
    assert.ok(!serve.login.includes(serve.token));
    await page.goto(serve.login);
    assert.equal(page.url(), `${serve.base}/`);
    const cookies = await context.cookies();
    assert.equal(cookies.length, 1);
    assert.equal(cookies[0].httpOnly, true);
    assert.equal(cookies[0].sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie), '');
    assert.ok(!(await page.content()).includes(code));
    // Kept in a history, the URL is worth nothing: a second browser gets
    // 401 with it, and with the token in the old ?token= form; a URL that
    // `baton board` prints works, once. A logged-in page that opens a used
    // URL again stays logged in.
    const stranger = await (await browser.newContext()).newPage();
    for (const url of [serve.login, `${serve.base}/?token=${serve.token}`]) {
      const refused = await stranger.goto(url);
      assert.equal(refused.status(), 401, url);
      assert.match(await refused.text(), url === serve.login ? /used already .* run baton board/ : /baton board/);
    }
    const fresh = serve.newLogin();
    assert.equal((await stranger.goto(fresh)).status(), 200);
    assert.equal(stranger.url(), `${serve.base}/`);
    await stranger.context().close();
    assert.equal((await page.goto(serve.login)).status(), 200);
    assert.equal(page.url(), `${serve.base}/`);
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
    await page.locator('#kill-feedback', { hasText: `Kill sent to ${sleeper}` }).waitFor();
    waitEnded(home, [sleeper]);
    assert.equal(status(home, sleeper), 'killed');
    await page.locator('#task-title', { hasText: 'killed' }).waitFor();
    await page.locator('#task-facts', { hasText: 'not needed' }).waitFor();
    // Its history, from the audit trail: started from the CLI, killed here.
    await page.locator('#audit li', { hasText: 'kill by board' }).waitFor();
    const history = await page.locator('#audit li').allTextContents();
    assert.equal(history.length, 2, history.join('\n'));
    assert.match(history[0], /run by cli \(pid \d+\): .*sleep 300/);
    assert.match(history[1], /kill by board \(pid \d+\): SIGTERM, then SIGKILL after 5s; why: not needed/);

    // An action's error is batond's own text.
    await page.getByRole('button', { name: 'Back to all tasks' }).click();
    await page.locator('#new-task summary').click();
    await page.getByLabel('Command').fill('true');
    await page.getByRole('textbox', { name: 'Folder', exact: true }).fill('relative/folder');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.locator('#run-feedback.error', { hasText: /cwd|absolute/ }).waitFor();

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

// The further tests share one board (its start and stop take seconds);
// each starts from a fresh load of the page.
describe('the board, one instance', NEEDS_CHROMIUM, () => {
  let board;
  before(async () => { board = await openBoard(); });
  after(async () => { await board?.stop(); });
  async function fresh() {
    await board.page.goto(`${board.serve.base}/`);
    await board.page.locator('#live', { hasText: /^live$/ }).waitFor();
    return board;
  }

  test('the board: a running task\'s output streams to its page', async () => {
    const { home, page } = await fresh();
    const gates = mkdtempSync(join(tmpdir(), 'bgate-'));
    try {
      // Prints, waits for the test, prints again, and keeps running.
      const id = run(home, `echo first line; while [ ! -e ${gates}/a ]; do sleep 0.05; done; ` +
        `echo second line; while [ ! -e ${gates}/b ]; do sleep 0.05; done`);
      await page.getByRole('button', { name: `Open ${id}` }).click();
      await page.locator('#output', { hasText: 'first line' }).waitFor();
      const size = page.locator('#task-facts dd[data-fact="output"]');
      await size.filter({ hasText: /^11 B$/ }).waitFor();
      await page.evaluate(() => { window.notReloaded = true; });
      writeFileSync(join(gates, 'a'), '');
      await page.locator('#output', { hasText: 'second line' }).waitFor();
      // The size moves with the log, while the task runs.
      await size.filter({ hasText: /^23 B$/ }).waitFor();
      assert.equal(status(home, id), 'running');
      assert.equal(await page.evaluate(() => window.notReloaded), true);
      assert.match(await page.locator('#task-title').textContent(), /running/);
      writeFileSync(join(gates, 'b'), '');
      await page.locator('#task-title', { hasText: 'completed' }).waitFor();
      assert.equal(await page.locator('#output').textContent(), 'first line\nsecond line\n');
    } finally {
      rmSync(gates, { recursive: true, force: true });
    }
  });

  test('the board: filters and search', async () => {
    const { home, page } = await fresh();
    const alpha = run(home, 'echo alpha-word', ['--label', 'alpha']);
    const beta = run(home, 'echo beta-word', ['--label', 'beta']);
    const row = (id) => page.locator(`tr[data-task="${id}"]`);
    await page.locator(`#ended tr[data-task="${alpha}"]`).waitFor();
    await page.locator(`#ended tr[data-task="${beta}"]`).waitFor();
    const counts = await page.locator('#counts').textContent();

    await page.getByLabel('Filter by label').selectOption('alpha');
    await row(beta).waitFor({ state: 'detached' });
    assert.equal(await row(alpha).count(), 1);

    await page.getByLabel('Filter by label').selectOption('');
    await page.getByLabel('Search tasks').fill('BETA-word');
    await row(alpha).waitFor({ state: 'detached' });
    assert.equal(await row(beta).count(), 1);

    await page.getByLabel('Search tasks').fill('');
    await page.getByLabel('Filter by kind').selectOption('agent');
    await row(beta).waitFor({ state: 'detached' });
    assert.equal(await row(alpha).count(), 0);
    await page.getByLabel('Filter by kind').selectOption('shell');
    await page.getByLabel('Filter by status').selectOption('failed');
    await row(alpha).waitFor({ state: 'detached' });
    await page.getByLabel('Filter by status').selectOption('completed');
    await row(alpha).waitFor();
    await row(beta).waitFor();
    // The header still counts every task.
    assert.equal(await page.locator('#counts').textContent(), counts);
    assert.match(counts, /[2-9]\d* completed/);
    // A filter the board does not know is refused, saying what it takes.
    const refused = await page.evaluate(async () => {
      const response = await fetch('/board/api/tasks?kind=robot');
      return { status: response.status, body: await response.json() };
    });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error.message, /'kind' must be shell or agent/);
  });

  test('the board: every session\'s tasks, by session, and their owner still told', async () => {
    const { home, page } = await fresh();
    const director = { BATON_SESSION: 'director' };
    const reply = JSON.parse(baton(home, ['--json', 'run', '--', 'sh', '-c', 'echo directed'], director));
    const theirs = (reply.task ?? reply).id;
    const mine = run(home, 'echo unowned-one');
    const row = (id) => page.locator(`tr[data-task="${id}"]`);
    await page.locator(`#ended tr[data-task="${theirs}"]`).waitFor();
    await page.locator(`#ended tr[data-task="${mine}"]`).waitFor();
    const sessions = page.getByLabel('Filter by session');
    await sessions.selectOption('owner:director');
    await row(mine).waitFor({ state: 'detached' });
    assert.equal(await row(theirs).count(), 1);
    await sessions.selectOption('unowned');
    await row(theirs).waitFor({ state: 'detached' });
    assert.equal(await row(mine).count(), 1);
    await sessions.selectOption('');
    // Its page shows the owner and the output; a look from the board is
    // not the director's: it is still told of the end.
    await page.getByRole('button', { name: `Open ${theirs}` }).click();
    await page.locator('#output', { hasText: 'directed' }).waitFor();
    assert.match(await page.locator('#task-view').textContent(), /Owner\s*director/);
    assert.match(baton(home, ['notices'], director), new RegExp(`${theirs} completed`));
  });

  test('the board: ANSI colours render, as text', async () => {
    const { home, page } = await fresh();
    let dialogs = 0;
    const dismiss = (dialog) => { dialogs += 1; dialog.dismiss(); };
    page.on('dialog', dismiss);
    const id = run(home, String.raw`printf '\033[31mred\033[0m <script>x</script> \033[1;38;5;28mgreen\033[0m\033]0;title\007\033[2Kend\n'`);
    waitEnded(home, [id]);
    assert.equal(status(home, id), 'completed');
    await page.getByRole('button', { name: `Open ${id}` }).click();
    const red = page.locator('#output span.ansi-fg-1');
    await red.waitFor();
    assert.equal(await red.textContent(), 'red');
    assert.equal(await red.evaluate((node) => getComputedStyle(node).color), 'rgb(196, 39, 31)');
    const green = page.locator('#output span.ansi-bold');
    assert.equal(await green.textContent(), 'green');
    assert.equal(await green.evaluate((node) => node.style.color), 'rgb(0, 135, 0)');
    assert.equal(await page.locator('#output').textContent(), 'red <script>x</script> greenend\n');
    assert.equal(await page.locator('#output script').count(), 0);
    assert.equal(dialogs, 0);
    page.off('dialog', dismiss);
  });

  test('the board: the whole log downloads, behind the cookie', async () => {
    const { home, serve, page } = await fresh();
    // More than one piece (64 KiB) of the download, not all of it text.
    const id = run(home, 'head -c 150000 /dev/urandom; echo; seq 1 20000');
    waitEnded(home, [id]);
    assert.equal(status(home, id), 'completed');
    const file = readFileSync(task(home, id).output_path);
    assert.ok(file.length > 200_000);
    await page.getByRole('button', { name: `Open ${id}` }).click();
    const link = page.getByRole('link', { name: 'Download the whole log' });
    await link.and(page.locator(`[href="/board/api/log?task=${id}"]`)).waitFor();
    const got = await page.evaluate(async (href) => {
      const response = await fetch(href);
      const bytes = new Uint8Array(await response.arrayBuffer());
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
      return {
        status: response.status,
        disposition: response.headers.get('content-disposition'),
        length: bytes.length,
        sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''),
      };
    }, `/board/api/log?task=${id}`);
    assert.equal(got.status, 200);
    assert.equal(got.disposition, `attachment; filename="${id}.log"`);
    assert.equal(got.length, file.length);
    assert.equal(got.sha256, createHash('sha256').update(file).digest('hex'));
    const refused = await fetch(`${serve.base}/board/api/log?task=${id}`);
    assert.equal(refused.status, 401);
    const unknown = await page.evaluate(async () => (await fetch('/board/api/log?task=shell-999')).status);
    assert.equal(unknown, 404);
  });

  test('the board: an agent\'s usage and budget show on its page', async () => {
    const { home, page } = await fresh();
    // The fake Claude Code reports usage as the real CLI does.
    const fakes = new URL('../agents/fakes', import.meta.url).pathname;
    const reply = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', home,
      '--max-turns', '2', 'LOOP on'], { PATH: `${fakes}:${process.env.PATH}` }));
    const id = (reply.task ?? reply).id;
    waitEnded(home, [id]);
    assert.equal(status(home, id), 'killed');
    await page.getByRole('button', { name: `Open ${id}` }).click();
    await page.locator('#task-facts', { hasText: 'budget: max-turns 2 reached' }).waitFor();
    const usage = task(home, id).usage;
    const facts = await page.locator('#task-facts').textContent();
    assert.ok(facts.includes(`${usage.turns} turns, ${usage.input_tokens + usage.output_tokens} tokens`), facts);
    // Its interrupted turn's result still told the cost.
    assert.match(facts, /turns, \d+ tokens \(\d+ in, \d+ out\), \$0\.\d{4}/);
    assert.ok(facts.includes('max-turns 2'), facts);
  });

  test('the board: a brief delegated from the page, then resumed once it ended', async () => {
    const { home, page } = await fresh();
    await page.locator('#new-agent summary').click();
    await page.getByLabel('Brief').fill('hello from the board');
    await page.locator('#delegate-cwd').fill(home);
    await page.locator('#delegate-agent').selectOption('claude');
    await page.locator('#delegate-label').fill('from-board');
    await page.getByRole('button', { name: 'Delegate', exact: true }).click();
    const said = await page.locator('#delegate-feedback', { hasText: /Delegated to claude as agent-\d+/ }).textContent();
    const id = said.match(/agent-\d+/)[0];
    waitEnded(home, [id]);
    assert.equal(status(home, id), 'completed');
    assert.equal(task(home, id).label, 'from-board');
    await page.getByRole('button', { name: `Open ${id}` }).click();
    await page.locator('#output', { hasText: 'turn 1: hello from the board' }).waitFor();
    // Its transcript, from its events: the brief, the tool call with its
    // input, the text and the result, as text.
    await page.locator('#transcript li[data-type="result"]').waitFor();
    const transcript = await page.locator('#transcript li').allTextContents();
    assert.equal(transcript[0], 'hello from the board');
    assert.ok(transcript.some((line) => /Bash: echo hello-from-tool/.test(line)), transcript.join('\n'));
    assert.ok(transcript.some((line) => /turn 1: hello from the board/.test(line)), transcript.join('\n'));
    // The page reads the events once, then only those after the last.
    const later = await page.evaluate(async (task) => {
      const all = (await (await fetch(`/board/api/transcript?task=${task}`)).json()).events;
      const after = all[1].seq;
      const rest = (await (await fetch(`/board/api/transcript?task=${task}&after=${after}`)).json()).events;
      const bad = (await fetch(`/board/api/transcript?task=${task}&after=x`)).status;
      return { all: all.map((e) => e.seq), rest: rest.map((e) => e.seq), after, bad };
    }, id);
    assert.deepEqual(later.rest, later.all.filter((seq) => seq > later.after));
    assert.ok(later.rest.length > 0 && later.rest.length < later.all.length, JSON.stringify(later));
    assert.equal(later.bad, 400);
    // Its page offers Resume (it ended), not a follow-up.
    assert.equal(await page.locator('#send-form').isHidden(), true);
    await page.getByLabel('Resume with').fill('and now the docs');
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    const resumed = await page.locator('#resume-feedback', { hasText: new RegExp(`Resumed ${id} as agent-\\d+`) }).textContent();
    const next = resumed.match(/as (agent-\d+)/)[1];
    waitEnded(home, [next]);
    assert.equal(status(home, next), 'completed');
    assert.equal(task(home, next).agent.resume_from, id);
    assert.match(baton(home, ['output', next]), /and now the docs/);
    // A bad brief is batond's error, said on the page; nothing starts.
    const before = JSON.parse(baton(home, ['--json', 'ls', '--all'])).tasks.length;
    await page.getByRole('button', { name: 'Back to all tasks' }).click();
    await page.getByLabel('Brief').fill('   ');
    await page.locator('#delegate-cwd').fill(home);
    await page.getByRole('button', { name: 'Delegate', exact: true }).click();
    await page.locator('#delegate-feedback.error', { hasText: 'empty brief' }).waitFor();
    assert.equal(JSON.parse(baton(home, ['--json', 'ls', '--all'])).tasks.length, before);
  });

  test('the board: a follow-up queued, withdrawn and a steer, each in the history', async () => {
    const { home, page } = await fresh();
    const fakes = new URL('../agents/fakes', import.meta.url).pathname;
    // A turn of 20 s: a follow-up waits for its end, a steer goes into it.
    const reply = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', home,
      'SLOW20 a long turn'], { PATH: `${fakes}:${process.env.PATH}` }));
    const id = (reply.task ?? reply).id;
    try {
      await page.getByRole('button', { name: `Open ${id}` }).click();
      await page.locator('#task-title', { hasText: 'running' }).waitFor();
      await page.getByLabel('Follow-up', { exact: true }).fill('after this turn, run the tests');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.locator('#send-feedback', { hasText: `Sent to ${id}: queued` }).waitFor();
      const withdraw = page.getByRole('button', { name: 'Withdraw m-1' });
      await withdraw.waitFor();
      assert.match(await page.locator('#queued').textContent(), /m-1 after this turn, run the tests/);
      await withdraw.click();
      await page.locator('#send-feedback', { hasText: 'Withdrew m-1' }).waitFor();
      await page.locator('#queued-view').waitFor({ state: 'hidden' });
      // The withdrawn one is gone at batond too.
      const queued = baton(home, ['send', id, '--list']);
      assert.doesNotMatch(queued, /m-1/);

      await page.getByLabel('Follow-up', { exact: true }).fill('stop and look at the logs');
      await page.getByRole('button', { name: 'Steer' }).click();
      await page.locator('#send-feedback', { hasText: `Sent to ${id}: steered` }).waitFor();
      await page.locator('#audit li', { hasText: 'steer by board' }).waitFor();
      // The transcript tells each message's fate.
      await page.locator('#transcript li[data-type="message"]', { hasText: 'withdrawn' }).waitFor();
      assert.match(await page.locator('#transcript').textContent(), /stop and look at the logs/);
      const history = await page.locator('#audit li').allTextContents();
      assert.deepEqual(history.map((line) => line.match(/ (\w+) by (\w+)/).slice(1, 3).join(' ')),
        ['delegate cli', 'send board', 'withdraw board', 'steer board']);
      assert.match(history[3], /: m-2 steered: stop and look at the logs/);
    } finally {
      baton(home, ['kill', id]);
    }
  });

  test('the board: a retried task shows its retries, attempts and output cap', async () => {
    const { home, page } = await fresh();
    const counter = join(home, 'count');
    const id = run(home, `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; echo try $n; [ $n -ge 3 ]`,
      ['--retry', '2', '--retry-delay', '100ms', '--max-output', '1M']);
    await until(`${id} ended`, () => !['queued', 'running', 'stopping'].includes(status(home, id)));
    assert.equal(status(home, id), 'completed');
    await page.getByRole('button', { name: `Open ${id}` }).click();
    await page.locator('#task-facts', { hasText: 'attempt 3 of 3' }).waitFor();
    const facts = await page.locator('#task-facts').innerText();
    assert.match(facts, /Retries\s+up to 2, the first after 0\.1s/);
    assert.match(facts, /Attempts\s+1\. exit code: 1, ran [\d.]+s, output bytes 0-6\n2\. exit code: 1, ran [\d.]+s, output bytes 6-/);
    assert.match(facts, /Output cap\s+keeps 1\.0 MiB/);
  });

  test('the board: a secret in the output shows masked, and the page counts it', async () => {
    const { home, page } = await fresh();
    // A made-up token of AWS's shape, passed in the environment.
    const key = 'AKIA' + 'Z'.repeat(16);
    const id = run(home, 'echo "key=$KEY done"', ['--env', `KEY=${key}`]);
    waitEnded(home, [id]);
    assert.equal(status(home, id), 'completed');
    await page.getByRole('button', { name: `Open ${id}` }).click();
    await page.locator('#output', { hasText: 'done' }).waitFor();
    assert.equal(await page.locator('#output').textContent(), 'key=[redacted: aws-key]* done\n');
    const facts = await page.locator('#task-facts').innerText();
    assert.match(facts, /Redacted\s+1 secret masked \(1 aws-key\)/);
    const downloaded = await page.evaluate(async (href) => (await fetch(href)).text(),
      `/board/api/log?task=${id}`);
    assert.equal(downloaded, 'key=[redacted: aws-key]* done\n');
  });

  test('the board: the download of a live log stops where redaction has decided', async () => {
    const { home, page } = await fresh();
    // A token still being printed: the log ends inside it, so the redactor
    // cannot tell yet and has not masked it (issue 35, finding 5).
    const token = 'ghp_' + 'Z'.repeat(36);
    const id = run(home, `printf 'start ${token}'; exec sleep 60`);
    await until(`${id} printed`, () => baton(home, ['output', id]).startsWith('start'));
    const downloaded = await page.evaluate(async (href) => (await fetch(href)).text(),
      `/board/api/log?task=${id}`);
    assert.ok(downloaded.startsWith('start'), downloaded);
    assert.ok(!downloaded.includes('ghp_'), `the download showed ${downloaded}`);
    baton(home, ['kill', '--grace', '100ms', id]);
    waitEnded(home, [id]);
    // At its end the token is decided, masked, and downloaded as such.
    const ended = await page.evaluate(async (href) => (await fetch(href)).text(),
      `/board/api/log?task=${id}`);
    assert.equal(ended, 'start [redacted: github-token]' + '*'.repeat(16));
  });

  test('the board: a failed check\'s evidence shows on the task\'s page', async () => {
    const { home, page } = await fresh();
    const folder = mkdtempSync(join(tmpdir(), 'bcheck-'));
    try {
      const id = run(home, 'echo made > made.txt', ['--cwd', folder, '--check', 'echo checking; exit 3']);
      await until(`${id} ended`, () => !['queued', 'running', 'stopping'].includes(status(home, id)));
      await page.getByRole('button', { name: `Open ${id}` }).click();
      const check = page.locator('#checks li');
      await check.waitFor();
      assert.equal(await check.locator('.check-command').textContent(), 'echo checking; exit 3');
      assert.equal(await check.locator('.check-exit').textContent(), 'exit code 3');
      assert.match(await check.locator('.check-tail').textContent(), /checking/);
      assert.match(await page.locator('#changed-files').textContent(), /made\.txt/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('the board: a git folder\'s diff shows in the evidence, as text', async () => {
    const { home, page } = await fresh();
    const folder = mkdtempSync(join(tmpdir(), 'bdiff-'));
    try {
      const git = (...args) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: folder });
      const many = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
      writeFileSync(join(folder, 'kept.txt'), `old line\nsame\n${many}\n`);
      git('init', '-q');
      git('add', '.');
      git('commit', '-qm', 'init');
      const id = run(home, "printf 'new line\\nsame\\n' > kept.txt; seq 1 200 >> kept.txt; echo '<b>bold</b>' > added.html",
        ['--cwd', folder, '--check', 'true']);
      waitEnded(home, [id]);
      assert.equal(status(home, id), 'completed');
      await page.getByRole('button', { name: `Open ${id}` }).click();
      const diff = page.getByLabel('Diff');
      await diff.locator('span.diff-add', { hasText: '+new line' }).waitFor();
      assert.equal(await diff.locator('span.diff-del', { hasText: '-old line' }).count(), 1);
      assert.equal(await diff.locator('span.diff-add', { hasText: '+<b>bold</b>' }).count(), 1);
      assert.equal(await diff.locator('b').count(), 0);
      assert.match(await diff.textContent(), /\+\+\+ b\/added\.html/);
      // A button per file scrolls the diff to it.
      // (The changes of tracked files come first, then the new files.)
      assert.deepEqual(await page.locator('#diff-files button').allTextContents(), ['kept.txt', 'added.html']);
      assert.equal(await diff.evaluate((pre) => pre.scrollTop), 0);
      await page.getByRole('button', { name: 'Jump to added.html' }).click();
      const jumped = await diff.evaluate((pre) => {
        const file = [...pre.querySelectorAll('span.diff-file')].find((s) => s.textContent.includes('b/added.html'));
        const top = file.getBoundingClientRect().top - pre.getBoundingClientRect().top;
        return { scrolled: pre.scrollTop, top, height: pre.clientHeight };
      });
      assert.ok(jumped.scrolled > 0 && jumped.top >= 0 && jumped.top < jumped.height - 20, JSON.stringify(jumped));
      // A task that kept no diff: a 404 that says why.
      const plain = run(home, 'true');
      waitEnded(home, [plain]);
      assert.equal(status(home, plain), 'completed');
      const none = await page.evaluate(async (task) => {
        const response = await fetch(`/board/api/diff?task=${task}`);
        return { status: response.status, body: await response.json() };
      }, plain);
      assert.equal(none.status, 404);
      assert.match(none.body.error.message, /kept no diff/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('the board: two workers\' overlap shows on both tasks\' pages', async () => {
    const { home, page } = await fresh();
    const folder = mkdtempSync(join(tmpdir(), 'bradar-'));
    const stop = join(folder, 'stop');
    try {
      // Workers in worktrees of one repository (doc/conflicts.md): a
      // stand-in `dsh` runs its brief as a script, then waits for `stop`.
      const bin = join(folder, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'dsh'), '#!/bin/sh\nbrief=$(cat)\nexec sh -c "$brief"\n', { mode: 0o755 });
      const repo = join(folder, 'repo');
      mkdirSync(repo);
      const git = (...args) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: repo });
      writeFileSync(join(repo, 'f.txt'), 'a\nb\nc\n');
      git('init', '-q');
      git('add', '.');
      git('commit', '-qm', 'init');
      const worker = (line) => {
        const reply = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'dsh', '--worktree', '--cwd', repo,
          `${line} && while [ ! -e ${stop} ]; do sleep 0.05; done`], { PATH: `${bin}:${process.env.PATH}` }));
        return (reply.task ?? reply).id;
      };
      const first = worker("sed -i 's/^a$/A1/' f.txt");
      const second = worker("sed -i 's/^a$/A2/' f.txt");
      for (const [id, other] of [[first, second], [second, first]]) {
        await fresh();
        await page.getByRole('button', { name: `Open ${id}` }).click();
        // The page looks again when the radar's overlaps move.
        await page.locator('#conflicts li', { hasText: 'textual conflict' }).waitFor();
        assert.deepEqual(await page.locator('#conflicts li').allTextContents(),
          [`${other}: textual conflict in f.txt (both changed f.txt)`]);
      }
      writeFileSync(stop, '');
      waitEnded(home, [first, second]);
    } finally {
      writeFileSync(stop, '');
      rmSync(folder, { recursive: true, force: true });
    }
  });

  // A question's agent: the fake Claude Code asks "Which database?"
  // (SQLite, embedded; Postgres, server) and waits for the answer.
  function asker(home, label = 'asks') {
    const fakes = new URL('../agents/fakes', import.meta.url).pathname;
    const reply = JSON.parse(baton(home, ['--json', 'delegate', '--agent', 'claude', '--cwd', home,
      '--label', label, 'please ASK me'], { PATH: `${fakes}:${process.env.PATH}` }));
    return (reply.task ?? reply).id;
  }

  test('the board: the list is one grid, its columns aligned across groups, nothing wraps', async () => {
    const { home, page } = await fresh();
    await page.setViewportSize({ width: 1280, height: 800 });
    const waiting = asker(home);
    const running = run(home, 'sleep 300', ['--label', 'a-label-long-enough-to-be-cut-by-its-column']);
    const ended = run(home, 'echo done');
    try {
      await until(`${waiting} asks`, () => status(home, waiting) === 'waiting');
      await page.locator(`#needs-input tr[data-task="${waiting}"]`).waitFor();
      await page.locator(`#running tr[data-task="${running}"] td.c-status`, { hasText: 'running' }).waitFor();
      await page.locator(`#ended tr[data-task="${ended}"]`).waitFor();
      // Column headers, once, over the three groups.
      assert.deepEqual(await page.locator('#tasks thead th').allTextContents(),
        ['Task', 'Status', 'Label', 'Command or brief', 'Agent', 'Started', 'Time', 'Output']);
      // Each column's cells have one x and one width in every group.
      const boxes = await page.evaluate((ids) => ids.map((id) =>
        [...document.querySelector(`tr[data-task="${id}"]`).cells].map((td) => {
          const r = td.getBoundingClientRect();
          return { x: Math.round(r.x), width: Math.round(r.width), height: r.height, wraps: td.scrollHeight > td.clientHeight + 1 };
        })), [waiting, running, ended]);
      assert.equal(boxes[0].length, 8);
      for (const group of boxes.slice(1)) {
        assert.deepEqual(group.map((b) => [b.x, b.width]), boxes[0].map((b) => [b.x, b.width]));
      }
      // No cell wraps: every row is one line high, the same in each group.
      const heights = boxes.flat().map((b) => b.height);
      assert.ok(Math.max(...heights) - Math.min(...heights) < 1 && heights[0] < 40, `a cell wraps: heights ${heights}`);
      assert.deepEqual(boxes.flat().filter((b) => b.wraps), []);
      // A long label is cut with an ellipsis, whole in its title.
      const label = page.locator(`tr[data-task="${running}"] td.c-label`);
      assert.equal(await label.evaluate((td) => getComputedStyle(td).textOverflow), 'ellipsis');
      assert.equal(await label.evaluate((td) => td.scrollWidth > td.clientWidth), true);
      assert.equal(await label.getAttribute('title'), 'a-label-long-enough-to-be-cut-by-its-column');
      // Times: local, 24 h, the whole stamp on hover.
      const started = page.locator(`tr[data-task="${ended}"] td.c-started time`);
      assert.match(await started.textContent(), /^\d\d:\d\d:\d\d$/);
      assert.match(await started.getAttribute('title'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} local \(.*Z UTC\)$/);
      assert.match(await page.locator(`tr[data-task="${ended}"] td.c-time`).textContent(), /^\d+\.\ds$/);
      // The agent's row says its turn and tokens.
      assert.match(await page.locator(`tr[data-task="${waiting}"] td.c-agent`).textContent(), /^claude.* · turn \d+ · [\d.]+k? tok/);
      // A running task's time ticks, without a change at batond.
      const clock = page.locator(`tr[data-task="${running}"] td.c-time`);
      const before = await clock.textContent();
      assert.match(before, /^\d+s$/);
      await page.waitForFunction(([id, was]) =>
        document.querySelector(`tr[data-task="${id}"] td.c-time`).textContent !== was, [running, before]);
      // Newer and Older look disabled when they are.
      const newer = page.locator('#newer');
      assert.equal(await newer.isDisabled(), true);
      const looks = await page.evaluate(() => {
        const style = (node) => getComputedStyle(node);
        const open = document.querySelector('#tasks tbody button');
        return { newer: [style(document.getElementById('newer')).color, style(document.getElementById('newer')).opacity],
          open: [style(open).color, style(open).opacity], cursor: style(document.getElementById('newer')).cursor };
      });
      assert.notDeepEqual(looks.newer, looks.open);
      assert.equal(looks.cursor, 'not-allowed');
    } finally {
      baton(home, ['kill', running, waiting]);
    }
  });

  test('the board: a running row\'s output size moves on the list as it prints', async () => {
    const { home, page } = await fresh();
    const gates = mkdtempSync(join(tmpdir(), 'bgate-'));
    try {
      const id = run(home, `echo 12345678; while [ ! -e ${gates}/a ]; do sleep 0.05; done; ` +
        `echo 1234567890123456789; while [ ! -e ${gates}/b ]; do sleep 0.05; done`);
      const size = page.locator(`#running tr[data-task="${id}"] td.c-output`);
      await size.filter({ hasText: /^9 B$/ }).waitFor();
      await page.evaluate(() => { window.notReloaded = true; });
      writeFileSync(join(gates, 'a'), '');
      // No change at batond (the task still runs): the log's growth alone.
      await size.filter({ hasText: /^29 B$/ }).waitFor();
      assert.equal(status(home, id), 'running');
      assert.equal(await page.evaluate(() => window.notReloaded), true);
      writeFileSync(join(gates, 'b'), '');
      waitEnded(home, [id]);
      // A stream that names no task is refused.
      const refused = await page.evaluate(async () => (await fetch('/board/api/output/sizes')).status);
      assert.equal(refused, 400);
    } finally {
      rmSync(gates, { recursive: true, force: true });
    }
  });

  test('the board: at phone width the list reflows, no sideways scroll', async () => {
    const { home, page } = await fresh();
    const id = run(home, `echo ${'x'.repeat(300)}`, ['--label', 'phone-width']);
    try {
      await page.setViewportSize({ width: 390, height: 800 });
      await page.locator(`#ended tr[data-task="${id}"]`).waitFor();
      await page.locator('#new-task summary').click();
      await page.locator('#new-agent summary').click();
      const widths = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
      assert.ok(widths[0] <= widths[1], `the list is ${widths[0]} px wide in ${widths[1]}`);
      // The id, status and time stay; the command goes under them.
      const cells = await page.evaluate((id) => [...document.querySelector(`tr[data-task="${id}"]`).cells]
        .filter((td) => getComputedStyle(td).display !== 'none').map((td) => td.className.split(' ')[0]), id);
      assert.deepEqual(cells, ['c-id', 'c-status', 'c-what', 'c-time']);
      await page.getByRole('button', { name: `Open ${id}` }).click();
      await page.locator('#output', { hasText: 'xxx' }).waitFor();
      const task = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
      assert.ok(task[0] <= task[1], `the task page is ${task[0]} px wide in ${task[1]}`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });

  test('the board: the header counts stay live on a task\'s page', async () => {
    const { home, page } = await fresh();
    const counts = async () => {
      const text = await page.locator('#counts').textContent();
      const [, running, killed] = text.match(/^(\d+) running .* (\d+) killed$/);
      return { running: Number(running), killed: Number(killed) };
    };
    const sleeper = run(home, 'sleep 300');
    await page.getByRole('button', { name: `Open ${sleeper}` }).click();
    await page.locator('#task-title', { hasText: 'running' }).waitFor();
    const before = await counts();
    // A task started elsewhere counts while this page shows another.
    const other = run(home, 'sleep 300');
    try {
      await until('the running count to grow', async () => (await counts()).running === before.running + 1);
      await page.getByRole('button', { name: 'Kill' }).click();
      await until('the counts to show the kill', async () => {
        const now = await counts();
        return now.running === before.running && now.killed === before.killed + 1;
      });
    } finally {
      baton(home, ['kill', sleeper, other]);
    }
  });

  test('the board: Run again starts an ended task as a new one; Remove takes it and its output away', async () => {
    const { home, page } = await fresh();
    const first = run(home, 'echo again-and-again', ['--label', 'twice']);
    waitEnded(home, [first]);
    await page.getByRole('button', { name: `Open ${first}` }).click();
    await page.locator('#task-title', { hasText: 'completed' }).waitFor();
    assert.equal(await page.locator('#kill-form').isHidden(), true);
    await page.getByRole('button', { name: 'Run again' }).click();
    const started = page.locator('#ended-feedback', { hasText: `Started ${first} again as ` });
    await started.waitFor();
    const second = (await started.textContent()).match(/again as (shell-\d+)/)[1];
    assert.notEqual(second, first);
    waitEnded(home, [second]);
    assert.equal(task(home, second).rerun_of, first);
    assert.equal(task(home, second).label, 'twice');
    // Remove asks first; dismissed, nothing goes.
    page.once('dialog', (dialog) => dialog.dismiss());
    await page.getByRole('button', { name: 'Remove' }).click();
    assert.equal(status(home, first), 'completed');
    const folder = task(home, first).output_path.replace(/\/[^/]*$/, '');
    page.once('dialog', (dialog) => {
      assert.match(dialog.message(), new RegExp(`Remove ${first} and its output`));
      dialog.accept();
    });
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.locator('#message', { hasText: `Removed ${first}, with its output` }).waitFor();
    await page.getByRole('button', { name: `Open ${second}` }).waitFor();
    assert.equal(await page.getByRole('button', { name: `Open ${first}`, exact: true }).count(), 0);
    assert.equal(existsSync(folder), false);
    const removed = spawnSync(BATON, ['--json', 'status', first], { env: batonEnv(home), encoding: 'utf8' });
    assert.notEqual(removed.status, 0);
    assert.match(removed.stdout + removed.stderr, /no task/);
  });

  test('the board: an action\'s feedback shows next to its button, in view', async () => {
    const { home, page } = await fresh();
    // A long list: the bottom of the page is far below the Start button.
    const ids = [];
    for (let i = 0; i < 30; i++) ids.push(run(home, 'true', ['--label', 'long-list']));
    waitEnded(home, ids);
    await page.setViewportSize({ width: 1280, height: 600 });
    try {
      await page.locator(`#ended tr[data-task="${ids[29]}"]`).waitFor();
      const inView = (locator) => locator.evaluate((node) => {
        const r = node.getBoundingClientRect();
        return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight;
      });
      await page.locator('#new-task summary').click();
      await page.getByLabel('Command').fill('echo started-from-the-board');
      await page.getByRole('textbox', { name: 'Folder', exact: true }).fill(home);
      await page.getByRole('button', { name: 'Start' }).click();
      const said = page.locator('#run-feedback', { hasText: /^Started shell-\d+/ });
      await said.waitFor();
      assert.equal(await inView(said), true);
      // Its Open button opens the task it started.
      const id = (await said.textContent()).match(/shell-\d+/)[0];
      await said.getByRole('button', { name: `Show ${id}` }).click();
      await page.locator('#output', { hasText: 'started-from-the-board' }).waitFor();
      await page.getByRole('button', { name: 'Back to all tasks' }).click();
      // An error too.
      await page.getByRole('textbox', { name: 'Folder', exact: true }).fill('relative/folder');
      await page.getByRole('button', { name: 'Start' }).click();
      const error = page.locator('#run-feedback.error', { hasText: /cwd|absolute/ });
      await error.waitFor();
      assert.equal(await inView(error), true);
      // A kill's on its task's page.
      const sleeper = run(home, 'sleep 300');
      await page.getByRole('button', { name: `Open ${sleeper}` }).click();
      await page.locator('#task-title', { hasText: 'running' }).waitFor();
      await page.getByRole('button', { name: 'Kill' }).click();
      const killed = page.locator('#kill-feedback', { hasText: `Kill sent to ${sleeper}` });
      await killed.waitFor();
      assert.equal(await inView(killed), true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });

  test('the board: the new task forms start from a folder and the agents batond knows', async () => {
    const { home, page } = await fresh();
    await page.evaluate(() => localStorage.removeItem('baton.cwd'));
    await fresh();
    // baton serve runs in this test's folder (startServe keeps the cwd).
    await page.locator('#run-cwd-hint', { hasText: 'where baton serve runs' }).waitFor({ state: 'attached' });
    assert.equal(await page.locator('#run-cwd').inputValue(), process.cwd());
    assert.equal(await page.locator('#delegate-cwd').inputValue(), process.cwd());
    const agents = await page.locator('#delegate-agent option').evaluateAll((options) => options.map((o) => o.value));
    assert.ok(agents.includes('claude') && agents.includes('codex'), agents.join(' '));
    const listed = JSON.parse(baton(home, ['--json', 'agents']));
    assert.equal(await page.locator('#delegate-agent').inputValue(), listed.default_agent);
    // The folder last used is the next default.
    await page.locator('#new-task summary').click();
    await page.getByLabel('Command').fill('true');
    await page.getByRole('textbox', { name: 'Folder', exact: true }).fill(home);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.locator('#run-feedback', { hasText: /^Started/ }).waitFor();
    await fresh();
    await page.locator('#run-cwd-hint', { hasText: 'the last one used here' }).waitFor({ state: 'attached' });
    assert.equal(await page.locator('#run-cwd').inputValue(), home);
    // A label stands apart from its field.
    const gap = await page.locator('label', { has: page.locator('#run-command') })
      .evaluate((label) => parseFloat(getComputedStyle(label).columnGap));
    assert.ok(gap >= 4, `gap ${gap}`);
    await page.evaluate(() => localStorage.removeItem('baton.cwd'));
  });

  test('the board: a count in the title, notifications when asked for, an answer in words, keys', async () => {
    const { home, serve } = board;
    // Its own browser context: Notification is stubbed to record what the
    // page does with it (the test's Chromium shows none).
    const context = await board.browser.newContext();
    await context.addInitScript(() => {
      window.__notes = [];
      window.__asked = 0;
      window.Notification = class {
        static permission = 'default';
        static async requestPermission() {
          window.__asked += 1;
          window.Notification.permission = 'granted';
          return 'granted';
        }
        constructor(title, options) { window.__notes.push({ title, body: options?.body }); }
      };
    });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    try {
      await page.goto(serve.newLogin());
      await page.locator('#live', { hasText: /^live$/ }).waitFor();
      await page.locator('#counts', { hasText: /running/ }).waitFor();
      const needInput = Number((await page.locator('#counts').textContent()).match(/(\d+) need input/)[1]);
      const title = (n) => (n ? `(${n}) baton` : 'baton');
      await page.waitForFunction((t) => document.title === t, title(needInput));
      // Never a prompt on load: only the button asks.
      assert.equal(await page.evaluate(() => window.__asked), 0);
      await page.getByRole('button', { name: 'Notify me' }).click();
      await page.getByRole('button', { name: 'Notifications on' }).waitFor();
      assert.equal(await page.evaluate(() => window.__asked), 1);

      const failed = run(home, 'echo broken; exit 3');
      await page.waitForFunction((t) => document.title === t, title(needInput + 1));
      const waiting = asker(home, 'title-count');
      await page.waitForFunction((t) => document.title === t, title(needInput + 2));
      const notes = await page.evaluate(() => window.__notes);
      assert.ok(notes.some((n) => n.title === `${failed} failed` && /exit code: 3/.test(n.body)), JSON.stringify(notes));
      assert.ok(notes.some((n) => n.title === `${waiting} needs input` && n.body === 'Which database?'), JSON.stringify(notes));
      // Opened, a failure is seen.
      await page.getByRole('button', { name: `Open ${failed}` }).click();
      await page.locator('#output', { hasText: 'broken' }).waitFor();
      await page.waitForFunction((t) => document.title === t, title(needInput + 1));

      // Keys: Escape goes back, to the task's row, selected; j and k move
      // the selection; Enter opens.
      await page.keyboard.press('Escape');
      await page.locator(`#tasks tbody tr.selected[data-task="${failed}"]`).waitFor();
      const ids = () => page.locator('#tasks tbody tr[data-task]').evaluateAll((rows) => rows.map((r) => r.dataset.task));
      const selected = () => page.locator('#tasks tbody tr.selected').getAttribute('data-task');
      const at = (await ids()).indexOf(failed);
      await page.keyboard.press('j');
      assert.equal(await selected(), (await ids())[at + 1]);
      await page.keyboard.press('k');
      await page.keyboard.press('k');
      assert.equal(await selected(), (await ids())[at - 1]);
      await page.keyboard.press('j');
      assert.equal(await selected(), failed);
      // The selection has the focus: Enter opens it.
      await page.keyboard.press('Enter');
      await page.waitForFunction((id) => location.hash === `#task=${id}`, failed);
      // The page follows the address (hashchange): Escape once it shows.
      await page.locator('#task-view').waitFor();
      await page.keyboard.press('Escape');
      await page.locator('#list-view').waitFor();

      // The question: its options with their descriptions; a goes to the
      // answer box.
      await page.getByRole('button', { name: `Open ${waiting}` }).click();
      const postgres = page.locator('#questions button.option', { hasText: 'Postgres' });
      await postgres.waitFor();
      assert.equal(await postgres.locator('small').textContent(), 'server');
      await page.keyboard.press('a');
      assert.equal(await page.evaluate(() => document.activeElement.matches('#questions input')), true);
      await page.keyboard.press('Escape');
      await postgres.click();
      const answered = page.locator('#answer-feedback', { hasText: `Answered ${waiting}: Postgres` });
      await answered.waitFor();
      // The answer reads as words, in the transcript and the history.
      await page.locator('#transcript li[data-type="answer"]', { hasText: '= answered: Postgres' }).waitFor();
      await page.locator('#audit li', { hasText: /answer by board .*: question \d+: Postgres$/ }).waitFor();
      for (const part of ['#transcript', '#audit']) {
        assert.doesNotMatch(await page.locator(part).textContent(), /\[\["Postgres"\]\]/);
      }
      await page.waitForFunction((t) => document.title === t, title(needInput));
    } finally {
      await context.close();
    }
  });

  test('the board: a filtered list still tells of a task that needs input when another stopped waiting meanwhile', async () => {
    const { home, serve } = board;
    const context = await board.browser.newContext();
    await context.addInitScript(() => {
      window.__notes = [];
      window.Notification = class {
        static permission = 'granted';
        static async requestPermission() { return 'granted'; }
        constructor(title, options) { window.__notes.push({ title, body: options?.body }); }
      };
      localStorage.setItem('baton.notify', 'on');
    });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    const first = asker(home, 'filtered-first');
    let second;
    try {
      await until(`${first} asks`, () => status(home, first) === 'waiting');
      await page.goto(serve.newLogin());
      await page.locator('#live', { hasText: /^live$/ }).waitFor();
      // Shell tasks only: the agents that ask are not in the list.
      await page.locator('#filter-kind').selectOption('shell');
      await page.waitForFunction(() => /(\d+) need input/.test(document.querySelector('#counts').textContent));
      const needInput = Number((await page.locator('#counts').textContent()).match(/(\d+) need input/)[1]);
      assert.ok(needInput >= 1);
      await page.waitForFunction((t) => document.title === t, `(${needInput}) baton`);
      // The list's reads wait while one task stops asking and another asks:
      // the refreshes that follow see the same count as before.
      let release;
      const gate = new Promise((resolve) => { release = resolve; });
      const lists = (url) => url.pathname === '/board/api/tasks';
      await page.route(lists, async (route) => { await gate; await route.continue(); });
      baton(home, ['kill', first]);
      second = asker(home, 'filtered-second');
      await until(`${second} asks`, () => status(home, second) === 'waiting');
      await until(`${first} ended`, () => !['waiting', 'stopping'].includes(status(home, first)));
      release();
      await page.waitForFunction((id) => window.__notes.some((n) => n.title === `${id} needs input`), second);
      await page.waitForFunction((t) => document.title === t, `(${needInput}) baton`);
      await page.unroute(lists);
    } finally {
      await context.close();
      try { baton(home, ['kill', first, ...(second ? [second] : [])]); } catch { /* Ended already. */ }
    }
  });

  test('the board: without the cookie, a page that says how to sign in; a favicon, no 404', async () => {
    const { serve, page } = await fresh();
    const context = await board.browser.newContext();
    try {
      const stranger = await context.newPage();
      const response = await stranger.goto(`${serve.base}/`);
      assert.equal(response.status(), 401);
      assert.match(response.headers()['content-type'], /^text\/html/);
      assert.equal(await stranger.locator('h1').textContent(), 'baton board: sign in');
      assert.equal(await stranger.locator('pre').textContent(), 'baton board');
      assert.match(await stranger.locator('body').textContent(), /not signed in/);
      // The API keeps its JSON for the page's fetch calls.
      const api = await fetch(`${serve.base}/board/api/tasks`);
      assert.equal(api.status, 401);
      assert.match((await api.json()).error.message, /baton board/);
    } finally {
      await context.close();
    }
    // A load asks for nothing that is not there: the icon is in the page.
    const failures = [];
    const listen = (r) => { if (r.status() >= 400) failures.push(`${r.status()} ${r.url()}`); };
    page.on('response', listen);
    await fresh();
    await page.waitForLoadState('load');
    await new Promise((resolve) => setTimeout(resolve, 500));  // Nothing more comes.
    page.off('response', listen);
    assert.deepEqual(failures, []);
    assert.match(await page.locator('link[rel="icon"]').getAttribute('href'), /^data:image\/svg\+xml,/);
  });

  // Last: it adds a page of tasks to the shared history.
  test('the board: batond pages the history, filtered, the most recent end first', async () => {
    const { home, page } = await fresh();
    const ids = [];
    for (let i = 0; i < 55; i++) ids.push(run(home, 'true', ['--label', 'pages']));
    waitEnded(home, ids);
    for (const id of ids) assert.equal(status(home, id), 'completed');
    await page.getByLabel('Filter by label').selectOption('pages');
    await page.locator('#count-ended', { hasText: '(55)' }).waitFor();
    await page.locator('#page', { hasText: 'page 1 of 2' }).waitFor();
    assert.equal(await page.locator('#ended tr[data-task]').count(), 50);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.locator('#page', { hasText: 'page 2 of 2' }).waitFor();
    const older = await page.locator('#ended tr[data-task]').evaluateAll((rows) => rows.map((r) => r.dataset.task));
    // The five that ended first; in one millisecond, the first created.
    const number = (id) => Number(id.split('-')[1]);
    const byEnd = ids.map((id) => task(home, id))
      .sort((a, b) => a.ended_at.localeCompare(b.ended_at) || number(a.id) - number(b.id))
      .map((t) => t.id);
    assert.deepEqual(older, byEnd.slice(0, 5).reverse());
    // A page past the end answers the last one.
    const last = await page.evaluate(async () => (await fetch('/board/api/tasks?label=pages&page=99')).json());
    assert.equal(last.page, 1);
    assert.equal(last.pages, 2);
    assert.equal(last.ended_total, 55);
    assert.deepEqual(last.ended.map((t) => t.id), byEnd.slice(0, 5).reverse());
    assert.ok(last.labels.includes('pages'));
  });
});
