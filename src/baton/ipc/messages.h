// The messages of batond's client protocol (doc/protocol.md): one struct
// per request and per reply. Each lists its fields once (`Fields`), which
// gives the checked decoder batond uses, the encoder clients use, and the
// table of doc/protocol.md. A request names its op (`kOp`) and its reply
// type (`Reply`); ipc/codec.h frames them in lines. The types they share
// (limits, the task as clients see it, enums) are in ipc/wire_types.h.
#ifndef BATON_IPC_MESSAGES_H_
#define BATON_IPC_MESSAGES_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "baton/core/audit.h"
#include "baton/core/land.h"
#include "baton/core/sessions.h"  // A request's `session`, "*" a person's.
#include "baton/core/task.h"
#include "baton/ipc/wire_types.h"
#include "baton/util/json_fields.h"

namespace baton {

// Bumped on incompatible changes; every reply carries it.
inline constexpr int kProtocolVersion = 1;

// ---- requests and replies, one pair per op --------------------------------
//
// A request whose reply stays true whether its loop iteration's commit
// works or not (it describes batond itself, or what already happened
// outside the store: a message written to an agent, a connection attached,
// a stop begun) says so with `kReplyKeptIfCommitFails`; any other reply of
// an iteration whose commit fails becomes the commit's error.

struct HelloReply {
  int64_t daemon_pid = 0;
  int64_t protocol = kProtocolVersion;
  std::string home;
  std::string session;
  template <class V>
  void Fields(V& v) {
    v("daemon_pid", daemon_pid);
    v("protocol", protocol);
    v("home", home);
    v("session", session);
  }
};
struct HelloRequest {
  static constexpr std::string_view kOp = "hello";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc = "who answers";
  using Reply = HelloReply;
  template <class V>
  void Fields(V&) {}
};

// The reply of requests that start a task, and of `get`.
struct TaskReply {
  TaskView task;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true});
  }
};

// When a started task may run (doc/scheduling.md); the same fields in
// `run` and `delegate`.
struct ScheduleFields {
  std::string queue;
  int64_t priority = 0;
  std::vector<std::string> after;
  bool after_any = false;
  template <class V>
  void Fields(V& v) {
    v("queue", queue,
      {.max_bytes = kMaxNameBytes,
       .doc = "the queue it waits in for a slot (`queue_set` makes one); "
              "default: the default queue"});
    v("priority", priority,
      {.min = -1000000,
       .max = 1000000,
       .doc = "higher starts first within its queue; default 0"});
    v("after", after,
      {.max_bytes = kMaxNameBytes,
       .max_items = 64,
       .doc = "task ids it starts after: once all completed (one that "
              "fails, is killed or interrupted fails it without running)"});
    v("after_any", after_any,
      {.doc = "start at the first end of any of `after`, however it ended"});
  }
};

// Runs again when it fails (doc/scheduling.md, "Retries"); the same fields
// in `run` and `delegate` (an agent starts again from its brief,
// doc/agents.md, "Retries").
struct RetryFields {
  int64_t retries = 0;
  std::optional<int64_t> retry_delay_ms;  // Unset: RetryPolicy's.
  template <class V>
  void Fields(V& v) {
    v("retries", retries,
      {.min = 0,
       .max = kMaxRetries,
       .doc = "runs it again, up to this many times, when it fails or times "
              "out (not when killed); one id, each attempt recorded "
              "(doc/scheduling.md, \"Retries\")"});
    v("retry_delay_ms", retry_delay_ms,
      {.min = 0,
       .max = kMaxRetryBackoffMs,
       .doc = "the wait before the first retry, doubled for each next one "
              "(at most 10 minutes); default 5000"});
  }
};

// Where a task runs: on this machine, or as a Slurm job (doc/slurm.md).
// Empty resources take the defaults of `[executors.slurm]` in baton's
// config, then the cluster's.
struct SlurmFields {
  std::string on;  // "" or "local": here; "slurm": a Slurm job.
  std::string partition;
  std::string account;
  std::optional<int64_t> time_limit_s;
  std::string mem;
  std::string gres;
  std::vector<std::string> sbatch_args;
  bool OnSlurm() const { return on == "slurm"; }
  template <class V>
  void Fields(V& v) {
    v("on", on,
      {.max_bytes = kMaxNameBytes,
       .doc = "`local` (the default) or `slurm`: a job on the Slurm cluster, "
              "shaped by `partition`, `account`, `time_limit_s`, `mem`, "
              "`gres` and `sbatch_args` (doc/slurm.md)"});
    v("partition", partition,
      {.max_bytes = kMaxNameBytes, .doc = "with `on` slurm: `--partition`"});
    v("account", account,
      {.max_bytes = kMaxNameBytes, .doc = "with `on` slurm: `--account`"});
    v("time_limit_s", time_limit_s,
      {.min = 1,
       .max = kMaxTimeoutMs / 1000,
       .doc = "Slurm's `--time`, rounded up to whole minutes; past it Slurm "
              "ends the job (status `killed`, \"timed out\")"});
    v("mem", mem,
      {.max_bytes = kMaxNameBytes, .doc = "`--mem`, as Slurm writes it: `4G`"});
    v("gres", gres, {.max_bytes = kMaxNameBytes, .doc = "`--gres`: `gpu:1`"});
    v("sbatch_args", sbatch_args,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxArgs,
       .doc = "more sbatch options, each one argument (`--qos=high`)"});
  }
};

// Hard limits on all of a task's processes together (doc/limits.md). On
// Slurm, `cpus` and `memory_bytes` are what the job asks for instead.
struct LimitFields {
  std::optional<int64_t> memory_bytes;
  std::optional<double> cpus;
  std::optional<int64_t> pids;
  bool any() const { return memory_bytes || cpus || pids; }
  template <class V>
  void Fields(V& v) {
    v("memory_bytes", memory_bytes,
      {.min = int64_t{1} << 20,
       .max = int64_t{1} << 62,
       .doc = "memory of its processes together, at least 1 MiB; past it "
              "they are killed and it ends `failed`, \"out of memory\" "
              "(cgroups; else an address-space rlimit, doc/limits.md). On "
              "Slurm, the job's `--mem`"});
    v("cpus", cpus,
      {.doc = "the CPU time it may use, in CPUs (1.5: one and a half), "
              "0.01 to 65536; on Slurm, whole CPUs (`--cpus-per-task`)"});
    v("pids", pids,
      {.min = 1,
       .max = 1 << 22,
       .doc = "processes and threads it may have at once (cgroups only)"});
  }
};

