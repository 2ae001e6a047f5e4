// The board's page (doc/board.md). Vanilla JavaScript, no framework: it
// reads /board/api/*, listens to /board/api/events (pushed by batond's
// changes; nothing is polled) and sends actions as JSON POSTs. Everything a
// task wrote or was given (output, labels, commands, questions) goes into
// the page with textContent, never as markup (colours: ansi.js).
"use strict";

// What one output read brings at most (the server's chunk, 64 KiB).
const OUTPUT_CHUNK = 64 * 1024;
// What a page following a log keeps: the oldest reads go past it (and
// become "earlier" again).
const OUTPUT_KEEP = 16 * OUTPUT_CHUNK;

const state = {
  page: 0, // Of the ended tasks.
  task: null, // The id of the task shown, or null for the list.
  view: null, // Its last task object.
  chunks: [], // Its output read so far: [{from, to, text}], in order.
  size: -1, // The output's size as last told: the page reads up to it.
  outputEvents: null, // The EventSource that tells the size of a live log.
  following: false,
  followAgain: false,
  refreshing: false,
  again: false,
  transcript: { task: null, events: [] }, // An agent's events read so far.
  selected: null, // The id of the list's row the keys move, or null.
  afterRoute: null, // What to say once the next page shows (a removal).
};

const $ = (id) => document.getElementById(id);

function el(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

// What the page could not do on its own (a refresh that failed): the line
// under the header. An action's answer goes next to its button instead
// (act).
function say(text, isError) {
  const message = $("message");
  message.textContent = text;
  message.className = isError ? "error" : "";
  message.hidden = !text;
}

// A GET, or a POST of `body` as JSON. Resolves to the parsed answer; a
// refusal or a batond error rejects with its message.
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    throw new Error(`${path}: HTTP ${response.status}`);
  }
  if (!response.ok) {
    const error = data && data.error;
    throw new Error(error ? error.message : `${path}: HTTP ${response.status}`);
  }
  return data;
}

