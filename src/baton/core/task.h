// The vocabulary of tasks: ids, kinds, statuses, what a client asks for
// (TaskSpec) and what the registry knows (TaskRecord). Pure data, no I/O.
#ifndef BATON_CORE_TASK_H_
#define BATON_CORE_TASK_H_

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/core/model_spec.h"
#include "baton/core/sandbox.h"
#include "baton/util/json_fields.h"
#include "baton/util/result.h"

namespace baton {

enum class TaskKind { kShell, kAgent };

std::string_view TaskKindName(TaskKind kind);  // "shell", "agent"
Result<TaskKind> ParseTaskKind(std::string_view name);

// `<kind>-<N>`, N counted per kind from 1, never reused.
struct TaskId {
  TaskKind kind = TaskKind::kShell;
  int64_t number = 0;

  std::string ToString() const;
  // Fails with kInvalidArgument on anything but `<kind>-<N>` with N >= 1.
  static Result<TaskId> Parse(std::string_view text);

  auto operator<=>(const TaskId&) const = default;
};

// The closed set of doc/tasks.md. Terminal: completed, failed, killed,
// interrupted.
enum class TaskStatus {
  kQueued,
  kRunning,
  kWaiting,
  kStopping,
  kCompleted,
  kFailed,
  kKilled,
  kInterrupted,
};

std::string_view TaskStatusName(TaskStatus status);
// "queued, running, ..., interrupted": every status, for messages that say
// what may be given.
std::string TaskStatusNames();
Result<TaskStatus> ParseTaskStatus(std::string_view name);
inline bool IsTerminal(TaskStatus status) {
  return status >= TaskStatus::kCompleted;
}

// How a read of a task's output starts (doc/protocol.md, "Reading output").
enum class ReadMode {
  kAll,     // [0, size): the whole output, consumes nothing.
  kNew,     // [cursor, size): what came since this session's last kNew read.
  kOffset,  // [offset, size): consumes nothing.
};

enum class KillOutcome { kRequested, kAlreadyTerminal };

// How a message reaches an agent worker: after its turn, or into it.
enum class SendMode { kFollowup, kSteer };

// An agent worker's own git worktree (doc/agents.md, "Worktrees"): a new
// branch `baton/<task id>`, made from the repository's HEAD when the task
// was submitted, checked out in a folder of its own under the state folder.
// Two workers on one repository then never touch each other's files.
struct Worktree {
  std::string repo;    // The repository's top folder, where it was asked.
  std::string path;    // The worktree's folder.
  std::string branch;  // "baton/<task id>".
  std::string base;    // The commit it was made from.
  // The branch checked out in `repo` then ("": a detached HEAD, or a task
  // from before it was recorded): where `land` brings it by default.
  std::string from;