struct RunRequest {
  static constexpr std::string_view kOp = "run";
  static constexpr std::string_view kDoc =
      "starts a shell task; answered once it is stored: `running` with "
      "detail `starting` when its spawn left for the supervisor, `queued` "
      "when it is held or a Slurm job (doc/tasks.md, \"Statuses\")";
  using Reply = TaskReply;
  std::optional<std::string> command;
  std::vector<std::string> argv;
  std::string cwd;
  std::map<std::string, std::string> env;
  std::optional<std::vector<std::string>> base_env;
  std::string label;
  std::optional<std::chrono::milliseconds> timeout;
  std::vector<std::string> checks;
  bool unowned = false;
  ScheduleFields schedule;
  std::optional<int64_t> max_output;  // Unset: kDefaultMaxOutput.
  RetryFields retry;
  SlurmFields slurm;
  LimitFields limits;
  std::string sandbox;  // "": none.
  // Sent only as false: an older batond, which masks nothing, never sees
  // it otherwise.
  std::optional<bool> redact;
  template <class V>
  void Fields(V& v) {
    v("command", command,
      {.max_bytes = kMaxArgBytes, .doc = "a shell line, run by /bin/sh -c"});
    v("argv", argv,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxArgs,
       .doc = "the command as a list, run without a shell (exactly one of "
              "`command` and `argv`)"});
    v("cwd", cwd,
      {.required = true,
       .max_bytes = kMaxPathBytes,
       .doc = "absolute working directory"});
    v("env", env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "variables set over `base_env` (stored; secret-looking "
              "values are masked in listings)"});
    v("base_env", base_env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "the client's environment as `NAME=value` entries, which the "
              "task inherits; stored only while the task may still start "
              "(held, or a retry left). Absent: a clean environment "
              "(doc/protocol.md, \"Environment\")"});
    v("label", label,
      {.max_bytes = kMaxLabelBytes, .doc = "a name for people"});
    v("timeout_ms", timeout,
      {.min = 1,
       .max = kMaxTimeoutMs,
       .doc = "kill it this long after it starts (1 ms to 366 days)"});
    v("checks", checks,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxChecks,
       .doc = "shell lines run in `cwd` when it ends (doc/agents.md)"});
    v("unowned", unowned,
      {.doc = "no owner: any session sees it, no lease stops it"});
    schedule.Fields(v);
    v("max_output_bytes", max_output,
      {.min = 0,
       .max = int64_t{1} << 62,
       .doc = "the output it keeps; past it what it prints is dropped and "
              "counted (doc/tasks.md, \"Output cap\"); 0: no cap; default "
              "1 GiB"});
    retry.Fields(v);
    slurm.Fields(v);
    limits.Fields(v);
    v("sandbox", sandbox,
      {.max_bytes = kMaxNameBytes,
       .omit_when_empty = true,
       .doc = "run its whole process tree in this sandbox profile "
              "(`strict`, `agent`, `build`, or the config's "
              "`[sandbox.NAME]`; doc/sandbox.md); a local task only"});
    v("redact", redact,
      {.doc = "mask secrets of well-known shapes in its output in place "
              "(doc/redaction.md); false keeps its log as printed; default "
              "true"});
  }
  // The rules across fields (exactly one command form, sizes, names).
  Status Validate() const;
};

struct DelegateRequest {
  static constexpr std::string_view kOp = "delegate";
  static constexpr std::string_view kDoc =
      "starts an agent task (doc/agents.md); for codex the reply waits for "
      "the app-server probe (at most 5 s)";
  using Reply = TaskReply;
  std::string brief;
  std::string agent;
  std::string model;
  std::string label;
  std::string cwd;
  std::string resume_from;
  std::vector<std::string> checks;
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::vector<std::string>> base_env;
  bool unowned = false;
  ScheduleFields schedule;
  std::optional<bool> worktree;  // Unset: the profile's default.
  // Its budget; unset: the profile's (doc/agents.md, "Budgets").
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
  std::optional<Asker> ask;  // Unset: the director.
  RetryFields retry;
  SlurmFields slurm;
  LimitFields limits;
  std::string sandbox;  // "": the profile's `sandbox`, else none.
  template <class V>
  void Fields(V& v) {
    v("brief", brief,
      {.required = true,
       .max_bytes = kMaxTextBytes,
       .doc = "what the agent should do"});
    v("agent", agent,
      {.max_bytes = kMaxNameBytes,
       .doc = "the profile (claude, codex, codex-exec, gemini, opencode, "
              "qwen, dsh, or the config's); default: a resumed task's own, "
              "else the config's `defaults.agent`, else claude"});
    v("model", model,
      {.max_bytes = kMaxNameBytes,
       .doc = "`<provider>/<model>[:<effort>]`, else `invalid_model`"});
    v("label", label,
      {.max_bytes = kMaxLabelBytes, .doc = "a name for people"});
    v("cwd", cwd,
      {.max_bytes = kMaxPathBytes,
       .doc = "absolute; default: a resumed task's folder"});
    v("resume_from", resume_from,
      {.max_bytes = kMaxNameBytes,
       .doc = "an ended agent task's id (its session is resumed), or a CLI "
              "session id"});
    v("checks", checks,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxChecks,
       .doc = "shell lines run in its folder when it ends"});
    v("timeout_ms", timeout,
      {.min = 1,
       .max = kMaxTimeoutMs,
       .doc = "default: the profile's, else the config's "
              "`defaults.agent_timeout`, else 30 min"});
    v("base_env", base_env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "as for `run`; also names the config file (BATON_CONFIG, "
              "XDG_CONFIG_HOME, HOME)"});
    v("unowned", unowned, {.doc = "as for `run`"});
    schedule.Fields(v);
    v("worktree", worktree,
      {.doc = "run it in a new git worktree on a new branch "
              "`baton/<task id>` made from HEAD (doc/agents.md, "
              "\"Worktrees\"); default: the profile's `worktree`"});
    v("max_turns", max_turns,
      {.min = 1,
       .doc = "its budget of model turns (doc/agents.md, \"Budgets\"); "
              "default: the profile's"});
    v("max_tokens", max_tokens,
      {.min = 1, .doc = "its budget of tokens, input and output"});
    v("max_cost_usd", max_cost_usd,
      {.doc = "its budget in US dollars (where the CLI reports a cost)"});
    v("ask", ask,
      {.doc = "who answers its questions: `director` (default) or `person`, "
              "the MCP client's user through a form (doc/mcp.md)"});
    retry.Fields(v);
    slurm.Fields(v);
    limits.Fields(v);
    v("sandbox", sandbox,
      {.max_bytes = kMaxNameBytes,
       .omit_when_empty = true,
       .doc = "as for `run`; default: the agent profile's `sandbox`, else "
              "none"});
  }
  Status Validate() const;
};

// A task again: an ended task's command (or brief), folder, environment
// variables, label, checks, queue, limits and budget, as a new task
// (doc/tasks.md, "Run again").
struct RerunRequest {
  static constexpr std::string_view kOp = "rerun";
  static constexpr std::string_view kDoc =
      "starts an ended task again as a new task (doc/tasks.md, \"Run "
      "again\"): its command or brief, folder, `env`, label, checks, queue, "
      "priority, limits, retries and budget; not its `after`; an agent "
      "starts a new session";
  using Reply = TaskReply;
  std::string task;
  std::optional<std::vector<std::string>> base_env;
  template <class V>
  void Fields(V& v) {
    v("task", task,
      {.required = true,
       .max_bytes = kMaxNameBytes,
       .doc = "the ended task's id"});
    v("base_env", base_env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "as for `run`: the environment it inherits now (the ended "
              "task's was never stored)"});
  }
};

