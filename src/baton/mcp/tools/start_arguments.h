// The arguments `run` and `delegate` share: where the task works, when it
// may start (the protocol's ScheduleFields), where it runs (the protocol's
// SlurmFields), its retries and its hard limits, in the units a model
// writes (seconds, "2G"). Each is described once, here or in
// ipc/messages.h; mcp/arguments.h makes their schema and parsing.
#ifndef BATON_MCP_TOOLS_START_ARGUMENTS_H_
#define BATON_MCP_TOOLS_START_ARGUMENTS_H_

#include <optional>
#include <string>
#include <vector>

#include "baton/ipc/messages.h"
#include "baton/mcp/arguments.h"

namespace baton::mcp {

// doc/scheduling.md, "Retries".
struct RetryArguments {
  int64_t retries = 0;
  std::optional<Seconds> retry_delay_s;
  template <class V>
  void Fields(V& v) {
    v("retries", retries,
      {.min = 0,
       .max = kMaxRetries,
       .doc = "Run it again, up to this many times, when it fails or times "
              "out (not when killed): one task id, each attempt's exit and "
              "output recorded in task_status; waits see only the last end. "
              "An agent starts again from its brief",
       .example = "3"});
    v("retry_delay_s", retry_delay_s,
      {.min = 0,
       .max = kMaxRetryBackoffMs / 1000,
       .doc = "Seconds before the first retry, doubled for each next one "
              "(at most 600); default 5",
       .example = "5"});
  }
  RetryFields ToWire() const;
};

// doc/limits.md.
struct LimitArguments {
  std::optional<ByteSize> memory;
  std::optional<double> cpus;
  std::optional<int64_t> pids;
  template <class V>
  void Fields(V& v) {
    v("memory", memory,
      {.min = int64_t{1} << 20,
       .doc = "Memory for all its processes together, e.g. \"2G\" (at least "
              "1M); past it they are killed and the task fails, out of "
              "memory. With on: slurm, the job's memory",
       .example = "\"2G\""});
    v("cpus", cpus,
      {.min = 0,
       .max = 65536,
       .above_min = true,
       .doc = "CPU time it may use, in CPUs, e.g. 1.5. With on: slurm, whole "
              "CPUs for the job",
       .example = "1.5"});
    v("pids", pids,
      {.min = 1,
       .max = 1 << 22,
       .doc = "Processes and threads it may have at once",
       .example = "64"});
  }
  LimitFields ToWire() const;
};

struct StartArguments {
  std::string cwd;
  std::string label;
  std::vector<std::string> checks;
  ScheduleFields schedule;
  RetryArguments retry;
  SlurmFields slurm;
  LimitArguments limits;
  std::string sandbox;
  template <class V>
  void Fields(V& v) {
    v("cwd", cwd,
      {.max_bytes = kMaxPathBytes,
       .doc = "Working directory (absolute, or relative to the server's); "
              "default: the server's, or for a resumed agent where its "
              "session ran"});
    v("label", label,
      {.max_bytes = kMaxLabelBytes,
       .doc = "A short name for the task, e.g. \"tests\""});
    v("checks", checks,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxChecks,
       .doc = "Shell commands run in its folder when it ends, e.g. [\"make "
              "test\"]; a check that fails makes the task failed, and their "
              "exit codes and last lines join its end",
       .example = "[\"make test\"]"});
    schedule.Fields(v);
    retry.Fields(v);
    slurm.Fields(v);
    limits.Fields(v);
    v("sandbox", sandbox,
      {.max_bytes = kMaxNameBytes,
       .doc = "Run its whole process tree in a sandbox profile: \"strict\" "
              "(writes only its folder and a private /tmp, no network), "
              "\"agent\" (also the agent CLIs' own folders, network on), "
              "\"build\" (also the build caches, network on), or one of "
              "the config's; credentials and baton's state are hidden "
              "(doc/sandbox.md). For delegate, default: the agent profile's",
       .example = "\"strict\""});
  }
  // Fills these fields of `request` (a RunRequest or a DelegateRequest):
  // its folder (a relative cwd is relative to the server's, which clients
  // start in the project folder; "" stays "" for the caller to choose),
  // label, checks, schedule, retries, Slurm job and limits.
  template <class R>
  void ApplyTo(R& request, const std::string& server_cwd) const {
    request.cwd = cwd.empty() || cwd[0] == '/' ? cwd : server_cwd + "/" + cwd;
    request.label = label;
    request.checks = checks;
    request.schedule = schedule;
    request.retry = retry.ToWire();
    request.slurm = slurm;
    request.limits = limits.ToWire();
    request.sandbox = sandbox;
  }
};

}  // namespace baton::mcp

#endif  // BATON_MCP_TOOLS_START_ARGUMENTS_H_