  template <class V>
  void Fields(V& v) {
    v("repo", repo);
    v("path", path);
    v("branch", branch);
    v("base", base);
    v("from", from, {.omit_when_empty = true});
  }
};

// A budget in US dollars, a task's or a session's, is at most this.
inline constexpr double kMaxCostUsd = 1e9;
// Whether `dollars` can be a task's cost budget: finite, above 0, at most
// kMaxCostUsd. The one rule for the CLI, MCP, the config and batond.
bool IsCostBudget(double dollars);
inline constexpr char kCostBudgetRule[] =
    "a number of US dollars above 0 and at most 1e9, e.g. 2.5";

// Who answers an agent's questions: the director (the model that
// delegated it) or the director's user, asked by the MCP server that
// delegated it through a form (doc/mcp.md, "Questions for the person").
// Either way the first answer wins, from anywhere.
enum class Asker { kDirector, kPerson };
// Its names on the wire and in the store (util/json_fields.h).
template <class E>
struct JsonEnum;
template <>
struct JsonEnum<Asker> {
  static constexpr std::pair<Asker, std::string_view> kNames[] = {
      {Asker::kDirector, "director"}, {Asker::kPerson, "person"}};
};

// Which adapter reads an agent CLI's stream and speaks its protocol
// (agent/adapter.h, doc/agents.md).
enum class AdapterKind { kClaude, kCodex, kCodexExec, kAcp, kCommand };
template <>
struct JsonEnum<AdapterKind> {
  static constexpr std::pair<AdapterKind, std::string_view> kNames[] = {
      {AdapterKind::kClaude, "claude"},
      {AdapterKind::kCodex, "codex"},
      {AdapterKind::kCodexExec, "codex-exec"},
      {AdapterKind::kAcp, "acp"},
      {AdapterKind::kCommand, "command"}};
};

// What an agent task runs: an agent CLI through an adapter (doc/agents.md).
struct AgentSpec {
  std::string profile;  // The named profile ("claude", "codex", ...).
  AdapterKind adapter = AdapterKind::kClaude;
  std::string brief;  // The director's instructions.
  std::string model;  // A validated <provider>/<model>[:<effort>], or "".
  std::string resume_session;  // The CLI's own session id to resume, or "".
  std::string resume_from;     // The task id that session came from, or "".
  // Why batond chose this adapter over the profile's, for people (a codex
  // without app-server runs through codex exec, doc/agents.md); "" when it
  // did not. The task's first event too.
  std::string note;
  // How the CLI takes the model, from the profile. Only the start builds
  // the command line from it, and that line is stored: not a field.
  ModelArgs model_args;
  // How a plain command (adapter "command") resumes, from its profile
  // (doc/agents.md, "Plain commands"): the flag its session id follows on
  // the command line, and the text its output prints right before that
  // id. Empty: it cannot resume.
  std::string resume_flag;
  std::string session_id_after;
  // Its own worktree, when it asked for one. Set empty by the delegate
  // handler, filled when batond made it (before the task is stored).
  std::optional<Worktree> worktree;
  // Its budget (doc/agents.md, "Budgets"): once its usage reaches one of
  // these, batond interrupts it and it ends killed. Unset = no limit.
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;  // Input (cached too) plus output.
  std::optional<double> max_cost_usd;
  // Who answers its questions; unset: the director.
  std::optional<Asker> ask;
  bool AsksPerson() const { return ask == Asker::kPerson; }

  // The fields as stored and sent (util/json_fields.h).
  template <class V>
  void Fields(V& v) {
    v("profile", profile);
    v("adapter", adapter);
    v("brief", brief);
    v("model", model);
    v("resume_session", resume_session);
    v("resume_from", resume_from);
    v("note", note, {.omit_when_empty = true});
    v("resume_flag", resume_flag, {.omit_when_empty = true});
    v("session_id_after", session_id_after, {.omit_when_empty = true});
    v("worktree", worktree, {.omit_when_empty = true});
    v("max_turns", max_turns, {.omit_when_empty = true});
    v("max_tokens", max_tokens, {.omit_when_empty = true});
    v("max_cost_usd", max_cost_usd, {.omit_when_empty = true});
    v("ask", ask, {.omit_when_empty = true});
  }
};

// Where usage counts saturate: far past any real usage, and low enough
// that AgentUsage::tokens() (input plus output) never overflows.
inline constexpr int64_t kMaxUsageCount =
    std::numeric_limits<int64_t>::max() / 4;

// What an agent worker spent so far, as its CLI reports it in its stream
// (doc/agents.md, "Budgets"): the task's totals.
struct AgentUsage {
  int64_t input_tokens = 0;  // Cached input included.
  int64_t output_tokens = 0;
  std::optional<double> cost_usd;  // Only where the CLI reports a cost.
  // Model turns: each reply of the model where the stream shows them
  // (Claude Code), else each prompt turn.
  int64_t turns = 0;

  int64_t tokens() const { return input_tokens + output_tokens; }
  bool operator==(const AgentUsage&) const = default;

