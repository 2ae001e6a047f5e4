// What `run` and `delegate` share: where the task runs and with what
// (folder, deadline, checks, this process's environment), sending the
// request, printing the new task, and `--wait`.
#ifndef BATON_CLI_TASK_START_H_
#define BATON_CLI_TASK_START_H_

#include <optional>
#include <string>
#include <vector>

#include "baton/cli/context.h"

namespace CLI {
class App;
}

namespace baton {

// The flags both verbs take.
struct PlacementFlags {
  std::string cwd;
  std::string timeout;
  std::vector<std::string> checks;
  // When it may start (doc/scheduling.md).
  std::string queue;
  int64_t priority = 0;
  std::vector<std::string> after;
  std::vector<std::string> after_any;
};

// Adds --queue, --priority, --after and --after-any to `command`.
void AddScheduleFlags(CLI::App& command, PlacementFlags& flags);

// Where it runs when not here: --on slurm and the job's resources
// (doc/slurm.md).
struct SlurmFlags {
  std::string on;  // "", "local" or "slurm".
  std::string partition;
  std::string time;
  std::string mem;
  std::string gres;
  std::vector<std::string> sbatch_args;
};
void AddSlurmFlags(CLI::App& command, SlurmFlags& flags);
// The request's `slurm` from the flags: none without --on slurm, and an
// error for a resource flag without it, or a bad --on or --time.
Result<std::optional<SlurmFields>> SlurmFieldsOf(const SlurmFlags& flags);

// Hard limits (doc/limits.md): --memory, --cpus, --pids. On Slurm,
// --cpus and --memory are the job's request. With them, --sandbox PROFILE
// (doc/sandbox.md): what its processes may write, see and reach.
struct LimitFlags {
  std::string memory;
  double cpus = 0;
  int64_t pids = 0;
  std::string sandbox;
};
void AddLimitFlags(CLI::App& command, LimitFlags& flags);
// The request's `limits`; an error for a bad --memory.
Result<LimitFields> LimitFieldsOf(const LimitFlags& flags);

// Retries (doc/scheduling.md, "Retries"): --retry N, --retry-delay D.
struct RetryFlags {
  int64_t retries = 0;
  std::string delay;
};
void AddRetryFlags(CLI::App& command, RetryFlags& flags);
// The request's `retry`; an error for a bad or too long --retry-delay.
Result<RetryFields> RetryFieldsOf(const RetryFlags& flags);

// Fills a RunRequest's or DelegateRequest's folder (absolute), deadline,
// checks, schedule, base environment, Slurm fields and limits from the
// flags; fails on a bad duration or size, --after with --after-any, or a
// Slurm flag without --on slurm.
template <class R>
Status PlaceTask(R& request, const PlacementFlags& flags,
                 const SlurmFlags& slurm, const LimitFlags& limits);

// What to do once the task is started.
enum class AfterStart {
  kReturn,       // Print the id and return.
  kWaitForEnd,   // Wait until it ends, then exit with its exit code.
  kWaitForNews,  // Wait until it ends or asks something.
};

// Sends the request, prints the new task (its id, or the document with
// --json), then waits as `after` says. Returns the exit code.
template <class R>
int StartTask(const Context& ctx, const R& request, AfterStart after);

}  // namespace baton

#endif  // BATON_CLI_TASK_START_H_
