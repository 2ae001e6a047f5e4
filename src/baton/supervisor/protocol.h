// The supervisor protocol (doc/supervisor.md): typed messages between batond
// and the supervisor and their newline-free JSON encoding. Shared by both
// ends; pure data and codec, no I/O.
#ifndef BATON_SUPERVISOR_PROTOCOL_H_
#define BATON_SUPERVISOR_PROTOCOL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/json_fields.h"
#include "baton/util/result.h"

namespace baton {

// 2: `env` requests and `env_id` in spawns. 3: the hello names the tasks
// whose ends cannot be known, and its live tasks' start times; an exit
// carries the start, the leftovers stopped, and may be `lost`; a spawn of
// an id already spawned is refused as such. A supervisor outlives batond
// across an upgrade, so batond checks the version the hello reply names
// before it uses what came later.
//
// 4: spawns carry `limits`, held by cgroups or rlimits (doc/limits.md), and
// an exit says `out_of_memory`. A supervisor of 3 would drop the limits
// unread, so batond sends no task with limits to it.
inline constexpr int kSupervisorProtocolVersion = 4;
inline constexpr int kFirstVersionWithEnvironments = 2;
inline constexpr int kFirstVersionWithLimits = 4;

// How an exit's cause is written: "natural", "killed", "timeout", "lost".
template <>
struct JsonEnum<ExitCause> {
  static constexpr std::pair<ExitCause, std::string_view> kNames[] = {
      {ExitCause::kNatural, "natural"},
      {ExitCause::kKilled, "killed"},
      {ExitCause::kTimedOut, "timeout"},
      {ExitCause::kLost, "lost"}};
};

// Each message lists its fields once, in Fields() (util/json_fields.h): the
// decoder, the encoder and the checks come from that list. A line carries
// the message's "op" first; fields a side does not know are ignored, so
// either side may be newer (the version in the hello says which).

// batond -> supervisor.
struct SupervisorHello {
  int version = kSupervisorProtocolVersion;  // batond's.
  template <class V>
  void Fields(V& v) {
    v("version", version);
  }
};

// Defines environment `id` for the spawns that follow on this connection
// (or replaces it). batond sends each distinct environment once, not the
// kilobytes of it with every spawn; ids are slots it reuses.
struct EnvRequest {
  uint64_t id = 0;
  std::vector<std::string> env;  // "K=V" entries.

  template <class V>
  void Fields(V& v) {
    v("id", id, {.required = true});
    v("env", env, {.required = true});
  }
};

struct SpawnRequest {
  std::string task;               // "shell-1"
  std::vector<std::string> argv;  // Exact; argv[0] is looked up in env PATH.
  // "K=V" entries: the whole environment, or with `env_id`, the entries
  // set over that environment (replacing those of the same name).
  std::vector<std::string> env;
  std::optional<uint64_t> env_id;
  // Not sent: the supervisor's own copy of environment `env_id` (in batond,
  // the environment it stands for, kept to send the spawn again).
  std::shared_ptr<const std::vector<std::string>> base_env;
  std::string cwd;        // Absolute; empty = "/".
  std::string log;        // Output log (stdout + stderr), appended.
  std::string exit_file;  // Where the exit record is written.
  std::optional<std::chrono::milliseconds> timeout;
  std::chrono::milliseconds grace{5000};  // Used when the timeout fires.
  // Agent tasks: stderr apart from stdout (empty = into `log` too), and
  // stdin from a file or a FIFO (empty = /dev/null). A FIFO is held open
  // by the supervisor as well, so the task never reads EOF while batond is
  // away; close_stdin releases it.
  std::string stderr_path;
  std::string stdin_path;
  bool stdin_fifo = false;
  std::optional<ResourceLimits> limits;  // Set when it has any.

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
    v("argv", argv, {.required = true, .non_empty = true});
    v("env", env, {.required = true});
    v("env_id", env_id, {.omit_when_empty = true});
    v("cwd", cwd);
    v("log", log, {.required = true, .non_empty = true});
    v("exit_file", exit_file, {.required = true, .non_empty = true});
    v("timeout_ms", timeout, {.min = 0, .omit_when_empty = true});
    v("grace_ms", grace, {.required = true, .min = 0});
    v("stderr", stderr_path, {.omit_when_empty = true});
    v("stdin", stdin_path, {.omit_when_empty = true});
    v("stdin_fifo", stdin_fifo);
    v("limits", limits, {.omit_when_empty = true});
  }
};

// Lets a task read EOF on a FIFO stdin once batond closed its end too.
struct CloseStdinRequest {
  std::string task;

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
  }
};