  template <class V>
  void Fields(V& v) {
    v("input_tokens", input_tokens, {.min = 0});
    v("output_tokens", output_tokens, {.min = 0});
    v("cost_usd", cost_usd, {.omit_when_empty = true});
    v("turns", turns, {.min = 0});
  }
};

// What agent work may spend (doc/agents.md, "Budgets"): a task's own (its
// AgentSpec's fields) or a session's, over all its agent tasks. Unset = no
// limit.
struct AgentBudget {
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;  // Input (cached too) plus output.
  std::optional<double> max_cost_usd;

  bool any() const { return max_turns || max_tokens || max_cost_usd; }
  bool operator==(const AgentBudget&) const = default;

  template <class V>
  void Fields(V& v) {
    v("max_turns", max_turns, {.omit_when_empty = true});
    v("max_tokens", max_tokens, {.omit_when_empty = true});
    v("max_cost_usd", max_cost_usd, {.omit_when_empty = true});
  }
};

// The budget of `budget` that `usage` reached, as the detail its task ends
// with ("budget: max-tokens 200000 reached"; with `whose` "session build":
// "budget: session build's max-tokens 200000 reached"); "" while none is.
std::string BudgetReached(const AgentBudget& budget, const AgentUsage& usage,
                          std::string_view whose = "");
// The task's own budget.
AgentBudget BudgetOf(const AgentSpec& spec);
std::string BudgetReached(const AgentSpec& spec, const AgentUsage& usage);
// `total` plus `usage`; a cost where either reports one. Counts saturate.
AgentUsage AddUsage(const AgentUsage& total, const AgentUsage& usage);
// `total` less `usage` (what AddUsage added), never below zero.
AgentUsage SubtractUsage(const AgentUsage& total, const AgentUsage& usage);

// Who asked for a kill: a client (baton kill, MCP task_kill, the board), or
// batond itself when the task reached one of its limits (a budget). A
// limit's reason is the task's whole detail, as a timeout's is, and the
// owner is still told of the end: it did not ask for it.
enum class KillOrigin { kRequest, kLimit };

// When a task may start (doc/scheduling.md): its queue, its place in it,
// and the tasks it waits for. The default (empty) is "at once".
struct Schedule {
  std::string queue;               // "" = the default queue.
  int64_t priority = 0;            // Higher starts first within a queue.
  std::vector<std::string> after;  // Task ids, each once.
  bool after_any = false;  // Start at any end of `after`, not all completed.

  bool IsDefault() const {
    return queue.empty() && priority == 0 && after.empty() && !after_any;
  }
  template <class V>
  void Fields(V& v) {
    v("queue", queue, {.omit_when_empty = true});
    v("priority", priority);
    v("after", after, {.omit_when_empty = true});
    v("after_any", after_any);
  }
};

// How a failed shell task runs again (doc/scheduling.md, "Retries"): up to
// `retries` more attempts under the same id, the first `delay_ms` after the
// failure, each later one after twice the delay before it, at most
// kMaxRetryBackoffMs (or `delay_ms`, where that is longer).
struct RetryPolicy {
  int64_t retries = 0;
  int64_t delay_ms = 5000;

  bool operator==(const RetryPolicy&) const = default;
  template <class V>
  void Fields(V& v) {
    v("retries", retries, {.min = 0});
    v("delay_ms", delay_ms, {.min = 0});
  }
};
inline constexpr int64_t kMaxRetries = 100;
inline constexpr int64_t kMaxRetryBackoffMs = 10 * 60 * 1000;
// The wait before retry `n` (1 = the first) of `policy`.
int64_t RetryDelayMs(const RetryPolicy& policy, int64_t n);

// An earlier attempt of a retried task: how it ended, and the bytes of the
// task's log it wrote ([output_from, output_to)).
struct Attempt {
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string detail;  // As its end would have been told: "exit code: 1".
  int64_t output_from = 0;
  int64_t output_to = 0;

