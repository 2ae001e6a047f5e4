// The one codec of batond's client protocol (doc/protocol.md): request and
// reply lines, the task object, errors and notices, for batond and for
// every client. Decoding checks every field and never throws; a bad line
// gets an error that names the field. The messages are in messages.h.
#ifndef BATON_IPC_CODEC_H_
#define BATON_IPC_CODEC_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/messages.h"
#include "baton/util/json_fields.h"
#include "baton/util/result.h"

namespace baton {

// The task object, field by field as it goes on the wire (doc/protocol.md,
// "The task object"). TaskView converts to and from it.
struct TaskWire {
  std::string id;
  std::string kind;
  std::string status;
  std::string detail;
  std::optional<int64_t> exit_code;
  std::optional<std::string> signal;
  std::string label;
  std::string command;
  std::optional<std::vector<std::string>> argv;
  std::string cwd;
  std::map<std::string, std::string> env;
  std::optional<std::string> owner;
  std::optional<int64_t> pid;
  std::optional<int64_t> timeout_ms;
  std::optional<std::string> created_at;
  std::optional<std::string> started_at;
  std::optional<std::string> ended_at;
  std::optional<int64_t> duration_ms;
  std::optional<std::string> kill_reason;
  std::string output_path;
  std::optional<int64_t> output_bytes;
  std::optional<AgentSpec> agent;
  std::string agent_session;
  std::string parent;
  std::string rerun_of;
  std::vector<std::string> checks;
  std::optional<Evidence> evidence;
  std::vector<OpenQuestion> questions;
  std::optional<Schedule> schedule;
  std::optional<int64_t> max_output;
  std::optional<int64_t> output_dropped;
  std::optional<AgentUsage> usage;
  std::optional<RetryPolicy> retry;
  std::vector<Attempt> attempts;
  std::optional<std::string> retry_at;
  std::optional<RemoteRequest> remote;
  std::optional<Placement> placement;
  std::optional<ResourceLimits> limits;
  std::string limits_held_by;
  std::optional<SandboxProfile> sandbox;
  std::optional<bool> redact;
  std::vector<RedactionCount> redactions;
  bool uncollected = false;