// A held task changed before it starts (doc/tasks.md, "Editing a queued
// task"), as pueue's `edit`. Each field given replaces the task's; what is
// not given stays.
struct EditRequest {
  static constexpr std::string_view kOp = "edit";
  static constexpr std::string_view kDoc =
      "changes a task that is still held (status `queued`, not yet handed to "
      "the executor): its label, priority, queue, `after`, timeout, `env`, "
      "folder or command; the scheduler places it again (doc/tasks.md, "
      "\"Editing a queued task\"). A task that started, ended or waits for "
      "a retry is refused. A commit that fails takes the edit back";
  using Reply = TaskReply;
  std::string task;
  std::optional<std::string> label;
  std::optional<int64_t> priority;
  std::optional<std::string> queue;
  std::optional<std::vector<std::string>> after;
  std::optional<bool> after_any;
  std::optional<std::chrono::milliseconds> timeout;
  std::map<std::string, std::string> env;
  std::optional<std::string> cwd;
  std::optional<std::string> command;
  std::optional<std::vector<std::string>> argv;
  template <class V>
  void Fields(V& v) {
    v("task", task,
      {.required = true,
       .max_bytes = kMaxNameBytes,
       .doc = "the held task's id"});
    v("label", label,
      {.max_bytes = kMaxLabelBytes,
       .doc = "a new name for people (\"\": none)"});
    v("priority", priority,
      {.min = -1000000, .max = 1000000, .doc = "a new priority in its queue"});
    v("queue", queue,
      {.max_bytes = kMaxNameBytes,
       .doc = "another queue (`default`: the default queue); its limits "
              "stay those it was submitted with"});
    v("after", after,
      {.max_bytes = kMaxNameBytes,
       .max_items = 64,
       .doc = "replaces the tasks it starts after (`[]`: none); a task that "
              "would wait for itself, through others too, is refused"});
    v("after_any", after_any,
      {.doc = "with `after`: start at the first end of any of them"});
    v("timeout_ms", timeout,
      {.min = 1, .max = kMaxTimeoutMs, .doc = "a new timeout"});
    v("env", env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "variables set over its `env` (a shell task's)"});
    v("cwd", cwd,
      {.max_bytes = kMaxPathBytes,
       .doc = "a new absolute working directory (a shell task's)"});
    v("command", command,
      {.max_bytes = kMaxArgBytes,
       .doc = "a new shell line (a shell task's; not with `argv`)"});
    v("argv", argv,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxArgs,
       .doc = "a new command as a list, run without a shell"});
  }
};

struct GetRequest {
  static constexpr std::string_view kOp = "get";
  static constexpr std::string_view kDoc = "one task";
  using Reply = TaskReply;
  std::string task;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .max_bytes = kMaxNameBytes});
  }
};

// A person's view of the tasks (the board, doc/board.md): filters, and one
// page of the ended tasks, however long the history. Flat in `list`.
struct ListView {
  std::string owner;
  bool unowned = false;
  std::string kind;
  std::string status;
  std::string label;
  std::string search;
  int64_t ended_offset = 0;
  int64_t ended_limit = 50;
  int64_t ended_since_ms = 0;
  bool IsDefault() const {
    return owner.empty() && !unowned && kind.empty() && status.empty() &&
           label.empty() && search.empty() && ended_offset == 0 &&
           ended_limit == 50 && ended_since_ms == 0;
  }
  template <class V>
  void Fields(V& v) {
    v("owner", owner,
      {.max_bytes = kMaxNameBytes,
       .doc = "with `view`: only this session's tasks (`owners` lists "
              "them)"});
    v("unowned", unowned, {.doc = "with `view`: only unowned tasks"});
    v("kind", kind,
      {.max_bytes = kMaxNameBytes, .doc = "with `view`: `shell` \\| `agent`"});
    v("status", status,
      {.max_bytes = kMaxNameBytes,
       .doc = "with `view`: one status (`queued`, ..., `interrupted`)"});
    v("label", label,
      {.max_bytes = kMaxLabelBytes, .doc = "with `view`: exactly this label"});
    v("search", search,
      {.max_bytes = kMaxLabelBytes,
       .doc = "with `view`: found, ignoring ASCII case, in the id, the "
              "label, the command or one of its words, or the brief"});
    v("ended_offset", ended_offset,
      {.min = 0, .doc = "with `view`: ended tasks that match, skipped"});
    v("ended_limit", ended_limit,
      {.min = 1,
       .max = 1000,
       .doc = "with `view`: the page's size; default 50"});
    v("ended_since_ms", ended_since_ms,
      {.min = 0,
       .doc = "with `view`: `counts` counts the tasks that ended since this "
              "wall time (e.g. today's midnight)"});
  }
};

struct ListViewCounts {
  // Every visible live task, whatever the filters.
  int64_t running = 0;  // Running or stopping.
  int64_t waiting = 0;
  int64_t queued = 0;
  // Every visible task that ended since `ended_since_ms`.
  int64_t completed = 0;
  int64_t failed = 0;
  int64_t killed = 0;
  int64_t interrupted = 0;
  template <class V>
  void Fields(V& v) {
    v("running", running, {.doc = "running or stopping"});
    v("waiting", waiting);
    v("queued", queued);
    v("completed", completed, {.doc = "ended since `ended_since_ms`"});
    v("failed", failed);
    v("killed", killed);
    v("interrupted", interrupted);
  }
};

struct ListReply {
  std::vector<TaskView> tasks;
  int64_t hidden = 0;
  // With `view`:
  std::vector<TaskView> ended;
  int64_t ended_total = 0;
  std::optional<ListViewCounts> counts;
  std::vector<std::string> labels;
  std::vector<std::string> owners;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.doc = "creation order: every live task and the 20 most recent "
              "ended ones (all, with `all`); with `view`, the live tasks "
              "that match"});
    v("hidden", hidden, {.doc = "ended tasks left out"});
    v("ended", ended,
      {.omit_when_empty = true,
       .doc = "with `view`: the page of ended tasks that match, the most "
              "recent end first"});
    v("ended_total", ended_total,
      {.omit_when_empty = true, .doc = "with `view`: ended tasks that match"});
    v("counts", counts,
      {.omit_when_empty = true,
       .doc = "with `view`, of every visible task, unfiltered: `running` "
              "(or stopping), `waiting`, `queued`, and those that ended "
              "since `ended_since_ms`: `completed`, `failed`, `killed`, "
              "`interrupted`"});
    v("labels", labels,
      {.omit_when_empty = true,
       .doc = "with `view`: the labels of every visible task, sorted"});
    v("owners", owners,
      {.omit_when_empty = true,
       .doc = "with `view`: the sessions that own a visible task, sorted "
              "(every session's, for session `*`)"});
  }
};
struct ListRequest {
  static constexpr std::string_view kOp = "list";
  static constexpr std::string_view kDoc = "the session's tasks";
  using Reply = ListReply;
  bool all = false;
  bool view = false;
  ListView filter;
  template <class V>
  void Fields(V& v) {
    v("all", all, {.doc = "every ended task too"});
    v("view", view,
      {.doc = "a person's view (the board, doc/board.md): the live tasks "
              "and one page of the ended ones that the filters below let "
              "through, with counts and labels"});
    filter.Fields(v);
  }
  Status Validate() const;
};