  template <class V>
  void Fields(V& v) {
    v("started_ms", started_ms);
    v("ended_ms", ended_ms);
    v("exit_code", exit_code);
    v("signal", signal);
    v("detail", detail);
    v("output_from", output_from, {.min = 0});
    v("output_to", output_to, {.min = 0});
  }
};

// Where a task runs when it is not on this machine (doc/executors.md):
// the executor's name ("slurm") and what the task asks of it, in that
// executor's own terms (for Slurm, ipc/slurm_request.h). core/ reads only
// the name: the registry and the router know no executor by name.
struct RemoteRequest {
  std::string executor;
  Json options = Json::object();

  bool operator==(const RemoteRequest&) const = default;
  template <class V>
  void Fields(V& v) {
    v("executor", executor, {.required = true, .non_empty = true});
    v("options", options);
  }
};

// Where a task on another executor stands, as batond last saw it: the few
// fields the rest of baton learns of a job, whichever executor runs it.
struct Placement {
  std::string executor;   // RemoteRequest::executor.
  std::string job_id;     // Empty until the executor accepted the job.
  std::string partition;  // The part of the cluster it was placed in.
  std::string node;       // Once it runs.
  std::string state;      // The executor's word: PENDING, RUNNING, ...
  std::string reason;     // Its reason while pending: Resources, ...
  // The executor did not answer the last status query.
  bool unreachable = false;

  bool operator==(const Placement&) const = default;
  template <class V>
  void Fields(V& v) {
    v("executor", executor);
    v("job_id", job_id, {.omit_when_empty = true});
    v("partition", partition, {.omit_when_empty = true});
    v("node", node, {.omit_when_empty = true});
    v("state", state, {.omit_when_empty = true});
    v("reason", reason, {.omit_when_empty = true});
    v("unreachable", unreachable);
  }
};

// Hard limits on a task's processes, all of them together
// (doc/limits.md). 0 = no limit.
struct ResourceLimits {
  int64_t memory_bytes = 0;  // Resident memory (and swap).
  int64_t cpu_millis = 0;    // CPU time per second, in 1/1000 CPU: 1500 = 1.5.
  int64_t pids = 0;          // Processes and threads at once.

