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
};

const $ = (id) => document.getElementById(id);

function el(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

function say(text, isError) {
  const message = $("message");
  message.textContent = text;
  message.className = isError ? "error" : "";
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

function duration(ms) {
  if (ms === undefined || ms === null) return "";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return isNaN(date) ? iso : date.toLocaleTimeString();
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

function row(task) {
  const tr = el("tr", null, { "data-task": task.id });
  const open = el("button", task.id, { type: "button", "aria-label": `Open ${task.id}` });
  open.addEventListener("click", () => show(task.id));
  const first = el("td");
  first.append(open);
  tr.append(first);
  tr.append(el("td", task.kind));
  tr.append(el("td", statusText(task), { class: `status status-${task.status}` }));
  tr.append(el("td", task.label || ""));
  tr.append(el("td", shorten(what(task), 120), { class: "command", title: what(task) }));
  tr.append(el("td", (task.agent && task.agent.model) || ""));
  tr.append(el("td", when(task.started_at || task.created_at)));
  tr.append(el("td", duration(task.duration_ms)));
  tr.append(el("td", bytes(task.output_bytes)));
  return tr;
}

function fill(table, tasks) {
  table.replaceChildren(...tasks.map(row));
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
  const list = await api(`/board/api/tasks?${listQuery()}`);
  $("counts").textContent =
    `${list.running_count} running · ${list.need_input_count} need input · ` +
    `${list.queued_count} queued · ended today: ${list.completed_today} completed / ` +
    `${list.failed_today} failed / ${list.killed_today} killed`;
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
}

function fact(dl, name, value) {
  if (value === undefined || value === null || value === "") return;
  dl.append(el("dt", name), el("dd", value));
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
  if (task.retry_at) text += `; next at ${task.retry_at}`;
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
  fact(dl, "Created", task.created_at);
  fact(dl, "Started", task.started_at);
  fact(dl, "Ended", task.ended_at);
  fact(dl, "Duration", duration(task.duration_ms));
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
  fact(dl, "Output", bytes(task.output_bytes));
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
// text, each line coloured by what it is.
let diffOf = null;
async function renderDiff(task) {
  const evidence = task.evidence;
  const pre = $("diff");
  const has = Boolean(evidence && evidence.diff_path);
  $("diff-title").hidden = pre.hidden = !has;
  if (!has) {
    diffOf = null;
    pre.replaceChildren();
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
  pre.replaceChildren(...text.replace(/\n$/, "").split("\n")
    .map((line) => el("span", `${line}\n`, { class: kind(line) })));
}

function renderQuestions(task) {
  const box = $("questions");
  box.replaceChildren();
  for (const question of task.questions || []) {
    const form = el("form", null, { class: "question" });
    const inputs = question.items.map((item, i) => {
      const label = el("label", item.prompt || item.header || `Question ${i + 1}`);
      const input = el("input", null, { autocomplete: "off" });
      label.append(input);
      form.append(label);
      for (const option of item.options || []) {
        const pick = el("button", option.label, { type: "button", title: option.description || "" });
        pick.addEventListener("click", () => {
          input.value = option.label;
          if (question.items.length === 1) form.requestSubmit();
        });
        form.append(pick);
      }
      return input;
    });
    const answer = el("button", "Answer", { type: "submit" });
    const skip = el("button", "Skip", { type: "button" });
    skip.addEventListener("click", () => {
      inputs.forEach((input) => { input.value = "skip"; });
      form.requestSubmit();
    });
    form.append(answer, skip);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      act("answer", { task: task.id, answers: inputs.map((input) => input.value || "skip") },
        (reply) => `Answered ${reply.task}`);
    });
    box.append(form);
  }
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

// Who did what to the task, from the audit trail (doc/audit.md).
function renderAudit(records) {
  $("audit").replaceChildren(...records.map((record) => {
    let who = record.client || "a client";
    // "*" is a person's session, the board's own (doc/protocol.md): the
    // client already says it.
    if (record.session && record.session !== "*") who += `, session ${record.session}`;
    const item = el("li", null, { class: "audit-record" });
    item.append(el("time", when(new Date(record.at_ms).toISOString())), " ",
      el("strong", record.action), ` by ${who} (pid ${record.pid})`);
    if (record.detail) item.append(": ", el("code", record.detail));
    if (record.reason) item.append(`; why: ${record.reason}`);
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
      act("queued", { task: state.task, withdraw: message.id }, () => `Withdrew ${message.id}`));
    item.append(el("code", message.id), " ", message.text, " ", withdraw);
    return item;
  }));
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
    item.append(el("time", event.at ? when(event.at) : ""), " ", el("span", event.line));
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
  const [reply, audit] = await Promise.all([api(path("task")), api(path("audit"))]);
  if (state.task !== id) return;
  // Only a live agent worker has follow-ups to wait.
  // (It may end meanwhile: then it has none.)
  // A page keeps the transcript it has read and asks only for the events
  // after it.
  if (state.transcript.task !== id) state.transcript = { task: id, events: [] };
  const known = state.transcript.events;
  const after = known.length ? known[known.length - 1].seq : 0;
  const [queued, added] = await Promise.all([
    reply.task.agent && !ENDED.includes(reply.task.status)
      ? api(path("queued")).then((r) => r.queued, () => []) : [],
    reply.task.agent
      ? api(`${path("transcript")}&after=${after}`).then((r) => r.events, () => []) : [],
  ]);
  if (state.task !== id) return;
  // Another refresh may have added some meanwhile: only what is newer.
  const last = known.length ? known[known.length - 1].seq : 0;
  if (state.transcript.task === id) known.push(...added.filter((e) => e.seq > last));
  state.view = reply.task;
  renderTask(reply.task);
  renderAudit(audit.records);
  renderQueued(queued);
  renderTranscript(reply.task);
  followLog(reply.task);
  state.size = Math.max(state.size, reply.task.output_bytes || 0);
  await followOutput();
}

// A started task's page listens to its log's growth (pushed by the board,
// which watches the file); an ended one's page needs not.
function followLog(task) {
  const live = ["running", "waiting", "stopping"].includes(task.status);
  const open = state.outputEvents && state.outputEvents.readyState !== EventSource.CLOSED;
  if (live && !open) {
    closeLog();
    const source = new EventSource(`/board/api/output/events?task=${encodeURIComponent(task.id)}`);
    source.onmessage = (event) => {
      const { size } = JSON.parse(event.data);
      if (state.task !== task.id || size <= state.size) return;
      state.size = size;
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
    say(error.message, true);
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
      if (state.task) await refreshTask();
      else await refreshList();
    } while (state.again);
  } catch (error) {
    say(error.message, true);
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
  $("list-view").hidden = state.task !== null;
  $("task-view").hidden = state.task === null;
  if (state.task) {
    $("task-title").textContent = state.task;
    $("output").textContent = "";
  }
  say("");
  refresh();
}

// Sends an action; says what happened: `done(reply)` or batond's error.
async function act(op, body, done) {
  try {
    const reply = await api(`/board/api/${op}`, body);
    say(done(reply));
    refresh();
    return reply;
  } catch (error) {
    say(error.message, true);
    return null;
  }
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
        r.outcome === "already-terminal" ? `${r.id} had already ended` : `Kill sent to ${r.id}`).join("; "));
  });
  // Send: a follow-up, after the turn; Steer: into the turn now.
  const send = (mode) => {
    act("send", { task: state.task, message: $("send-message").value, mode },
      (reply) => `Sent to ${reply.task}: ${reply.delivery}`).then((reply) => {
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
    act("delegate", body, (reply) => `Delegated to ${reply.task.agent.profile} as ${reply.task.id}`);
  });
  $("resume-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act("delegate", { resume_from: state.task, brief: $("resume-brief").value },
      (reply) => `Resumed ${state.task} as ${reply.task.id}`).then((reply) => {
      if (reply) $("resume-brief").value = "";
    });
  });
  $("run-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { command: $("run-command").value, cwd: $("run-cwd").value };
    if ($("run-label").value) body.label = $("run-label").value;
    act("run", body, (reply) => `Started ${reply.task.id}`);
  });
  window.addEventListener("hashchange", route);
  const events = new EventSource("/board/api/events");
  events.onopen = () => { $("live").textContent = "live"; };
  events.onmessage = () => {
    $("live").textContent = "live";
    refresh();
  };
  events.onerror = () => { $("live").textContent = "reconnecting…"; };
  route();
}

setup();