function bytes(n) {
  if (n === undefined || n === null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GiB`;
}

const pad = (n, width = 2) => String(n).padStart(width, "0");

// Every duration the page shows: "0.4s" (under 10 s, to the tenth; `whole`:
// in whole seconds, for a clock that ticks), "42s", "1m 05s", "2h 03m",
// "3d 04h".
function duration(ms, whole) {
  if (ms === undefined || ms === null) return "";
  ms = Math.max(0, ms);
  if (ms < 10000 && !whole) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${pad(Math.floor((s % 86400) / 3600))}h`;
}

// Every time the page shows, in local time, 24 h: "14:03:07" today,
// "2026-12-05 14:03" before; its <time> element's title has the whole
// local time to the millisecond and the UTC one.
function stamp(date, ms) {
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return ms ? `${day} ${time}.${pad(date.getMilliseconds(), 3)}` : `${day} ${time}`;
}

function shortTime(date) {
  const full = stamp(date, false);
  return full.slice(0, 10) === stamp(new Date(), false).slice(0, 10) ? full.slice(11) : full.slice(0, 16);
}

function timeNode(value) {
  if (value === undefined || value === null || value === "") return "";
  const date = new Date(value);
  if (isNaN(date)) return String(value);
  return el("time", shortTime(date), {
    datetime: date.toISOString(),
    title: `${stamp(date, true)} local (${date.toISOString()} UTC)`,
  });
}

function when(value) {
  if (!value) return "";
  const date = new Date(value);
  return isNaN(date) ? String(value) : shortTime(date);
}

const LIVE = ["running", "waiting", "stopping"];

// A clock cell: the time since `since` (a started task's), ticked each
// second by tick().
function clock(node, since) {
  node.dataset.since = String(since);
  node.textContent = duration(Date.now() - since, true);
  return node;
}

function tick() {
  const now = Date.now();
  for (const node of document.querySelectorAll("[data-since]")) {
    node.textContent = duration(now - Number(node.dataset.since), true);
  }
}

// A count of tokens as people read it: 950, 12.3k, 4.1M.
function tokens(n) {
  if (n < 1000) return String(n);
  if (n < 1000000) return `${(n / 1000).toFixed(n < 10000 ? 1 : 0)}k`;
  return `${(n / 1000000).toFixed(1)}M`;
}

// An agent task's row: its profile (and model), its turn, tokens and cost
// once the CLI reported them.
function agentText(task) {
  if (!task.agent) return "";
  const parts = [task.agent.model ? `${task.agent.profile} ${task.agent.model}` : task.agent.profile];
  const usage = task.usage;
  if (usage) {
    parts.push(`turn ${usage.turns}`, `${tokens(usage.input_tokens + usage.output_tokens)} tok`);
    if (usage.cost_usd !== undefined) parts.push(`$${usage.cost_usd.toFixed(2)}`);
  }
  return parts.join(" · ");
}

function what(task) {
  if (task.agent && task.agent.brief) return task.agent.brief;
  return task.command || "";
}

function shorten(text, max) {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function statusText(task) {
  return task.detail ? `${task.status} (${task.detail})` : task.status;
}

// A row's status: its detail when that says what went wrong ("failed
// (exit code: 3)", "killed: not needed"), not for a task that completed
// (the whole status is the cell's title, and on the task's page).
function rowStatus(task) {
  const detail = task.detail || "";
  if (!detail || task.status === "completed") return task.status;
  return detail.startsWith(`${task.status}:`) ? detail : `${task.status} (${detail})`;
}

function row(task) {
  const tr = el("tr", null, { "data-task": task.id });
  if (task.id === state.selected) tr.classList.add("selected");
  const open = el("button", task.id, { type: "button", "aria-label": `Open ${task.id}` });
  open.addEventListener("click", () => show(task.id));
  const cell = (name, text, title) => {
    const td = el("td", text, { class: name });
    if (title) td.title = title;
    tr.append(td);
    return td;
  };
  cell("c-id").append(open);
  cell(`c-status status status-${task.status}`, rowStatus(task), statusText(task));
  cell("c-label", task.label || "", task.label);
  cell("c-what", shorten(what(task), 300), what(task));
  cell("c-agent", agentText(task), agentText(task));
  cell("c-started").append(timeNode(task.started_at || task.created_at));
  const time = cell("c-time");
  if (LIVE.includes(task.status) && task.started_at) clock(time, Date.parse(task.started_at));
  else if (task.status === "queued") time.append(el("span", "queued", { class: "muted" }));
  else time.textContent = duration(task.duration_ms);
  // The size its log's stream told, when that is more than the list's.
  cell("c-output", bytes(Math.max(task.output_bytes || 0, sizes.told.get(task.id) || 0)));
  return tr;
}

// Puts `tasks` in `tbody`; the row that had the keyboard's focus gets it
// back (a change re-renders the list).
function fill(tbody, tasks) {
  const focused = document.activeElement && document.activeElement.closest
    ? document.activeElement.closest("tr[data-task]") : null;
  tbody.replaceChildren(...tasks.map(row));
  if (focused && !focused.isConnected) {
    const again = tbody.querySelector(`tr[data-task="${CSS.escape(focused.dataset.task)}"] button`);
    if (again) again.focus({ preventScroll: true });
  }
}

// The list's query: its page and the filters set. The session filter's
// values are "unowned" and "owner:NAME", so no session's name is taken for
// the choice of none.
function listQuery() {
  const query = new URLSearchParams({ page: state.page });
  const session = $("filter-session").value;
  if (session === "unowned") query.set("unowned", "1");
  else if (session.startsWith("owner:")) query.set("owner", session.slice("owner:".length));
  const filters = { kind: "filter-kind", status: "filter-status", label: "filter-label", q: "filter-search" };
  for (const [name, id] of Object.entries(filters)) {
    if ($(id).value) query.set(name, $(id).value);
  }
  return query;
}

// A filter's select offers every name there is (and keeps the one chosen):
// its fixed options first ("all", ...), then an option per name, valued
// `prefix` + name.
function fillChoices(select, names, prefix = "") {
  const chosen = select.value;
  // Unchanged: left alone (a list the user has open stays open).
  if (select.dataset.names === JSON.stringify(names)) return;
  select.dataset.names = JSON.stringify(names);
  if (!select.dataset.fixed) select.dataset.fixed = select.querySelectorAll("option").length;
  const fixed = [...select.querySelectorAll("option")].slice(0, Number(select.dataset.fixed));
  const values = names.map((name) => prefix + name);
  const kept = fixed.some((option) => option.value === chosen) || values.includes(chosen);
  const options = names.map((name) => el("option", name, { value: prefix + name }));
  if (!kept) options.push(el("option", chosen.slice(prefix.length), { value: chosen }));
  select.replaceChildren(...fixed, ...options);
  select.value = chosen;
}

async function refreshList() {
  const query = listQuery();
  const list = await api(`/board/api/tasks?${query}`);
  if (state.task !== null) return;  // A task was opened meanwhile.
  // Unfiltered, its groups name every task that waits.
  const unfiltered = [...query.keys()].every((name) => name === "page");
  const alerted = renderCounts(list, unfiltered ? list.needs_input : null);
  fill($("needs-input"), list.needs_input);
  fill($("running"), list.running);
  fill($("ended"), list.ended);
  fillChoices($("filter-label"), list.labels || []);
  fillChoices($("filter-session"), list.owners || [], "owner:");
  $("count-needs").textContent = `(${list.needs_input.length})`;
  $("count-running").textContent = `(${list.running.length})`;
  $("count-ended").textContent = `(${list.ended_total})`;
  state.page = list.page;
  $("page").textContent = `page ${list.page + 1} of ${list.pages}`;
  $("newer").disabled = list.page === 0;
  $("older").disabled = list.page + 1 >= list.pages;
  followSizes([...list.needs_input, ...list.running]);
  await alerted;
}

// The list's live rows' output sizes, as their logs grow: one stream for
// them all (GET /board/api/output/sizes, pushed by the board's inotify
// watches; nothing is polled), opened again when the live rows change.
const SIZES_MAX = 200;
let sizes = { key: "", source: null, told: new Map() };

function followSizes(tasks) {
  const ids = tasks.filter((task) => task.started_at).slice(0, SIZES_MAX).map((task) => task.id);
  const key = ids.join(",");
  if (key === sizes.key && sizes.source) return;
  closeSizes();
  if (!ids.length) return;
  const source = new EventSource(`/board/api/output/sizes?tasks=${encodeURIComponent(key)}`);
  source.onmessage = (event) => {
    const { task, size } = JSON.parse(event.data);
    sizes.told.set(task, size);
    const cell = document.querySelector(`#tasks tr[data-task="${CSS.escape(task)}"] td.c-output`);
    if (cell) cell.textContent = bytes(size);
  };
  sizes = { key, source, told: sizes.told };
}

function closeSizes() {
  if (sizes.source) sizes.source.close();
  sizes = { key: "", source: null, told: new Map() };
}

// What the person should look at: the tasks that wait on a question, and
// those that failed since this page opened and that they have not opened.
// Their count is in the tab's title ("(2) baton"); each new one is a
// browser notification, once the person asked for them (the Notify me
// button: the page never asks on its own).
const alerts = {
  started: Date.now(),
  known: false, // The first counts are the baseline: nothing is new in them.
  waiting: new Set(), // Ids that wait, as last seen.
  failed: new Set(), // Ids that failed since the page opened, told already.
  unseen: new Set(), // Of those, the ones not opened since.
  failedToday: 0,
  needInput: 0,
};

function renderCounts(list, waiting) {
  $("counts").textContent =
    `${list.running_count} running · ${list.need_input_count} need input · ` +
    `${list.queued_count} queued · ended today: ${list.completed_today} completed / ` +
    `${list.failed_today} failed / ${list.killed_today} killed`;
  return noteAlerts(list, waiting).catch(() => {}).finally(renderTitle);
}

function renderTitle() {
  const count = alerts.needInput + alerts.unseen.size;
  document.title = count ? `(${count}) baton` : "baton";
}

// `waiting`: the tasks that wait now, when the caller has them all; else
// a filtered list's own when it holds as many as wait (then they are all),
// else they are read. Not only when their count moved: refreshes coalesce,
// so one task answered and another asking between two of them leave the
// count as it was, and the new one would never be told.
async function noteAlerts(list, waiting) {
  const first = !alerts.known;
  const moreFailed = list.failed_today > alerts.failedToday;
  alerts.needInput = list.need_input_count;
  alerts.failedToday = list.failed_today;
  alerts.known = true;
  if (!waiting && list.needs_input && list.needs_input.length === list.need_input_count) {
    waiting = list.needs_input;
  }
  if (!waiting && list.need_input_count > 0) {
    waiting = (await api("/board/api/tasks?page=0&status=waiting")).needs_input;
  }
  if (waiting || list.need_input_count === 0) {
    const now = new Set((waiting || []).map((task) => task.id));
    for (const task of waiting || []) {
      if (!alerts.waiting.has(task.id) && !first) {
        const question = (task.questions || [])[0];
        const item = question && question.items && question.items[0];
        notify(task.id, `${task.id} needs input`, (item && (item.prompt || item.header)) || what(task));
      }
    }
    alerts.waiting = now;
  }
  if (moreFailed && !first) {
    const failed = (await api("/board/api/tasks?page=0&status=failed")).ended;
    for (const task of failed) {
      if (alerts.failed.has(task.id) || Date.parse(task.ended_at) < alerts.started - 1000) continue;
      alerts.failed.add(task.id);
      if (task.id !== state.task) alerts.unseen.add(task.id);
      notify(task.id, `${task.id} failed`, `${statusText(task)}: ${shorten(what(task), 120)}`);
    }
  }
}

const NOTIFY_KEY = "baton.notify";

function notifying() {
  return "Notification" in window && Notification.permission === "granted" &&
    localStorage.getItem(NOTIFY_KEY) === "on";
}

function notify(id, title, body) {
  if (!notifying()) return;
  const note = new Notification(title, { body, tag: id });
  note.onclick = () => {
    window.focus();
    show(id);
  };
}

// The Notify me button: asks for the permission when clicked, and turns
// the notifications on or off.
function setupNotify() {
  const button = $("notify");
  if (!("Notification" in window)) return;
  const render = () => {
    button.hidden = Notification.permission === "denied";
    button.textContent = notifying() ? "Notifications on" : "Notify me";
    button.setAttribute("aria-pressed", String(notifying()));
  };
  button.addEventListener("click", async () => {
    if (notifying()) {
      localStorage.setItem(NOTIFY_KEY, "off");
    } else {
      const permission = Notification.permission === "granted"
        ? "granted" : await Notification.requestPermission();
      if (permission === "granted") localStorage.setItem(NOTIFY_KEY, "on");
    }
    render();
  });
  render();
}

// A fact of a task's page: its value is text or a node (a <time>).
function fact(dl, name, value, key) {
  if (value === undefined || value === null || value === "") return null;
  const dd = el("dd");
  dd.append(value);
  if (key) dd.dataset.fact = key;
  dl.append(el("dt", name), dd);
  return dd;
}

// An agent's usage and budget, as `baton status` words them.
function usageText(usage) {
  if (!usage) return "";
  const tokens = usage.input_tokens + usage.output_tokens;
  let text = `${usage.turns} turn${usage.turns === 1 ? "" : "s"}, ${tokens} tokens ` +
    `(${usage.input_tokens} in, ${usage.output_tokens} out)`;
  if (usage.cost_usd !== undefined) text += `, $${usage.cost_usd.toFixed(4)}`;
  return text;
}

function budgetText(agent) {
  if (!agent) return "";
  const limits = [];
  if (agent.max_turns) limits.push(`max-turns ${agent.max_turns}`);
  if (agent.max_tokens) limits.push(`max-tokens ${agent.max_tokens}`);
  if (agent.max_cost_usd) limits.push(`max-cost $${agent.max_cost_usd}`);
  return limits.join(", ");
}

// A shell task's retries and its earlier attempts (doc/scheduling.md,
// "Retries"), as `baton status` words them.
function retriesText(task) {
  if (!task.retry) return "";
  let text = `up to ${task.retry.retries}, the first after ${duration(task.retry.delay_ms)}`;
  if (task.retry_at) text += `; next at ${when(task.retry_at)}`;
  return text;
}

function attemptsText(task) {
  return (task.attempts || []).map((attempt, i) =>
    `${i + 1}. ${attempt.detail}, ran ${duration(attempt.ended_ms - attempt.started_ms)}, ` +
    `output bytes ${attempt.output_from}-${attempt.output_to}`).join("\n");
}

// The output a shell task keeps, and what it dropped past that.
function outputCapText(task) {
  if (task.max_output === undefined || task.max_output === null) return "";
  let text = task.max_output === 0 ? "no cap" : `keeps ${bytes(task.max_output)}`;
  if (task.output_dropped) text += `; ${bytes(task.output_dropped)} dropped past it`;
  return text;
}

// The secrets masked in its output (doc/redaction.md).
function redactionsText(task) {
  if (task.redact === false) return "off: its output is kept as printed";
  const masked = task.redactions || [];
  const total = masked.reduce((sum, entry) => sum + entry.count, 0);
  if (!total) return "";
  return `${total} secret${total === 1 ? "" : "s"} masked (` +
    masked.map((entry) => `${entry.count} ${entry.kind}`).join(", ") + ")";
}

function renderTask(task) {
  $("task-title").textContent = `${task.id}: ${statusText(task)}`;
  const dl = $("task-facts");
  dl.replaceChildren();
  fact(dl, "Status", task.status);
  fact(dl, "Detail", task.detail);
  fact(dl, task.agent ? "Brief" : "Command", what(task));
  fact(dl, "Label", task.label);
  fact(dl, "Folder", task.cwd);
  fact(dl, "Created", timeNode(task.created_at));
  fact(dl, "Started", timeNode(task.started_at));
  fact(dl, "Ended", timeNode(task.ended_at));
  if (LIVE.includes(task.status) && task.started_at) {
    fact(dl, "Running for", clock(el("span"), Date.parse(task.started_at)));
  } else {
    fact(dl, "Duration", duration(task.duration_ms));
  }
  fact(dl, "Exit code", task.exit_code);
  fact(dl, "Signal", task.signal);
  fact(dl, "Kill reason", task.kill_reason);
  fact(dl, "Owner", task.owner === null ? "(unowned)" : task.owner);
  // A worker's sub-worker: its questions are its director's too.
  fact(dl, "Started by", task.parent ? `${task.parent} (a worker)` : "");
  fact(dl, "Timeout", task.timeout_ms ? duration(task.timeout_ms) : "");
  fact(dl, "Model", task.agent && task.agent.model);
  const worktree = task.agent && task.agent.worktree;
  fact(dl, "Worktree", worktree && `branch ${worktree.branch} in ${worktree.path}`);
  fact(dl, "Usage", usageText(task.usage));
  fact(dl, "Budget", budgetText(task.agent));
  // Moves as the log grows (followLog tells its size).
  const size = Math.max(task.output_bytes || 0, state.size);
  fact(dl, "Output", task.started_at || task.output_bytes ? bytes(size) : "", "output");
  fact(dl, "Output cap", outputCapText(task));
  fact(dl, "Redacted", redactionsText(task));
  fact(dl, "Retries", retriesText(task));
  fact(dl, "Attempts", attemptsText(task));
  if (!task.evidence) fact(dl, "Checks", (task.checks || []).join("\n"));
  const live = !ENDED.includes(task.status);
  $("kill-form").hidden = !live;
  $("send-form").hidden = !(task.agent && live);
  // An ended agent task's session goes on as a new task (resume_from).
  $("resume-form").hidden = !(task.agent && !live);
  // An ended task runs again as a new one, or goes (doc/tasks.md).
  $("ended-form").hidden = live;
  renderQuestions(task);
  renderEvidence(task);
  $("download").href = `/board/api/log?task=${encodeURIComponent(task.id)}`;
}

// What the task's checks left: each check's command, exit code and last
// lines; the changed files; the tasks that worked in the same folder.
function renderEvidence(task) {
  const evidence = task.evidence;
  $("evidence-view").hidden = !evidence;
  const checks = $("checks");
  const changed = $("changed-files");
  const overlapping = $("overlapping");
  renderDiff(task);
  if (!evidence) {
    checks.replaceChildren();
    changed.replaceChildren();
    overlapping.replaceChildren();
    return;
  }
  checks.replaceChildren(...evidence.checks.map((check) => {
    const item = el("li", null, { class: check.exit_code === 0 ? "check check-passed" : "check check-failed" });
    item.append(el("code", check.command, { class: "check-command" }), " ",
      el("span", `exit code ${check.exit_code}`, { class: "check-exit" }));
    if (check.tail) item.append(el("pre", check.tail, { class: "check-tail" }));
    return item;
  }));
  $("changed-title").textContent =
    `Changed files (${evidence.changed_files.length}, found by ${evidence.source || "?"})`;
  changed.replaceChildren(...evidence.changed_files.map((file) => el("li", file)));
  overlapping.replaceChildren(...evidence.overlapping_tasks.map((id) => {
    const item = el("li");
    const open = el("button", id, { type: "button", "aria-label": `Open ${id}` });
    open.addEventListener("click", () => show(id));
    item.append(open);
    return item;
  }));
  $("overlapping-title").hidden = evidence.overlapping_tasks.length === 0;
}

// A git folder's diff (the evidence's diff_path): read once per task, as
// text, each line coloured by what it is; above it a button per file that
// scrolls the diff to that file.
let diffOf = null;
async function renderDiff(task) {
  const evidence = task.evidence;
  const pre = $("diff");
  const has = Boolean(evidence && evidence.diff_path);
  $("diff-title").hidden = pre.hidden = !has;
  if (!has) {
    diffOf = null;
    pre.replaceChildren();
    $("diff-files").replaceChildren();
    $("diff-files").hidden = true;
    return;
  }
  $("diff-title").textContent = evidence.diff_truncated ? "Diff (cut at 1 MiB)" : "Diff";
  if (diffOf === task.id) return;
  diffOf = task.id;
  const response = await fetch(`/board/api/diff?task=${encodeURIComponent(task.id)}`);
  const text = response.ok ? await response.text() : `The diff could not be read (${response.status}).`;
  if (diffOf !== task.id) return;  // Another task was opened meanwhile.
  const kind = (line) =>
    line.startsWith("diff ") || line.startsWith("+++") || line.startsWith("---") ? "diff-file"
      : line.startsWith("@@") ? "diff-hunk"
        : line.startsWith("+") ? "diff-add"
          : line.startsWith("-") ? "diff-del" : "";
  const files = [];
  pre.replaceChildren(...text.replace(/\n$/, "").split("\n").map((line) => {
    const span = el("span", `${line}\n`, { class: kind(line) });
    // "diff --git a/old b/new": the file is the new name.
    const file = /^diff --git a\/.* b\/(.*)$/.exec(line);
    if (file) files.push({ name: file[1], span });
    return span;
  }));
  $("diff-files").hidden = files.length === 0;
  $("diff-files").replaceChildren(...files.map(({ name, span }) => {
    const jump = el("button", name, { type: "button", "aria-label": `Jump to ${name}` });
    jump.addEventListener("click", () => {
      pre.scrollTop = span.offsetTop;
      span.scrollIntoView({ block: "nearest" });
    });
    return jump;
  }));
}

// A task's open questions: each item's prompt, its options as buttons
// with their descriptions, a free answer; Answer and Skip. Drawn again only
// when the questions change, so that a half-typed answer stays.
function renderQuestions(task) {
  const box = $("questions");
  const key = JSON.stringify([task.id, task.questions || []]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren();
  for (const question of task.questions || []) {
    const form = el("form", null, { class: "question", "aria-label": "Question" });
    const inputs = question.items.map((item, i) => {
      const prompt = item.prompt || item.header || `Question ${i + 1}`;
      form.append(el("p", item.header && item.prompt ? `${item.header}: ${prompt}` : prompt, { class: "prompt" }));
      const input = el("input", null, { autocomplete: "off", class: "answer-text" });
      const options = el("div", null, { class: "options" });
      for (const option of item.options || []) {
        const pick = el("button", null, { type: "button", class: "option", "aria-label": option.label });
        pick.append(el("span", option.label));
        if (option.description) pick.append(el("small", option.description));
        pick.addEventListener("click", () => {
          input.value = option.label;
          if (question.items.length === 1) form.requestSubmit();
        });
        options.append(pick);
      }
      if (options.childElementCount) form.append(options);
      const label = el("label", item.options && item.options.length ? "Or type an answer" : "Answer");
      label.append(input);
      form.append(label);
      return input;
    });
    const buttons = el("div", null, { class: "buttons" });
    const answer = el("button", "Answer", { type: "submit" });
    const skip = el("button", "Skip", { type: "button" });
    skip.addEventListener("click", () => {
      inputs.forEach((input) => { input.value = "skip"; });
      form.requestSubmit();
    });
    buttons.append(answer, skip);
    form.append(buttons);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      act("answer", { task: task.id, answers: inputs.map((input) => input.value || "skip") },
        (reply) => `Answered ${reply.task}: ${answersText(reply.answered && reply.answered.answers)}`,
        "answer-feedback");
    });
    box.append(form);
  }
}

// An answer as batond records it (one entry per item: "skip", the labels
// chosen, or the text typed), as words: "Postgres", "a, b; skipped".
function answersText(answers) {
  if (!Array.isArray(answers)) return answers === undefined ? "" : String(answers);
  return answers.map((answer) => answer === "skip" ? "skipped"
    : Array.isArray(answer) ? answer.join(", ") : String(answer)).join("; ");
}

function renderOutput() {
  const pre = $("output");
  const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.replaceChildren(ansiNodes(state.chunks.map((chunk) => chunk.text).join("")));
  const from = state.chunks.length ? state.chunks[0].from : 0;
  $("omitted").textContent = from > 0 ? `${from} earlier bytes not shown` : "";
  $("earlier").hidden = from === 0;
  if (atBottom) pre.scrollTop = pre.scrollHeight;
}

// An audit record's detail for people: an answer's JSON as words.
function auditDetail(record) {
  const answer = record.action === "answer" && /^question (\d+): (.*)$/s.exec(record.detail);
  if (answer) {
    try {
      return `question ${answer[1]}: ${answersText(JSON.parse(answer[2]))}`;
    } catch (e) { /* Not JSON: as it is. */ }
  }
  return record.detail;
}

// Who did what to the task, from the audit trail (doc/audit.md).
function renderAudit(records) {
  $("audit").replaceChildren(...records.map((record) => {
    let who = record.client || "a client";
    // "*" is a person's session, the board's own (doc/protocol.md): the
    // client already says it.
    if (record.session && record.session !== "*") who += `, session ${record.session}`;
    const item = el("li", null, { class: "audit-record" });
    item.append(timeNode(record.at_ms), " ",
      el("strong", record.action), ` by ${who} (pid ${record.pid})`);
    if (record.detail) item.append(": ", el("code", auditDetail(record)));
    if (record.reason) item.append(`; why: ${record.reason}`);
    return item;
  }));
}

// A live worker's overlaps with the other workers of its repository, from
// the conflict radar (doc/conflicts.md): the other task, the files both
// changed, and whether their changes would conflict.
function renderConflicts(id, overlaps) {
  $("conflicts-view").hidden = overlaps.length === 0;
  $("conflicts").replaceChildren(...overlaps.map((overlap) => {
    const other = overlap.tasks[0] === id ? overlap.tasks[1] : overlap.tasks[0];
    const conflict = overlap.kind === "conflict";
    const item = el("li", null, { class: conflict ? "overlap overlap-conflict" : "overlap" });
    const open = el("button", other, { type: "button", "aria-label": `Open ${other}` });
    open.addEventListener("click", () => show(other));
    item.append(open, ": ", el("strong", conflict ? "textual conflict" : "same file"),
      conflict ? ` in ${overlap.conflict_files.join(", ")}` : "",
      ` (both changed ${overlap.files.join(", ")})`);
    return item;
  }));
}

// A live agent's follow-ups that wait for its turn to end, each with a
// button that withdraws it.
function renderQueued(queued) {
  $("queued-view").hidden = queued.length === 0;
  $("queued").replaceChildren(...queued.map((message) => {
    const item = el("li");
    const withdraw = el("button", "Withdraw", { type: "button", "aria-label": `Withdraw ${message.id}` });
    withdraw.addEventListener("click", () =>
      act("queued", { task: state.task, withdraw: message.id }, () => `Withdrew ${message.id}`, "send-feedback"));
    item.append(el("code", message.id), " ", message.text, " ", withdraw);
    return item;
  }));
}

// An event's line in the transcript: batond's, but an answer in words.
function eventLine(event) {
  if (event.type === "answer") return `= answered: ${answersText(event.answers)}`;
  return event.line;
}

// An agent task's transcript, from its events: the brief, then each
// event's line (text, tool calls with their input, questions, answers,
// follow-ups, the result), a follow-up with its delivery as the later
// events tell it. Text only, as the output is.
function renderTranscript(task) {
  $("transcript-view").hidden = !task.agent;
  if (!task.agent) return;
  const events = state.transcript.events;
  const delivery = new Map();
  for (const event of events) {
    if (event.type === "delivered") delivery.set(event.message, "delivered");
    if (event.type === "message_withdrawn") delivery.set(event.message, "withdrawn");
  }
  const items = [el("li", task.agent.brief, { class: "event event-brief", "data-type": "brief" })];
  for (const event of events) {
    if (!event.line || ["delivered", "usage"].includes(event.type)) continue;
    const item = el("li", null, { class: `event event-${event.type}`, "data-type": event.type });
    item.append(timeNode(event.at), " ", el("span", eventLine(event)));
    if (event.type === "message") {
      const state = delivery.get(event.seq) || (event.mode === "followup" ? "queued" : "sent");
      item.append(" ", el("em", `(${state})`, { class: "delivery" }));
    }
    items.push(item);
  }
  $("transcript").replaceChildren(...items);
}

const ENDED = ["completed", "failed", "killed", "interrupted"];

async function refreshTask() {
  const id = state.task;
  const path = (route) => `/board/api/${route}?task=${encodeURIComponent(id)}`;
  // The header's counts too (they move while the page is open: a kill, an
  // answer, a new task), with the tasks that wait, for the title.
  const [reply, audit, counts] = await Promise.all([api(path("task")), api(path("audit")),
    api("/board/api/tasks?page=0&status=waiting")]);
  if (state.task !== id) return;
  const alerted = renderCounts(counts, counts.needs_input);
  // Only a live agent worker has follow-ups to wait.
  // (It may end meanwhile: then it has none.)
  // A page keeps the transcript it has read and asks only for the events
  // after it.
  if (state.transcript.task !== id) state.transcript = { task: id, events: [] };
  const known = state.transcript.events;
  const after = known.length ? known[known.length - 1].seq : 0;
  const live = reply.task.agent && !ENDED.includes(reply.task.status);
  const [queued, added, overlaps] = await Promise.all([
    live ? api(path("queued")).then((r) => r.queued, () => []) : [],
    reply.task.agent
      ? api(`${path("transcript")}&after=${after}`).then((r) => r.events, () => []) : [],
    live && reply.task.agent.worktree
      ? api(path("conflicts")).then((r) => r.overlaps, () => []) : [],
  ]);
  if (state.task !== id) return;
  // Another refresh may have added some meanwhile: only what is newer.
  const last = known.length ? known[known.length - 1].seq : 0;
  if (state.transcript.task === id) known.push(...added.filter((e) => e.seq > last));
  state.view = reply.task;
  renderTask(reply.task);
  renderAudit(audit.records);
  renderQueued(queued);
  renderConflicts(id, overlaps);
  renderTranscript(reply.task);
  followLog(reply.task);
  state.size = Math.max(state.size, reply.task.output_bytes || 0);
  await Promise.all([followOutput(), alerted]);
}

// A started task's page listens to its log's growth (pushed by the board,
// which watches the file); an ended one's page needs not.
function followLog(task) {
  const live = LIVE.includes(task.status);
  const open = state.outputEvents && state.outputEvents.readyState !== EventSource.CLOSED;
  if (live && !open) {
    closeLog();
    const source = new EventSource(`/board/api/output/events?task=${encodeURIComponent(task.id)}`);
    source.onmessage = (event) => {
      const { size } = JSON.parse(event.data);
      if (state.task !== task.id || size <= state.size) return;
      state.size = size;
      const shown = document.querySelector('#task-facts dd[data-fact="output"]');
      if (shown) shown.textContent = bytes(size);
      followOutput();
    };
    state.outputEvents = source;
  } else if (!live) {
    closeLog();
  }
}

function closeLog() {
  if (state.outputEvents) state.outputEvents.close();
  state.outputEvents = null;
}

// Reads the output up to state.size: on from what the page shows, or the
// tail again when more than a read is missing (then "earlier" loads the
// rest). Calls that come meanwhile make one more pass.
async function followOutput() {
  if (!state.task) return;
  if (state.following) {
    state.followAgain = true;
    return;
  }
  state.following = true;
  const id = state.task;
  const path = `/board/api/output?task=${encodeURIComponent(id)}`;
  try {
    do {
      state.followAgain = false;
      for (;;) {
        const end = state.chunks.length ? state.chunks[state.chunks.length - 1].to : -1;
        if (end >= 0 && end >= state.size) break;
        const tail = end < 0 || state.size - end > OUTPUT_CHUNK;
        const read = await api(tail ? path : `${path}&after=${end}`);
        if (state.task !== id) return;
        if (tail) state.chunks = [read];
        else if (read.to > end) state.chunks.push(read);
        else break; // Only part of a character so far.
        while (state.chunks.length > 1 && read.to - state.chunks[0].to >= OUTPUT_KEEP) state.chunks.shift();
        state.size = Math.max(state.size, read.size);
        renderOutput();
      }
    } while (state.followAgain && state.task === id);
  } catch (error) {
    if (state.task === id) say(error.message, true);
  } finally {
    state.following = false;
    // A call for another task's page came while this one read.
    if (state.followAgain) followOutput();
  }
}

async function loadEarlier() {
  const id = state.task;
  const before = state.chunks.length ? state.chunks[0].from : 0;
  if (!id || before === 0) return;
  try {
    const chunk = await api(`/board/api/output?task=${encodeURIComponent(id)}&before=${before}`);
    if (state.task !== id) return;
    state.chunks.unshift({ from: chunk.from, to: chunk.to, text: chunk.text });
    renderOutput();
  } catch (error) {
    say(error.message, true);
  }
}

// Reads what the page shows again; calls that come meanwhile make one more.
async function refresh() {
  if (state.refreshing) {
    state.again = true;
    return;
  }
  state.refreshing = true;
  try {
    do {
      state.again = false;
      const shown = state.task;
      try {
        if (shown) await refreshTask();
        else await refreshList();
      } catch (error) {
        // Said only while its page shows (a removed task's last read is not).
        if (state.task === shown) say(error.message, true);
      }
    } while (state.again);
  } finally {
    state.refreshing = false;
  }
}

function show(id) {
  location.hash = id ? `task=${encodeURIComponent(id)}` : "";
}

function route() {
  const match = /^#task=(.+)$/.exec(location.hash);
  state.task = match ? decodeURIComponent(match[1]) : null;
  state.chunks = [];
  state.size = -1;
  closeLog();
  if (state.task) closeSizes();
  $("list-view").hidden = state.task !== null;
  $("task-view").hidden = state.task === null;
  if (state.task) {
    state.selected = state.task;
    // Opened: a failure is seen.
    if (alerts.unseen.delete(state.task)) renderTitle();
    $("task-title").textContent = state.task;
    $("output").textContent = "";
    $("task-facts").replaceChildren();
    window.scrollTo(0, 0);
  }
  for (const box of document.querySelectorAll(".feedback")) box.replaceChildren();
  // What the action that changed the page said (a removal), else nothing.
  say(state.afterRoute || "");
  state.afterRoute = null;
  return refresh();
}

// A button that opens task `id` (not named "Open ID": that is its row's).
function openButton(id) {
  const open = el("button", `Show ${id}`, { type: "button" });
  open.addEventListener("click", () => show(id));
  return open;
}

// Sends an action and says what happened, `done(reply)` (text, or text
// and nodes) or batond's error, in the feedback line `where`, next to the
// button that did it, and scrolled into view.
async function act(op, body, done, where) {
  const box = $(where);
  const tell = (parts, kind) => {
    box.className = `feedback ${kind}`;
    box.replaceChildren(...[].concat(parts));
    box.scrollIntoView({ block: "nearest" });
  };
  tell("…", "");
  try {
    const reply = await api(`/board/api/${op}`, body);
    tell(done(reply), "ok");
    refresh();
    return reply;
  } catch (error) {
    tell(error.message, "error");
    return null;
  }
}

// The folder a new task starts in: the last one used on this browser, else
// the one `baton serve` runs in; and the agents `baton agents` lists, the
// config's default first chosen.
const CWD_KEY = "baton.cwd";

async function loadDefaults() {
  let defaults;
  try {
    defaults = await api("/board/api/defaults");
  } catch (error) {
    return;
  }
  const last = localStorage.getItem(CWD_KEY);
  const cwd = last || defaults.cwd;
  const hint = last ? `Folder: the last one used here (${last})`
    : `Folder: where baton serve runs (${defaults.cwd})`;
  for (const form of ["run", "delegate"]) {
    if (!$(`${form}-cwd`).value && cwd) $(`${form}-cwd`).value = cwd;
    $(`${form}-cwd-hint`).textContent = cwd ? hint : "";
  }
  const select = $("delegate-agent");
  if (defaults.agents) {
    const options = defaults.agents.agents.map((agent) =>
      el("option", agent.default ? `${agent.name} (default)` : agent.name, { value: agent.name }));
    select.replaceChildren(...options);
    select.value = defaults.agents.default_agent;
  } else if (defaults.agents_error) {
    select.title = defaults.agents_error;
  }
}

function rememberCwd(cwd) {
  localStorage.setItem(CWD_KEY, cwd);
  for (const form of ["run", "delegate"]) {
    $(`${form}-cwd-hint`).textContent = `Folder: the last one used here (${cwd})`;
  }
}

// Keys (doc/board.md, "Keys"): j and k move the selection in the list,
// Enter opens it, / goes to the search; on a task's page, a goes to the
// answer box and Escape back to the list. Not while typing in a field
// (there Escape leaves the field).
function rows() {
  return [...document.querySelectorAll("#tasks tbody tr[data-task]")];
}

function select(step) {
  const all = rows();
  if (!all.length) return;
  let at = all.findIndex((tr) => tr.dataset.task === state.selected);
  at = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
  for (const tr of all) tr.classList.toggle("selected", tr === all[at]);
  state.selected = all[at].dataset.task;
  all[at].querySelector("button").focus({ preventScroll: true });
  all[at].scrollIntoView({ block: "nearest" });
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, [contenteditable]")) {
    if (event.key === "Escape") target.blur();
    return;
  }
  if (state.task === null) {
    if (event.key === "j") select(1);
    else if (event.key === "k") select(-1);
    else if (event.key === "/") $("filter-search").focus();
    else if (event.key === "Enter" && state.selected && !target.closest("button, a, summary")) {
      show(state.selected);
    } else return;
  } else {
    const answer = document.querySelector("#questions input");
    if (event.key === "a" && answer) answer.focus();
    else if (event.key === "Escape") show(null);
    else return;
  }
  event.preventDefault();
}