struct ReadReply {
  TaskView task;
  std::string path;
  int64_t from = 0;
  int64_t to = 0;
  bool at_end = false;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true});
    v("path", path, {.doc = "the output log; copy [from, to) of it"});
    v("from", from);
    v("to", to);
    v("at_end", at_end, {.doc = "the task had ended: `to` is its end"});
  }
};
struct ReadRequest {
  static constexpr std::string_view kOp = "read";
  static constexpr std::string_view kDoc =
      "a byte range of a task's output (\"Reading output\" below)";
  using Reply = ReadReply;
  std::string task;
  ReadMode mode = ReadMode::kAll;
  int64_t offset = 0;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .max_bytes = kMaxNameBytes});
    v("mode", mode, {.doc = "`new` consumes (moves this session's cursor)"});
    v("offset", offset, {.min = 0, .doc = "for mode `offset`"});
  }
};

struct KillResult {
  std::string id;
  KillOutcome outcome = KillOutcome::kRequested;
  template <class V>
  void Fields(V& v) {
    v("id", id);
    v("outcome", outcome);
  }
};
struct KillReply {
  std::vector<KillResult> results;
  template <class V>
  void Fields(V& v) {
    v("results", results, {.max_items = kMaxTaskIds});
  }
};
struct KillRequest {
  static constexpr std::string_view kOp = "kill";
  static constexpr std::string_view kDoc =
      "stops tasks (SIGTERM, then SIGKILL); a bad id refuses the whole "
      "request";
  using Reply = KillReply;
  std::vector<std::string> tasks;
  std::string reason;
  std::optional<std::chrono::milliseconds> grace;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.required = true,
       .non_empty = true,
       .max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds});
    v("reason", reason,
      {.max_bytes = kMaxReasonBytes, .doc = "why, shown in the detail"});
    v("grace_ms", grace,
      {.max = kMaxTimeoutMs, .doc = "SIGTERM to SIGKILL (default 5 s)"});
  }
};

// Ended tasks removed with their output (doc/tasks.md, "Removing ended
// tasks").
struct RemoveSkip {
  std::string task;
  std::string why;
  template <class V>
  void Fields(V& v) {
    v("task", task);
    v("why", why, {.doc = "why it was kept, and what to do first"});
  }
};
struct RemoveReply {
  std::vector<std::string> removed;
  std::vector<RemoveSkip> kept;
  template <class V>
  void Fields(V& v) {
    v("removed", removed,
      {.doc = "the ids removed, with their records and output"});
    v("kept", kept,
      {.doc = "with `ended`: the ended tasks kept, each with why (a live "
              "task starts after it, its worktree is there, ...)"});
  }
};
struct RemoveRequest {
  static constexpr std::string_view kOp = "remove";
  static constexpr std::string_view kDoc =
      "removes ended tasks: their records, output and events (the audit "
      "trail keeps what was done); a named task that cannot be removed "
      "refuses the whole request (doc/tasks.md, \"Removing ended tasks\")";
  // Done after the loop turn's commit, in a transaction of its own: the
  // reply says what happened whatever the turn's commit did.
  static constexpr bool kReplyKeptIfCommitFails = true;
  using Reply = RemoveReply;
  std::vector<std::string> tasks;
  bool ended = false;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "the ended tasks to remove"});
    v("ended", ended,
      {.doc = "every ended task the session sees that can be removed (the "
              "others are `kept`, with why); not with `tasks`"});
  }
  Status Validate() const;
};

// An agent task that ended a turn and runs on (a wait with `turns`).
struct TurnEnd {
  std::string task;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("task", task);
    v("text", text, {.doc = "the turn's final text"});
  }
};

struct WaitReply {
  std::vector<TaskView> ended;
  std::vector<TurnEnd> turns;
  std::vector<TaskBrief> still_running;
  std::optional<int64_t> still_running_count;
  bool timed_out = false;
  std::vector<std::string> already_told;
  std::vector<std::string> told_before;
  template <class V>
  void Fields(V& v) {
    v("ended", ended,
      {.doc = "full task objects; an agent that asks counts, as `waiting`"});
    v("still_running", still_running,
      {.doc = "short task objects, or ids (form `ids`); absent with form "
              "`none`"});
    v("still_running_count", still_running_count,
      {.doc = "with form `none` only"});
    v("timed_out", timed_out);
    v("turns", turns,
      {.omit_when_empty = true,
       .doc = "with `turns`: the tasks of `ended` that ended a turn and run "
              "on, each with the turn's final text"});
    v("already_told", already_told,
      {.omit_when_empty = true,
       .doc = "ids of named tasks that ended (or ask) but whose end (or "
              "question) this session was told before: left out of `ended` "
              "while others are news (\"Waits\" below)"});
    v("told_before", told_before,
      {.omit_when_empty = true,
       .doc = "ids of tasks in `ended` whose end (or question) this session "
              "was told before this wait: with no news among the named "
              "tasks a wait answers at once, and a client that waits again "
              "on these alone spins (\"Waits\" below)"});
  }
};
// Written by hand: the list of still-running tasks takes the form asked
// for, and is left out for `none`.
void EncodeValue(std::string& out, const WaitReply& value);

struct WaitRequest {
  static constexpr std::string_view kOp = "wait";
  static constexpr std::string_view kDoc =
      "answered when any of the tasks ends or asks, as news to this session "
      "(every one, with `all`), or at the timeout (\"Waits\" below)";
  using Reply = WaitReply;
  std::vector<std::string> tasks;
  bool all = false;
  std::optional<std::chrono::milliseconds> timeout;
  StillRunningForm still_running = StillRunningForm::kBrief;
  bool turns = false;
  std::optional<int64_t> news_since_ms;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.required = true,
       .non_empty = true,
       .max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds});
    v("all", all);
    v("timeout_ms", timeout, {.max = kMaxTimeoutMs, .doc = "absent: forever"});
    v("still_running", still_running,
      {.doc = "`none`: only a count (a wait over 1,000 ids answers as "
              "quickly as over one)"});
    v("turns", turns,
      {.doc = "also answered when a named agent task ends a turn (it runs "
              "on: follow it turn by turn)"});
    v("news_since_ms", news_since_ms,
      {.min = 0,
       .doc = "a wait sent again after its connection was lost: an end at "
              "or after this wall time (ms), or an open question, is news "
              "even if this session was told it (\"Waits across a batond "
              "restart\" below)"});
  }
};

struct AttachReply {
  std::string session;
  int64_t lease_ms = 0;
  template <class V>
  void Fields(V& v) {
    v("session", session);
    v("lease_ms", lease_ms);
  }
};
struct AttachRequest {
  static constexpr std::string_view kOp = "attach";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "holds the session attached while this connection lives (needs "
      "`session`)";
  using Reply = AttachReply;
  template <class V>
  void Fields(V&) {}
};