  template <class V>
  void Fields(V& v) {
    v("id", id, {.required = true, .doc = "`<kind>-<N>`"});
    v("kind", kind, {.doc = "`shell` \\| `agent`"});
    v("status", status,
      {.required = true,
       .doc = "queued, running, waiting, stopping, completed, failed, "
              "killed, interrupted"});
    v("detail", detail, {.doc = "e.g. `exit code: 3`, `signal: SIGKILL`"});
    v("exit_code", exit_code);
    v("signal", signal, {.doc = "e.g. `SIGKILL`"});
    v("label", label);
    v("command", command, {.doc = "the command line, for people"});
    v("argv", argv, {.doc = "null for a shell line"});
    v("cwd", cwd);
    v("env", env, {.doc = "the variables set for it (secrets masked)"});
    v("owner", owner, {.doc = "its session; null = unowned"});
    v("pid", pid);
    v("timeout_ms", timeout_ms);
    v("created_at", created_at, {.doc = "ISO 8601 UTC"});
    v("started_at", started_at);
    v("ended_at", ended_at);
    v("duration_ms", duration_ms);
    v("kill_reason", kill_reason);
    v("output_path", output_path);
    v("output_bytes", output_bytes,
      {.omit_when_empty = true, .doc = "when known"});
    v("agent", agent,
      {.omit_when_empty = true,
       .doc = "agent tasks: `profile`, `adapter`, `brief`, `model`, "
              "`resume_session`, `resume_from`, `note`, `worktree` (its own: "
              "`repo`, `path`, `branch`, `base`; doc/agents.md), "
              "`max_turns`, `max_tokens`, `max_cost_usd` (its budget), "
              "`ask` (`person`: its questions go to the MCP client's "
              "user, doc/mcp.md)"});
    v("agent_session", agent_session,
      {.omit_when_empty = true, .doc = "the agent CLI's own session id"});
    v("parent", parent,
      {.omit_when_empty = true,
       .doc = "the task whose process started this one (a worker's "
              "sub-worker, doc/agents.md)"});
    v("rerun_of", rerun_of,
      {.omit_when_empty = true,
       .doc = "the ended task this one runs again (`rerun`)"});
    v("checks", checks, {.omit_when_empty = true});
    v("evidence", evidence,
      {.omit_when_empty = true,
       .doc = "once its checks ran, or a worktree task ended: `source`, "
              "`changed_files`, `checks`, `overlapping_tasks`, `branch` (a "
              "worktree's: its commits and diff against its base)"});
    v("questions", questions,
      {.omit_when_empty = true,
       .doc = "a waiting agent's open questions, oldest first"});
    v("schedule", schedule,
      {.omit_when_empty = true,
       .doc = "when it was given one: `queue`, `priority`, `after` (ids), "
              "`after_any` (doc/scheduling.md)"});
    v("max_output", max_output,
      {.omit_when_empty = true,
       .doc = "shell tasks: the bytes of output it keeps (0: no cap; "
              "doc/tasks.md, \"Output cap\")"});
    v("output_dropped", output_dropped,
      {.omit_when_empty = true,
       .doc = "bytes it printed past `max_output`, dropped (so far, while it "
              "runs); its log ends with a marker saying so"});
    v("usage", usage,
      {.omit_when_empty = true,
       .doc = "agent tasks, once the CLI reported some: `input_tokens` "
              "(cached too), `output_tokens`, `cost_usd` (where the CLI "
              "reports a cost), `turns` (doc/agents.md, \"Budgets\")"});
    v("retry", retry,
      {.omit_when_empty = true,
       .doc = "shell tasks run again when they fail: `retries`, `delay_ms` "
              "(doubled each time; doc/scheduling.md, \"Retries\")"});
    v("attempts", attempts,
      {.omit_when_empty = true,
       .doc = "its earlier attempts, oldest first: `started_ms`, `ended_ms`, "
              "`exit_code`, `signal` (a number), `detail`, and the bytes of "
              "its log each wrote (`output_from`, `output_to`)"});
    v("retry_at", retry_at,
      {.omit_when_empty = true,
       .doc = "held for a retry: when it may start again (ISO 8601 UTC)"});
    v("remote", remote,
      {.omit_when_empty = true,
       .doc = "a task that runs on another executor: its name (`executor`: "
              "`slurm`) and what the task asked of it (`options`; for "
              "Slurm: `partition`, `account`, `time_limit_s`, `cpus`, `mem`, "
              "`gres`, `sbatch_args`, `shared_dir`, and the client's "
              "`slurm_conf` and `path` its Slurm commands run with; "
              "doc/slurm.md)"});
    v("placement", placement,
      {.omit_when_empty = true,
       .doc = "its job there as last seen: `executor`, `job_id`, "
              "`partition`, `node`, `state` and `reason` (the executor's "
              "words), `unreachable` (the executor did not answer)"});
    v("limits", limits,
      {.omit_when_empty = true,
       .doc = "its hard limits (`memory_bytes`, `cpu_millis`, `pids`; "
              "doc/limits.md)"});
    v("limits_held_by", limits_held_by,
      {.omit_when_empty = true,
       .doc = "in a task's `get`: what holds it to them, e.g. `cgroup v1: "
              "memory, cpus, pids`, or `rlimit: memory (address space); not "
              "held: cpus, pids`"});
    v("sandbox", sandbox,
      {.omit_when_empty = true,
       .doc = "the sandbox its processes run in (doc/sandbox.md): `name`, "
              "`network` (`none` \\| `full`), `writable`, `grant`, `env`, "
              "`required`"});
    v("redact", redact,
      {.omit_when_empty = true,
       .doc = "`false` when its output is kept as printed (`run "
              "--no-redact`); absent, secrets in it are masked "
              "(doc/redaction.md)"});
    v("redactions", redactions,
      {.omit_when_empty = true,
       .doc = "in a task's `get`: the secrets masked in its output so far, "
              "`kind` and `count` each, e.g. `[{\"kind\": \"github-token\", "
              "\"count\": 2}]`"});
    v("uncollected", uncollected,
      {.doc = "it ended and its owner has not yet seen the end (by a read, "
              "wait, status or kill): what a director that lost track "
              "collects"});
  }
};

TaskWire ToWire(const TaskView& view);
Result<TaskView> FromWire(TaskWire wire);

// An error on the wire.
struct WireError {
  std::string code;
  std::string message;
  template <class V>
  void Fields(V& v) {
    v("code", code, {.doc = "see \"Error codes\""});
    v("message", message, {.doc = "what was wrong and how to fix it"});
  }
};
WireError ToWire(const Error& error);
Error FromWire(const WireError& error);

// ---- requests -----------------------------------------------------------

// One request as a line (without the '\n'): id, op, session, then its
// fields.
template <class R>
std::string EncodeRequestLine(int64_t id, std::string_view session,
                              const R& request) {
  std::string line;
  JsonEncoder encoder(line);
  encoder("id", id);
  encoder("op", R::kOp);
  if (!session.empty())
    encoder("session", session);
  const_cast<R&>(request).Fields(encoder);
  encoder.Finish();
  return line;
}

// A request as batond reads it.
struct RequestLine {
  std::string id_json = "null";  // The id exactly as it came, as JSON.
  std::string session;
  Request request;
};
// Why a line is not a request, with its id when that could be read.
struct BadRequest {
  std::string id_json = "null";
  Error error;
};

// Parses, checks and types one request line.
std::expected<RequestLine, BadRequest> DecodeRequestLine(std::string_view line);

// The op of a request.
std::string_view OpOf(const Request& request);

// ---- replies --------------------------------------------------------------

// A reply line (without the '\n'): `result_json` is the result object's
// text (EncodeObject of the op's Reply) or the error; `notices_json` the
// notices list's text, or "" for none.
std::string EncodeReplyLine(std::string_view id_json,
                            const Result<std::string>& result_json,
                            std::string_view notices_json);

// A reply as a client reads it.
struct ReplyLine {
  std::optional<int64_t> id;  // Our clients' ids are integers.
  bool ok = false;
  Json result;  // When ok.
  Error error;  // When not.
  std::vector<Notice> notices;
};
Result<ReplyLine> DecodeReplyLine(std::string_view line);

// The reply's result as the op's Reply type, or the daemon's error.
template <class R>
Result<R> DecodeResult(const ReplyLine& reply, std::string_view op) {
  if (!reply.ok)
    return std::unexpected(reply.error);
  auto result =
      DecodeObject<R>(reply.result, fmt::format("batond's reply to '{}'", op),
                      /*reject_unknown=*/false);
  if (!result) {
    return MakeError(ErrorCode::kIncompatible,
                     result.error().message +
                         " (is batond of another version? replace it "
                         "with this baton's: baton daemon upgrade)");
  }
  return result;
}

// A JSON document for people and scripts (the CLI's --json): `object`'s
// text with "notices" added when there are some.
std::string WithNotices(std::string object_json,
                        const std::vector<Notice>& notices);

}  // namespace baton

#endif  // BATON_IPC_CODEC_H_