struct SupervisorKill {
  std::string task;
  std::chrono::milliseconds grace{5000};

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
    v("grace_ms", grace, {.required = true, .min = 0});
  }
};

// batond has committed these tasks' ends: the supervisor forgets their exit
// records instead of writing them to the exit files.
struct AckRequest {
  std::vector<std::string> tasks;

  template <class V>
  void Fields(V& v) {
    v("tasks", tasks, {.required = true});
  }
};

using SupervisorRequest =
    std::variant<SupervisorHello, SpawnRequest, SupervisorKill,
                 CloseStdinRequest, AckRequest, EnvRequest>;

// The environment a spawn runs with: `request.env` alone, or over
// `request.base_env` when it has one.
std::vector<std::string> SpawnEnvironment(const SpawnRequest& request);

// supervisor -> batond.
struct LiveTask {
  std::string task;
  int64_t pid = 0;
  int64_t started_ms = 0;  // 0 from a supervisor of protocol 2.

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
    v("pid", pid, {.required = true});
    v("started_ms", started_ms);
  }
};

struct SupervisorHelloReply {
  int64_t pid = 0;  // The supervisor's.
  std::vector<LiveTask> live;
  int version = kSupervisorProtocolVersion;  // The supervisor's protocol.
  // Tasks a supervisor that died had started, or was starting, whose end
  // nobody can tell (doc/supervisor.md, "When the supervisor dies"). Never
  // to be spawned again.
  std::vector<std::string> unknown_ends;

  template <class V>
  void Fields(V& v) {
    v("version", version);  // Absent from protocol 1.
    v("pid", pid, {.required = true});
    v("live", live, {.required = true});
    v("unknown_ends", unknown_ends, {.omit_when_empty = true});
  }
};

struct SpawnedReply {
  std::string task;
  int64_t pid = 0;  // Also the process group and session id.
  int64_t started_ms = 0;

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
    v("pid", pid, {.required = true});
    v("started_ms", started_ms, {.required = true});
  }
};

struct SpawnFailedReply {
  std::string task;
  std::string error;
  // The id was spawned before (by this supervisor or one whose journal it
  // read): it ran, or may have, so it is not run twice.
  bool already_started = false;

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
    v("error", error, {.required = true});
    v("already_started", already_started);
  }
};

// Also the content of a task's exit file.
struct ExitedEvent {
  std::string task;
  int64_t pid = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  // kLost only for a task adopted from a supervisor that died whose end
  // could not be learned.
  ExitCause cause = ExitCause::kNatural;
  int64_t ended_ms = 0;
  bool disk_full = false;
  int64_t started_ms = 0;
  // Processes the leader left in its group (or its cgroup), stopped
  // before this was sent.
  int leftovers = 0;
  // Its cgroup saw an OOM kill (doc/limits.md).
  bool out_of_memory = false;

  template <class V>
  void Fields(V& v) {
    v("task", task, {.required = true, .non_empty = true});
    v("pid", pid, {.required = true});
    v("exit_code", exit_code);
    v("signal", signal);
    v("cause", cause, {.required = true});
    v("ended_ms", ended_ms, {.required = true});
    v("disk_full", disk_full);
    v("started_ms", started_ms);
    v("leftovers", leftovers, {.min = 0});
    v("out_of_memory", out_of_memory);
  }
};

using SupervisorEvent = std::variant<SupervisorHelloReply, SpawnedReply,
                                     SpawnFailedReply, ExitedEvent>;

// One JSON object without a newline.
std::string EncodeMessage(const SupervisorHello& message);
std::string EncodeMessage(const SpawnRequest& message);
std::string EncodeMessage(const SupervisorKill& message);
std::string EncodeMessage(const CloseStdinRequest& message);
std::string EncodeMessage(const AckRequest& message);
std::string EncodeMessage(const EnvRequest& message);
std::string EncodeMessage(const SupervisorHelloReply& message);
std::string EncodeMessage(const SpawnedReply& message);
std::string EncodeMessage(const SpawnFailedReply& message);
std::string EncodeMessage(const ExitedEvent& message);

// Parse one line. Fail with kInvalidArgument on malformed JSON or missing
// fields and kNotFound on an op this side does not know (the caller logs
// and ignores both: forward compatibility). Never throw.
Result<SupervisorRequest> ParseSupervisorRequest(std::string_view line);
Result<SupervisorEvent> ParseSupervisorEvent(std::string_view line);

ExitInfo ToExitInfo(const ExitedEvent& event);

// "natural", "killed", "timeout", "lost", and back.
std::string_view ExitCauseName(ExitCause cause);
std::optional<ExitCause> ParseExitCause(std::string_view name);

}  // namespace baton

#endif  // BATON_SUPERVISOR_PROTOCOL_H_