struct SendReply {
  std::string task;
  std::string id;
  std::string delivery;
  template <class V>
  void Fields(V& v) {
    v("task", task);
    v("id", id,
      {.doc = "the message's id (`m-3`), unique within the task: a queued "
              "one can be replaced or withdrawn (`queued`) until delivered"});
    v("delivery", delivery,
      {.doc = "`steered`, `sent`, or `queued...` (a follow-up waits for the "
              "turn's end)"});
  }
};
struct SendRequest {
  static constexpr std::string_view kOp = "send";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc = "a message to an agent worker";
  using Reply = SendReply;
  std::string task;
  std::string message;
  SendMode mode = SendMode::kFollowup;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .max_bytes = kMaxNameBytes});
    v("message", message,
      {.required = true, .non_empty = true, .max_bytes = kMaxTextBytes});
    v("mode", mode);
  }
};

// A follow-up that waits for the turn's end.
struct QueuedMessage {
  std::string id;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("id", id, {.doc = "`m-3`"});
    v("text", text);
  }
};
struct QueuedReply {
  std::string task;
  std::string changed;
  std::vector<QueuedMessage> queued;
  template <class V>
  void Fields(V& v) {
    v("task", task);
    v("changed", changed,
      {.omit_when_empty = true,
       .doc = "the id replaced or withdrawn; absent for a list"});
    v("queued", queued,
      {.doc = "the follow-ups still queued, oldest (next) first"});
  }
};
struct QueuedRequest {
  static constexpr std::string_view kOp = "queued";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "an agent worker's follow-ups not yet delivered: lists them, or "
      "replaces or withdraws one; a delivered or withdrawn one is refused "
      "with `already_delivered`";
  using Reply = QueuedReply;
  std::string task;
  std::string replace;
  std::string withdraw;
  std::string message;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .max_bytes = kMaxNameBytes});
    v("replace", replace,
      {.max_bytes = kMaxNameBytes,
       .omit_when_empty = true,
       .doc = "the id of the message to replace with `message`"});
    v("withdraw", withdraw,
      {.max_bytes = kMaxNameBytes,
       .omit_when_empty = true,
       .doc = "the id of the message to withdraw"});
    v("message", message,
      {.max_bytes = kMaxTextBytes,
       .omit_when_empty = true,
       .doc = "the new text, with `replace`"});
  }
};

// What an answer recorded: the question's seq and, per item, "skip", the
// chosen option labels (a list), or the free text.
struct Answered {
  int64_t question = 0;
  std::vector<Json> answers;
  template <class V>
  void Fields(V& v) {
    v("question", question, {.doc = "the question event's seq"});
    v("answers", answers,
      {.doc = "per item: `skip`, the chosen labels (a list), or the text"});
  }
};
struct AnswerReply {
  std::string task;
  Answered answered;
  template <class V>
  void Fields(V& v) {
    v("task", task);
    v("answered", answered);
  }
};
struct AnswerRequest {
  static constexpr std::string_view kOp = "answer";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "answers an agent's open question; the first answer wins, a late one "
      "gets `already_exists`";
  using Reply = AnswerReply;
  std::string task;
  std::vector<std::string> answers;
  std::optional<int64_t> question;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .max_bytes = kMaxNameBytes});
    v("question", question,
      {.min = 0,
       .doc = "the question's `seq`: answer only while it is the oldest "
              "open one, else `already_exists` (a form answered late "
              "must not answer the next question)"});
    v("answers", answers,
      {.required = true,
       .max_bytes = kMaxTextBytes,
       .max_items = kMaxAnswers,
       .doc = "one per question item: an option number, `1,3`, a label, "
              "free text, or `skip`"});
  }
};

// An open question of the tree of agents a session directs (doc/agents.md,
// "Questions of a tree of agents").
struct TreeQuestion {
  std::string task;  // The asking task.
  std::string label;
  std::string agent;  // Its agent profile.
  // From the session's own task down to the asking one, by `parent`
  // (["agent-1", "agent-4"]); just the task for the session's own.
  std::vector<std::string> chain;
  OpenQuestion question;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true});
    v("label", label, {.omit_when_empty = true});
    v("agent", agent, {.omit_when_empty = true});
    v("chain", chain,
      {.doc = "the tasks from the session's own down to the asking one "
              "(each started by the one before)"});
    v("question", question, {.required = true});
  }
};
struct QuestionsReply {
  std::vector<TreeQuestion> questions;
  template <class V>
  void Fields(V& v) {
    v("questions", questions, {.doc = "oldest first"});
  }
};
struct QuestionsRequest {
  static constexpr std::string_view kOp = "questions";
  static constexpr std::string_view kDoc =
      "every open question of the session's agent tasks and of the workers "
      "they started, oldest first (a person's session: every one)";
  using Reply = QuestionsReply;
  template <class V>
  void Fields(V&) {}
};

struct EventsReply {
  TaskView task;
  std::vector<Json> events;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true});
    v("events", events,
      {.doc = "agent events, each with `seq`, `at` and `type` "
              "(doc/agents.md)"});
  }
};
struct EventsRequest {
  static constexpr std::string_view kOp = "events";
  static constexpr std::string_view kDoc = "an agent task's events";
  using Reply = EventsReply;
  std::string task;
  int64_t after = 0;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .max_bytes = kMaxNameBytes});
    v("after", after, {.min = 0, .doc = "only events with a larger `seq`"});
  }
};

struct AgentInfo {
  std::string name;
  AdapterKind adapter = AdapterKind::kClaude;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::string> env;  // Names only: values may be secrets.
  std::string model;
  int64_t timeout_ms = 0;
  std::string origin;
  bool is_default = false;
  template <class V>
  void Fields(V& v) {
    v("name", name);
    v("adapter", adapter);
    v("command", command);
    v("args", args);
    v("env", env, {.doc = "names only"});
    v("model", model);
    v("timeout_ms", timeout_ms);
    v("origin", origin, {.doc = "`built-in` or `<file>:<line>`"});
    v("default", is_default);
  }
};
struct AgentsReply {
  std::optional<std::string> config;
  bool config_found = false;
  std::string default_agent;
  int64_t agent_timeout_ms = 0;
  std::vector<AgentInfo> agents;
  template <class V>
  void Fields(V& v) {
    v("config", config, {.doc = "the config file looked at"});
    v("config_found", config_found);
    v("default_agent", default_agent);
    v("agent_timeout_ms", agent_timeout_ms);
    v("agents", agents);
  }
};
struct AgentsRequest {
  static constexpr std::string_view kOp = "agents";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "the agent profiles; a bad config file is the error "
      "(`invalid_config`, `invalid_model`)";
  using Reply = AgentsReply;
  std::optional<std::vector<std::string>> base_env;
  template <class V>
  void Fields(V& v) {
    v("base_env", base_env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "as for `delegate`: it names the config file"});
  }
};