  bool any() const { return memory_bytes > 0 || cpu_millis > 0 || pids > 0; }
  bool operator==(const ResourceLimits&) const = default;
  template <class V>
  void Fields(V& v) {
    v("memory_bytes", memory_bytes, {.min = 0});
    v("cpu_millis", cpu_millis, {.min = 0});
    v("pids", pids, {.min = 0});
  }
};

// The limits for people: "memory 64 MiB, 1.5 CPUs, 512 processes".
std::string LimitsText(const ResourceLimits& limits);

// The default queue's name, as people see it; stored as "".
inline constexpr char kDefaultQueue[] = "default";

// The output a shell task keeps unless it says otherwise: 1 GiB
// (doc/tasks.md, "Output cap").
inline constexpr int64_t kDefaultMaxOutput = int64_t{1} << 30;

// A task's label: a short name for people, one line of plain text. The one
// bound, for every front end and batond alike.
inline constexpr size_t kMaxLabelBytes = 256;

// What a client asks to run. For a shell task exactly one of
// `shell_command` (run by /bin/sh -c) and `argv` is set; for an agent task
// `agent` is set and `argv` is the CLI's command line.
struct TaskSpec {
  TaskKind kind = TaskKind::kShell;
  std::string owner;  // Session name; empty = unowned.
  // The task whose process started this one (its client ran with that
  // task's BATON_TASK_ID): a worker's sub-worker. "" for none. Its
  // questions are its ancestors' owners' too (doc/agents.md, "Questions
  // of a tree of agents").
  std::string parent;
  // The ended task this one runs again (`rerun`), "" for none.
  std::string rerun_of;
  std::string label;
  std::optional<std::string> shell_command;
  std::vector<std::string> argv;
  std::string cwd;  // Absolute.
  // Variables the client set explicitly (persisted, shown to people).
  std::map<std::string, std::string> env_overrides;
  // The client's environment the task inherits (not persisted: it may hold
  // secrets). Empty = the daemon's own environment.
  std::vector<std::string> base_env;
  std::optional<std::chrono::milliseconds> timeout;  // Deadline after start.
  std::optional<AgentSpec> agent;                    // Set for kind agent.
  // Stdin: /dev/null by default; `stdin_text` as a file, or a pipe (FIFO)
  // that batond writes lines to. Not persisted (only needed to spawn).
  std::optional<std::string> stdin_text;
  bool stdin_pipe = false;
  // Commands run in `cwd` when the task ends; their results go into the
  // task's evidence.
  std::vector<std::string> checks;
  Schedule schedule;
  // Bytes of output a shell task keeps; past them what it prints is
  // dropped and counted (doc/tasks.md, "Output cap"). 0 = no cap.
  int64_t max_output = kDefaultMaxOutput;
  // Secrets of well-known shapes in its output are masked in place
  // (doc/redaction.md); false keeps the log as printed (`run --no-redact`).
  bool redact = true;
  RetryPolicy retry;
  // Held by the supervisor (cgroups, else rlimits; doc/limits.md).
  ResourceLimits limits;
  // Set: its whole process tree runs in this sandbox (doc/sandbox.md), the
  // profile as resolved when it was submitted.
  std::optional<SandboxProfile> sandbox;
  // Set: the task runs on another executor (a Slurm cluster), not on
  // this machine.
  std::optional<RemoteRequest> remote;
};

// The files of an agent task in its folder (Executor::TaskDir): the CLI's
// stdout (its protocol stream) and stderr, its stdin, and the normalized
// events batond derives from the stream. output.log holds the transcript.
inline constexpr char kAgentStreamFile[] = "stream.jsonl";
inline constexpr char kAgentStderrFile[] = "stderr.log";
inline constexpr char kStdinFile[] = "stdin";
inline constexpr char kAgentEventsFile[] = "events.jsonl";
// What holds a task with limits to them, written by the supervisor when it
// starts it into kTaskLimitsFile: `{"held_by": "cgroup v1: memory, pids"}`
// (doc/limits.md).
inline constexpr char kTaskLimitsFile[] = "limits.json";
// The diff of a git folder's changes, kept as evidence when the task ends
// (Evidence::diff_path).
inline constexpr char kTaskDiffFile[] = "diff.patch";
// What batond masked in a task's log so far (doc/redaction.md), kept in
// kTaskRedactionsFile by batond: `{"masked": [{"kind": "github-token",
// "count": 2}]}`.
inline constexpr char kTaskRedactionsFile[] = "redactions.json";
struct RedactionCount {
  std::string kind;  // "github-token"
  int64_t count = 0;
  template <class V>
  void Fields(V& v) {
    v("kind", kind);
    v("count", count);
  }
};
struct RedactionsFile {
  std::vector<RedactionCount> masked;
  template <class V>
  void Fields(V& v) {
    v("masked", masked);
  }
};
// For people: "3 secrets masked (2 github-token, 1 aws-key)"; "" for none.
std::string RedactionsText(const std::vector<RedactionCount>& masked);
struct LimitsHeld {
  std::string held_by;
  template <class V>
  void Fields(V& v) {
    v("held_by", held_by);
  }
};

// What a task left behind, collected when it ended (checks and evidence).
struct CheckResult {
  std::string command;
  int exit_code = -1;  // 128+N for a death by signal N.
  std::string tail;    // The last lines of its output.

  template <class V>
  void Fields(V& v) {
    v("command", command);
    v("exit_code", exit_code);
    v("tail", tail);
  }
};
// What a worktree task's branch holds against the commit it was made from.
struct BranchEvidence {
  std::string branch;
  std::string base;
  std::vector<std::string> commits;  // "<short sha> <subject>", oldest first.
  // `git diff --stat <base>` in the worktree: committed and uncommitted
  // changes to tracked files.
  std::string diff_stat;
  bool uncommitted = false;  // Changes (or new files) not committed.