function setup() {
  $("back").addEventListener("click", () => show(null));
  $("newer").addEventListener("click", () => { state.page -= 1; refresh(); });
  $("older").addEventListener("click", () => { state.page += 1; refresh(); });
  $("earlier").addEventListener("click", loadEarlier);
  for (const id of ["filter-session", "filter-kind", "filter-status", "filter-label", "filter-search"]) {
    $(id).addEventListener("input", () => { state.page = 0; refresh(); });
  }
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  $("kill-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act("kill", { tasks: [state.task], reason: $("kill-reason").value },
      (reply) => reply.results.map((r) =>
        r.outcome === "already-terminal" ? `${r.id} had already ended` : `Kill sent to ${r.id}`).join("; "),
      "kill-feedback");
  });
  // Send: a follow-up, after the turn; Steer: into the turn now.
  const send = (mode) => {
    act("send", { task: state.task, message: $("send-message").value, mode },
      (reply) => `Sent to ${reply.task}: ${reply.delivery}`, "send-feedback").then((reply) => {
      if (reply) $("send-message").value = "";
    });
  };
  $("send-form").addEventListener("submit", (event) => {
    event.preventDefault();
    send("followup");
  });
  $("steer-button").addEventListener("click", () => {
    if ($("send-form").reportValidity()) send("steer");
  });
  $("delegate-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { brief: $("delegate-brief").value, cwd: $("delegate-cwd").value };
    for (const field of ["agent", "label"]) {
      if ($(`delegate-${field}`).value) body[field] = $(`delegate-${field}`).value;
    }
    const checks = $("delegate-checks").value.split(";;").map((c) => c.trim()).filter((c) => c);
    if (checks.length) body.checks = checks;
    act("delegate", body, (reply) => {
      rememberCwd(body.cwd);
      return [`Delegated to ${reply.task.agent.profile} as ${reply.task.id} `, openButton(reply.task.id)];
    }, "delegate-feedback");
  });
  $("rerun-button").addEventListener("click", () => {
    const from = state.task;
    act("rerun", { task: from },
      (reply) => [`Started ${from} again as ${reply.task.id} `, openButton(reply.task.id)],
      "ended-feedback");
  });
  $("remove-button").addEventListener("click", async () => {
    const id = state.task;
    if (!window.confirm(`Remove ${id} and its output? This cannot be undone.`)) return;
    // Not act(): its refresh would look for the task that is gone.
    const box = $("ended-feedback");
    box.className = "feedback";
    box.textContent = "…";
    try {
      await api("/board/api/remove", { tasks: [id] });
      state.afterRoute = `Removed ${id}, with its output`;
      show(null);
    } catch (error) {
      box.className = "feedback error";
      box.textContent = error.message;
      box.scrollIntoView({ block: "nearest" });
    }
  });
  $("resume-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const from = state.task;
    act("delegate", { resume_from: from, brief: $("resume-brief").value },
      (reply) => [`Resumed ${from} as ${reply.task.id} `, openButton(reply.task.id)],
      "resume-feedback").then((reply) => {
      if (reply) $("resume-brief").value = "";
    });
  });
  $("run-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { command: $("run-command").value, cwd: $("run-cwd").value };
    if ($("run-label").value) body.label = $("run-label").value;
    act("run", body, (reply) => {
      rememberCwd(body.cwd);
      return [`Started ${reply.task.id} `, openButton(reply.task.id)];
    }, "run-feedback");
  });
  $("home").addEventListener("click", (event) => {
    event.preventDefault();
    show(null);
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", route);
  const events = new EventSource("/board/api/events");
  events.onopen = () => { $("live").textContent = "live"; };
  events.onmessage = () => {
    $("live").textContent = "live";
    refresh();
  };
  events.onerror = () => { $("live").textContent = "reconnecting…"; };
  setupNotify();
  setInterval(tick, 1000);
  // The forms' defaults once the first view is drawn: batond answers the
  // list first.
  route().finally(loadDefaults);
}

setup();