// An agent task's own worktree (doc/agents.md, "Worktrees") as git tells
// it now, and what `clean` did with it.
struct WorktreeInfo {
  std::string task;
  std::string status;
  std::string repo;
  std::string path;
  std::string branch;
  std::string base;
  bool exists = false;
  bool branch_exists = false;
  bool merged = false;
  int64_t commits_not_merged = 0;
  bool uncommitted = false;
  int64_t commits_on_no_branch = 0;
  std::string locked;
  std::string state;
  std::string outcome;
  std::string note;
  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true});
    v("status", status, {.doc = "the task's"});
    v("repo", repo);
    v("path", path);
    v("branch", branch);
    v("base", base, {.doc = "the commit it was made from"});
    v("exists", exists, {.doc = "its folder is there"});
    v("branch_exists", branch_exists);
    v("merged", merged, {.doc = "its branch is in the repository's HEAD"});
    v("commits_not_merged", commits_not_merged);
    v("uncommitted", uncommitted,
      {.doc = "changes or new files not committed"});
    v("commits_on_no_branch", commits_on_no_branch,
      {.doc = "commits at its HEAD that no branch or tag holds (a detached "
              "HEAD): it is never removed while there are any"});
    v("locked", locked,
      {.omit_when_empty = true,
       .doc = "git's lock reason (`git worktree lock`): batond locks a "
              "worktree while a task runs in it"});
    v("state", state,
      {.doc = "for people: `merged`, `2 commits not merged`, `task "
              "running`, `removed`, ..."});
    v("outcome", outcome,
      {.omit_when_empty = true,
       .doc = "with `clean`: `removed` or `kept` (absent: not its turn)"});
    v("note", note,
      {.omit_when_empty = true,
       .doc = "with `clean`: why it was kept, or what became of its branch"});
  }
};
struct WorktreesReply {
  std::vector<WorktreeInfo> worktrees;
  template <class V>
  void Fields(V& v) {
    v("worktrees", worktrees,
      {.doc = "in creation order, each: `task`, `status`, `repo`, `path`, "
              "`branch`, `base`, `exists`, `branch_exists`, `merged`, "
              "`commits_not_merged`, `uncommitted`, "
              "`commits_on_no_branch`, `locked` (when it is), `state` (for "
              "people); with `clean`, `outcome` and `note`"});
  }
};
struct WorktreesRequest {
  static constexpr std::string_view kOp = "worktrees";
  // What it removed stays removed whatever the store does.
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "the worktrees of the session's agent tasks, as git tells them now; "
      "with `clean`, removes those that lose nothing (answered once git is "
      "done, off batond's loop)";
  using Reply = WorktreesReply;
  std::vector<std::string> tasks;
  bool clean = false;
  bool force = false;
  std::optional<std::vector<std::string>> base_env;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "only these tasks (an id without a worktree of the session's "
              "is `not_found`); default: all"});
    v("clean", clean,
      {.doc = "remove the worktrees of ended tasks without uncommitted "
              "changes whose branches are merged, and of the tasks named "
              "(keeping their unmerged branches); never a live task's, one "
              "with commits on no branch, or one someone else locked"});
    v("force", force,
      {.doc = "with `clean`: the tasks named lose their worktrees even with "
              "uncommitted changes, which are committed on their branches "
              "first"});
    v("base_env", base_env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "git's environment (the client's); absent: batond's"});
  }
  Status Validate() const;
};

// A queue as `queue_set` and `queue_list` answer it.
struct QueueInfo {
  std::string name;
  std::optional<int64_t> max_running;
  bool paused = false;
  int64_t running = 0;
  int64_t queued = 0;
  std::optional<ResourceLimits> limits;
  template <class V>
  void Fields(V& v) {
    v("name", name, {.doc = "`default` is the default queue"});
    v("max_running", max_running, {.doc = "null: no limit"});
    v("paused", paused, {.doc = "starts nothing new while paused"});
    v("running", running, {.doc = "its tasks started and not ended"});
    v("queued", queued,
      {.doc = "its tasks held: waiting for a slot or for other tasks"});
    v("limits", limits,
      {.omit_when_empty = true,
       .doc = "its tasks' hard limits where they give none: "
              "`memory_bytes`, `cpu_millis`, `pids` (doc/limits.md)"});
  }
};
struct QueueReply {
  QueueInfo queue;
  template <class V>
  void Fields(V& v) {
    v("queue", queue, {.required = true});
  }
};
struct QueueSetRequest {
  static constexpr std::string_view kOp = "queue_set";
  static constexpr std::string_view kDoc =
      "makes a queue (`create`) or changes one; its held tasks start as "
      "its limit allows (doc/scheduling.md)";
  using Reply = QueueReply;
  std::string name;
  bool create = false;
  std::optional<int64_t> max_running;
  std::optional<bool> paused;
  // Its tasks' default limits; 0 = none, absent = unchanged.
  std::optional<int64_t> memory_bytes;
  std::optional<double> cpus;
  std::optional<int64_t> pids;
  template <class V>
  void Fields(V& v) {
    v("name", name,
      {.required = true,
       .max_bytes = kMaxNameBytes,
       .doc = "letters, digits, `_`, `-`, `.`; `default` is the default "
              "queue"});
    v("create", create,
      {.doc = "make a new queue (`already_exists` if it exists); else it "
              "must exist (`not_found`)"});
    v("max_running", max_running,
      {.min = 0,
       .max = 1000000,
       .doc = "at most this many of its tasks run at once; 0: no limit"});
    v("paused", paused, {.doc = "start nothing new (true) or go on (false)"});
    v("memory_bytes", memory_bytes,
      {.min = 0,
       .max = int64_t{1} << 62,
       .doc = "the memory limit of each of its tasks that gives none "
              "(doc/limits.md); 0: none; at least 1 MiB"});
    v("cpus", cpus,
      {.min = 0,
       .doc = "the CPU share of each of its tasks that gives none, 0.01 to "
              "65536; 0: none"});
    v("pids", pids,
      {.min = 0,
       .max = 1 << 22,
       .doc = "the processes limit of each of its tasks that gives none; 0: "
              "none"});
  }
  Status Validate() const;
};
struct QueueListReply {
  std::vector<QueueInfo> queues;
  template <class V>
  void Fields(V& v) {
    v("queues", queues);
  }
};
struct QueueListRequest {
  static constexpr std::string_view kOp = "queue_list";
  static constexpr std::string_view kDoc = "the queues, the default first";
  using Reply = QueueListReply;
  template <class V>
  void Fields(V&) {}
};

// A session's budget over its agent tasks and what they spent
// (doc/agents.md, "Session budgets").
struct BudgetReply {
  std::string session;
  AgentBudget budget;
  AgentUsage usage;
  int64_t agent_tasks = 0;
  std::string reached;
  template <class V>
  void Fields(V& v) {
    v("session", session, {.doc = "the caller's session"});
    v("budget", budget,
      {.required = true,
       .doc = "`max_turns`, `max_tokens`, `max_cost_usd`; `{}`: none"});
    v("usage", usage,
      {.required = true,
       .doc = "summed over its agent tasks, ended ones too: "
              "`input_tokens`, `output_tokens`, `turns`, `cost_usd` (where "
              "reported)"});
    v("agent_tasks", agent_tasks, {.doc = "how many agent tasks it has"});
    v("reached", reached,
      {.doc = "the detail its stopped workers end with (\"budget: session "
              "build's max-tokens 200000 reached\"); \"\" while none is"});
  }
};
struct BudgetRequest {
  static constexpr std::string_view kOp = "budget";
  static constexpr std::string_view kDoc =
      "the caller's session budget: the sum over its agent tasks, and what "
      "they spent; a field given changes it first (doc/agents.md, \"Session "
      "budgets\")";
  using Reply = BudgetReply;
  // Each: absent = unchanged, 0 = removed.
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
  bool clear = false;
  template <class V>
  void Fields(V& v) {
    v("max_turns", max_turns,
      {.min = 0,
       .max = kMaxUsageCount,
       .doc = "model turns of its agent tasks together; 0: no limit"});
    v("max_tokens", max_tokens,
      {.min = 0,
       .max = kMaxUsageCount,
       .doc = "tokens (input and output) of its agent tasks together; 0: no "
              "limit"});
    v("max_cost_usd", max_cost_usd,
      {.min = 0,
       .max = static_cast<int64_t>(kMaxCostUsd),
       .doc = "US dollars its agent tasks may cost together (where the CLI "
              "reports a cost); 0: no limit"});
    v("clear", clear, {.doc = "remove the budget (no other field with it)"});
  }
  Status Validate() const;
};