  template <class V>
  void Fields(V& v) {
    v("branch", branch);
    v("base", base);
    v("commits", commits);
    v("diff_stat", diff_stat);
    v("uncommitted", uncommitted);
  }
};

struct Evidence {
  // How changed files were found: "git" or "scan" (a before/after scan of
  // the folder, narrowed by git status in a repository), or "worktree"
  // (the worktree against its base, doc/agents.md).
  std::string source;
  std::vector<std::string> changed_files;
  std::vector<CheckResult> checks;
  // Other tasks that worked in the same folder while this one ran.
  std::vector<std::string> overlapping_tasks;
  std::optional<BranchEvidence> branch;  // A worktree task's.
  // In a git folder: the diff of the changed files against HEAD at the
  // end; in a worktree, against its base (commits included). New files
  // are included. Written beside the task's output; "" when there is
  // none. Cut at a line when longer than 1 MiB (doc/tasks.md).
  std::string diff_path;
  bool diff_truncated = false;

  template <class V>
  void Fields(V& v) {
    v("source", source);
    v("changed_files", changed_files);
    v("checks", checks);
    v("overlapping_tasks", overlapping_tasks);
    v("branch", branch, {.omit_when_empty = true});
    v("diff_path", diff_path, {.omit_when_empty = true});
    v("diff_truncated", diff_truncated);
  }
};

// Why a process ended, as the executor saw it.
enum class ExitCause { kNatural, kKilled, kTimedOut, kLost };

struct ExitInfo {
  ExitCause cause = ExitCause::kNatural;
  std::optional<int> exit_code;   // Set when the process exited.
  std::optional<int> signal;      // Set when a signal ended it.
  int64_t ended_ms = 0;           // Wall time.
  bool output_disk_full = false;  // The output log's file system was full.
  // An agent's own verdict on how its work ended (from its result event),
  // which decides the status of a natural exit.
  std::optional<TaskStatus> verdict;
  std::string verdict_detail;
  // An agent that batond was stopping at a budget ended its last turn with
  // its result before the stop took: its verdict stands (doc/agents.md,
  // "Budgets").
  bool work_done_at_stop = false;
  std::optional<Evidence> evidence;  // When the task had checks.
  // The start, as the executor recorded it with the exit: batond may not
  // have heard of the start before a crash (0 = not known).
  int64_t pid = 0;
  int64_t started_ms = 0;
  // Processes the task's leader left in its process group, which the
  // executor stopped before it reported the end.
  int leftovers_stopped = 0;
  // Bytes of output dropped past the task's cap (its log ends with a
  // marker saying so).
  int64_t output_dropped = 0;
  // The kernel killed a process of it at its memory limit (a cgroup's OOM
  // kill; doc/limits.md): the task failed, whatever its exit status.
  bool out_of_memory = false;
};

// Everything the registry knows of one task; the row of the tasks table.
struct TaskRecord {
  TaskId id;
  TaskSpec spec;
  TaskStatus status = TaskStatus::kQueued;
  std::string detail;
  std::optional<int> exit_code;
  std::optional<int> signal;
  int64_t pid = 0;         // 0 until spawned.
  int64_t created_ms = 0;  // Wall times; 0 = not yet.
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
  std::string kill_reason;  // Set when a kill was requested.
  // The kill was batond's own, at a limit (KillOrigin::kLimit).
  bool killed_at_limit = false;
  bool end_seen = false;  // The owner saw the end (read, wait, kill, status).
  bool notice_delivered = false;
  // A waiting agent task: its owner was told of the open question (a
  // notice, a wait, a read or a status); false again at its next question.
  bool question_told = false;
  std::string output_path;
  std::string agent_session;  // The agent CLI's own session id, once known.
  std::optional<Evidence> evidence;  // Once checks ran (tasks with checks).
  // Bytes of output dropped past spec.max_output, once it ended.
  int64_t output_dropped = 0;
  // An agent task's usage, once its CLI reported some.
  std::optional<AgentUsage> usage;
  // Queued and not yet handed to the executor: its queue has no free slot,
  // or it waits for other tasks (doc/scheduling.md). While held, the
  // client's environment (spec.base_env) is kept with it, since a batond
  // restart must still start it with that environment.
  bool held = false;
  // Its earlier attempts, oldest first, when it failed and was run again
  // (spec.retry); the record's own fields are the current attempt's.
  std::vector<Attempt> attempts;
  // Held after a failed attempt: the wall time its retry may start (0 once
  // released to its queue, and for every other task).
  int64_t retry_at_ms = 0;
  // A task on another executor: its job, once submitted.
  std::optional<Placement> placement;
};

// A task handed to this machine's supervisor whose spawn has not been
// reported yet: stored `queued` until the supervisor says its process is
// there, a moment later, yet no longer waiting for its turn. Clients are
// told `running` with detail `starting` (ipc/task_wire.cc, doc/tasks.md).
// A held task (a slot, `after`, a retry's delay) and a remote job (pending
// in its executor's queue) are not starting: they are queued.
inline bool IsStarting(const TaskRecord& task) {
  return task.status == TaskStatus::kQueued && !task.held && !task.spec.remote;
}
// The status as people and programs read it: IsStarting says `running`.
inline TaskStatus ToldStatus(const TaskRecord& task) {
  return IsStarting(task) ? TaskStatus::kRunning : task.status;
}

// The detail as people read it beside the status: without the status said
// again ("killed: by request" beside "killed" reads "by request").
std::string_view DetailBesideStatus(const TaskRecord& task);

// A remote job's state for people, as a live task's detail: "slurm job 12
// pending (Resources)", "slurm job 12 on node1", "slurm unreachable (job
// 12 was running)".
std::string PlacementText(const Placement& job);

// The name the executor runs the current attempt of `task` under: its id
// for the first, "<id>.<n>" for attempt n. Each attempt is then spawned
// once and only once, as a task is (doc/supervisor.md, "Exactly once").
std::string RunName(const TaskRecord& task);
// The task a RunName names; fails on anything else.
Result<TaskId> TaskIdOfRun(std::string_view run);
// Whether batond keeps the client's environment (spec.base_env) with the
// task, stored: while it is held, and while a retry may still need it.
bool KeepsEnvironment(const TaskRecord& task);

// What a task sets over its base environment (spec.base_env, else batond's
// own): its env_overrides and BATON_TASK_ID, as "NAME=value" entries in
// name order.
std::vector<std::string> TaskEnvironmentEntries(const TaskRecord& task);

// "SIGTERM" for 15; "signal 77" for unknown numbers.
std::string SignalName(int signal);
// The number of a name SignalName gives; nullopt for anything else.
std::optional<int> SignalFromName(std::string_view name);

// The command line as one string, for people ("make -j4"): the shell line,
// or the arguments quoted for a POSIX shell where they need it.
std::string CommandText(const TaskSpec& spec);

// Whether an environment variable's name looks like it holds a secret
// (*KEY*, *TOKEN*, *SECRET*, *PASS*, *CREDENTIAL*, *PRIVATE*, *AUTH* but
// not *AUTHOR*, case-insensitive): listings show its value as "***"
// (doc/security.md).
bool LooksSecret(std::string_view name);

// The status and detail that `exit` means for `task` (doc/tasks.md):
// completed only for exit code 0 without a kill and with every check
// passed (a failed check makes it failed, its exit code kept); killed only
// when baton stopped it; interrupted when the runtime lost it. Also the start
// the exit carries, where the task has none yet.
void ApplyExit(const ExitInfo& exit, TaskRecord& task);

}  // namespace baton

#endif  // BATON_CORE_TASK_H_