// The audit trail (doc/audit.md): every control action, who did it, when,
// what and why; every session's, since it is the record of them all.
struct AuditReply {
  std::vector<AuditRecord> records;
  template <class V>
  void Fields(V& v) {
    v("records", records, {.doc = "oldest first"});
  }
};
inline constexpr int64_t kMaxAuditLimit = 10'000;
struct AuditRequest {
  static constexpr std::string_view kOp = "audit";
  static constexpr std::string_view kDoc =
      "the newest records of the audit trail that match, oldest first";
  using Reply = AuditReply;
  std::string task;
  int64_t since_ms = 0;
  int64_t limit = 100;
  template <class V>
  void Fields(V& v) {
    v("task", task,
      {.max_bytes = kMaxNameBytes,
       .omit_when_empty = true,
       .doc = "only this task's records"});
    v("since_ms", since_ms,
      {.min = 0, .doc = "only records at or after, in ms since the epoch"});
    v("limit", limit,
      {.min = 1, .max = kMaxAuditLimit, .doc = "at most this many (100)"});
  }
};

struct EmptyReply {
  template <class V>
  void Fields(V&) {}
};
struct NoticesRequest {
  static constexpr std::string_view kOp = "notices";
  static constexpr std::string_view kDoc = "nothing but the reply's `notices`";
  using Reply = EmptyReply;
  template <class V>
  void Fields(V&) {}
};

// How many times batond's state changed: a task started, changed status,
// ended, asked or was answered. Coarse on purpose: it says "look again",
// not what changed, so it tells no session anything of another's tasks.
struct WatchReply {
  int64_t changes = 0;
  int64_t daemon_pid = 0;
  template <class V>
  void Fields(V& v) {
    v("changes", changes,
      {.doc = "commits that changed state, and moves of the conflict "
              "radar's overlaps, since this batond started"});
    v("daemon_pid", daemon_pid,
      {.doc = "a new pid is a new batond, whose count starts again"});
  }
};
struct WatchRequest {
  static constexpr std::string_view kOp = "watch";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "answered once batond's state changed past `after` (at once when it "
      "did already): the board's live updates, pushed, never polled";
  using Reply = WatchReply;
  int64_t after = -1;
  template <class V>
  void Fields(V& v) {
    v("after", after,
      {.min = -1,
       .doc = "the `changes` last seen; -1 (default): answer at once"});
  }
};

struct DaemonStatusReply {
  int64_t daemon_pid = 0;
  int64_t supervisor_pid = 0;
  int64_t protocol = kProtocolVersion;
  std::string home;
  std::string socket;
  int64_t live_tasks = 0;
  int64_t connections = 0;
  int64_t uptime_ms = 0;
  std::string version;     // baton's version (kBatonVersion).
  std::string executable;  // The file batond runs.
  template <class V>
  void Fields(V& v) {
    v("daemon_pid", daemon_pid);
    v("supervisor_pid", supervisor_pid, {.doc = "0 when none is connected"});
    v("protocol", protocol);
    v("version", version,
      {.doc = "baton's version (`baton --version`); absent from a batond "
              "older than `daemon upgrade`"});
    v("executable", executable,
      {.doc = "the file batond runs: the one `baton daemon upgrade` started"});
    v("home", home);
    v("socket", socket);
    v("live_tasks", live_tasks);
    v("connections", connections);
    v("uptime_ms", uptime_ms);
  }
};
struct DaemonStatusRequest {
  static constexpr std::string_view kOp = "daemon_status";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc = "batond itself";
  using Reply = DaemonStatusReply;
  template <class V>
  void Fields(V&) {}
};

struct ShutdownReply {
  bool stopping = true;
  int64_t daemon_pid = 0;
  int64_t live_tasks = 0;
  int64_t killed = 0;
  template <class V>
  void Fields(V& v) {
    v("stopping", stopping);
    v("daemon_pid", daemon_pid);
    v("live_tasks", live_tasks, {.doc = "tasks left to the supervisor"});
    v("killed", killed);
  }
};
struct ShutdownRequest {
  static constexpr std::string_view kOp = "shutdown";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "stops batond (tasks keep running unless `kill_tasks`)";
  using Reply = ShutdownReply;
  bool kill_tasks = false;
  template <class V>
  void Fields(V& v) {
    v("kill_tasks", kill_tasks, {.doc = "kill every live task first"});
  }
};

// The conflict radar's current overlaps (doc/conflicts.md).
struct ConflictsReply {
  std::vector<OverlapInfo> overlaps;
  int64_t watched = 0;
  int64_t rounds = 0;
  template <class V>
  void Fields(V& v) {
    v("overlaps", overlaps,
      {.doc = "the overlaps of the session's live worktree tasks (of every "
              "session's, for a person's session), oldest first, each: "
              "`tasks`, `repo`, `kind`, `files`, `conflict_files`, "
              "`since_ms`, `checked_ms`"});
    v("watched", watched,
      {.doc = "live worktree tasks the radar watches now (those that share "
              "a repository with another), of every session"});
    v("rounds", rounds,
      {.doc = "rounds done since batond started, over every repository: "
              "what was on disk when a round began is in the answer once "
              "this has grown by two"});
  }
};
struct ConflictsRequest {
  static constexpr std::string_view kOp = "conflicts";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "the overlaps between live agent workers' changes in worktrees of one "
      "repository, as the conflict radar last saw them (at most a few "
      "seconds old; doc/conflicts.md)";
  using Reply = ConflictsReply;
  std::string task;
  template <class V>
  void Fields(V& v) {
    v("task", task,
      {.max_bytes = kMaxNameBytes,
       .doc = "only the overlaps of this task (one the session sees)"});
  }
};

// The merge queue (doc/land.md).
struct LandReply {
  std::vector<LandEntry> entries;
  template <class V>
  void Fields(V& v) {
    v("entries", entries,
      {.doc = "the entries queued, in order, each: `id`, `task`, `branch`, "
              "`target`, `state`, ... (`lands` lists them as they go)"});
  }
};
// Where and how a `land` lands, for the protocol and MCP's `land` alike.
struct LandTargetFields {
  std::string onto;
  std::string check;
  template <class V>
  void Fields(V& v) {
    v("onto", onto,
      {.max_bytes = kMaxNameBytes,
       .doc = "the target branch; default: the branch each worktree was "
              "made from",
       .example = "\"main\""});
    v("check", check,
      {.max_bytes = kMaxArgBytes,
       .doc = "the land check, a shell line run in the scratch worktree; "
              "default: the repository's `git config baton.landCheck`",
       .example = "\"make test\""});
  }
};
struct LandRequest {
  static constexpr std::string_view kOp = "land";
  static constexpr std::string_view kDoc =
      "queues finished worktree workers' branches to land on their target "
      "branch: each brought onto the target's tip in a scratch worktree, "
      "checked, and the target moved forward when green (answered once "
      "git checked them, off batond's loop; doc/land.md)";
  using Reply = LandReply;
  std::vector<std::string> tasks;
  LandTargetFields target;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.required = true,
       .max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "agent tasks of the session that ran in a worktree of their "
              "own and ended `completed`, in the order they land"});
    target.Fields(v);
  }
  Status Validate() const;
};

struct LandsReply {
  std::vector<LandEntry> entries;
  int64_t check_runs = 0;
  template <class V>
  void Fields(V& v) {
    v("entries", entries,
      {.doc = "the session's entries, unfinished and the last finished ones, "
              "by id"});
    v("check_runs", check_runs,
      {.doc = "land checks run since batond started, over every target"});
  }
};
struct LandsRequest {
  static constexpr std::string_view kOp = "lands";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "the merge queue: each entry's state, reason and resulting commit";
  using Reply = LandsReply;
  std::string task;
  template <class V>
  void Fields(V& v) {
    v("task", task,
      {.max_bytes = kMaxNameBytes, .doc = "only the entries of this task"});
  }
};

// A snapshot of what batond counts, for `baton serve`'s /metrics
// (doc/metrics.md), which formats it for Prometheus. Every label is of a
// bounded set: kinds, statuses, queues, executors, agent profiles, secret
// kinds, sessions with a budget; never a task.
struct MetricsTaskCount {
  std::string kind;
  std::string status;
  int64_t count = 0;
  template <class V>
  void Fields(V& v) {
    v("kind", kind);
    v("status", status, {.omit_when_empty = true});
    v("count", count);
  }
};
struct MetricsQueue {
  std::string queue;
  int64_t queued = 0;
  int64_t running = 0;
  template <class V>
  void Fields(V& v) {
    v("queue", queue);
    v("queued", queued);
    v("running", running);
  }
};
struct MetricsExecutor {
  std::string executor;
  int64_t running = 0;
  template <class V>
  void Fields(V& v) {
    v("executor", executor);
    v("running", running);
  }
};
struct MetricsAgent {
  std::string agent;  // The profile.
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t turns = 0;
  double cost_usd = 0;
  template <class V>
  void Fields(V& v) {
    v("agent", agent);
    v("input_tokens", input_tokens);
    v("output_tokens", output_tokens);
    v("turns", turns);
    v("cost_usd", cost_usd);
  }
};
struct MetricsBudget {
  std::string session;
  std::string resource;  // "turns", "tokens", "cost_usd"
  double left = 0;
  template <class V>
  void Fields(V& v) {
    v("session", session);
    v("resource", resource);
    v("left", left);
  }
};
struct MetricsHistogram {
  std::vector<double> bounds;    // Upper bounds, in seconds, ascending.
  std::vector<int64_t> buckets;  // Per bound, then above the last: not summed.
  double sum = 0;
  int64_t count = 0;
  template <class V>
  void Fields(V& v) {
    v("bounds", bounds, {.doc = "upper bounds in seconds, ascending"});
    v("buckets", buckets,
      {.doc = "observations per bound (above the one before), then above "
              "the last: one more entry than `bounds`, not cumulative"});
    v("sum", sum);
    v("count", count);
  }
};
struct MetricsReply {
  std::vector<MetricsTaskCount> tasks;
  std::vector<MetricsQueue> queues;
  std::vector<MetricsExecutor> executors;
  std::vector<MetricsTaskCount> started;
  std::vector<MetricsTaskCount> ended;
  std::vector<MetricsAgent> agents;
  std::vector<RedactionCount> redactions;
  std::vector<MetricsBudget> budgets;
  MetricsHistogram wake;
  MetricsHistogram queue_wait;
  int64_t supervisor_restarts = 0;
  int64_t rss_bytes = 0;
  int64_t connections = 0;
  int64_t open_waits = 0;
  int64_t uptime_ms = 0;
  template <class V>
  void Fields(V& v) {
    v("tasks", tasks,
      {.doc = "live tasks by `kind` and `status` (ended ones are counted in "
              "`ended`, not here)"});
    v("queues", queues,
      {.doc = "each queue's `queued` (held) and `running` tasks"});
    v("executors", executors,
      {.doc = "live tasks of each executor (`local`, `slurm`) that are not "
              "`queued`"});
    v("started", started,
      {.doc = "tasks handed to an executor since batond started, by `kind` "
              "(a retry counts again)"});
    v("ended", ended,
      {.doc = "tasks that ended since batond started, by `kind` and "
              "`status`"});
    v("agents", agents,
      {.doc = "what agent tasks reported spending since batond started, by "
              "profile"});
    v("redactions", redactions,
      {.doc = "secrets masked in logs since batond started, by kind"});
    v("budgets", budgets,
      {.doc = "what each session with a budget has left of each limit it "
              "sets (never below 0)"});
    v("wake", wake,
      {.doc = "seconds from a task's end recorded to the reply of a wait it "
              "answered written"});
    v("queue_wait", queue_wait,
      {.doc = "seconds from a task's creation to its first dispatch"});
    v("supervisor_restarts", supervisor_restarts,
      {.doc = "supervisors lost (and replaced) since batond started"});
    v("rss_bytes", rss_bytes, {.doc = "batond's resident memory"});
    v("connections", connections, {.doc = "open client connections"});
    v("open_waits", open_waits, {.doc = "waits not yet answered"});
    v("uptime_ms", uptime_ms);
  }
};
struct MetricsRequest {
  static constexpr std::string_view kOp = "metrics";
  static constexpr bool kReplyKeptIfCommitFails = true;
  static constexpr std::string_view kDoc =
      "what batond counts, every session's: `baton serve`'s /metrics "
      "(doc/metrics.md)";
  using Reply = MetricsReply;
  template <class V>
  void Fields(V&) {}
};

// Every request, in the order doc/protocol.md lists them.
using Request = std::variant<
    HelloRequest, RunRequest, DelegateRequest, RerunRequest, EditRequest,
    SendRequest, QueuedRequest, AnswerRequest, QuestionsRequest, EventsRequest,
    AgentsRequest, GetRequest, ListRequest, ReadRequest, KillRequest,
    RemoveRequest, WaitRequest, AttachRequest, NoticesRequest,
    DaemonStatusRequest, ShutdownRequest, WatchRequest, QueueSetRequest,
    QueueListRequest, BudgetRequest, AuditRequest, WorktreesRequest,
    ConflictsRequest, LandRequest, LandsRequest, MetricsRequest>;

}  // namespace baton

#endif  // BATON_IPC_MESSAGES_H_
