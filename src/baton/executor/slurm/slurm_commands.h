// What baton says to Slurm's commands and how it reads their answers
// (doc/slurm.md): the job script that wraps a task, sbatch's arguments,
// and the parsers of sbatch, squeue, scontrol and sacct output, with the
// mapping of Slurm's job states to baton's ends. No I/O.
#ifndef BATON_EXECUTOR_SLURM_SLURM_COMMANDS_H_
#define BATON_EXECUTOR_SLURM_SLURM_COMMANDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/task.h"
#include "baton/ipc/slurm_request.h"
#include "baton/util/result.h"

namespace baton {

// The files of a task's job in its job folder (SlurmExecutor::JobDir): the
// script sbatch gets, and what the script writes as the task runs, for
// batond to read even when the controller does not answer.
inline constexpr char kSlurmScriptFile[] = "job.sh";
inline constexpr char kSlurmStartedFile[] = "slurm-started.json";
inline constexpr char kSlurmExitFile[] = "slurm-exit.json";
// An agent task's stdin is a file batond appends to (kStdinFile) and this
// marker ends (CloseStdin); the job's own messages go to kSlurmJobLog.
inline constexpr char kSlurmStdinClosedFile[] = "stdin.closed";
inline constexpr char kSlurmJobLog[] = "slurm-job.log";

// The job's name: "baton-<home tag>-<run>", so that a batond that died
// between sbatch's answer and its commit finds the job again by name.
std::string SlurmJobName(std::string_view home_tag, std::string_view run);

// The job script: goes to the task's folder, runs its command (a shell
// line through /bin/sh -c, or its argv), and records when it started (and
// on which node) and how the command ended, each file written whole
// (written aside, then renamed).
std::string SlurmJobScript(const TaskRecord& task, const std::string& job_dir);

// sbatch's argument list (program first) for `task`, whose job script is
// at `script`. `test_only`: --test-only, the preflight (nothing is
// submitted). Resources left 0 or empty are not passed.
// The Slurm request of a task the executor takes: its RemoteRequest's
// options. Options this build cannot read (SlurmExecutor::Accepts refuses
// them at submit, so only a store written by another build has them) read
// as Slurm's defaults, logged.
SlurmRequest RequestOf(const TaskSpec& spec);

std::vector<std::string> SbatchArgv(const TaskRecord& task,
                                    const std::string& job_name,
                                    const std::string& script,
                                    const std::string& output, bool test_only);

// The job id from `sbatch --parsable` ("12" or "12;cluster").
Result<std::string> ParseSbatchJobId(std::string_view out);

// One line of `squeue -h -t all -o <kSqueueFormat>`.
inline constexpr char kSqueueFormat[] = "%i|%T|%r|%N|%P";
struct SqueueRow {
  std::string job_id;
  std::string state;   // PENDING, RUNNING, COMPLETED, ...
  std::string reason;  // While pending: Resources, Priority, ...
  std::string node;    // Once it runs.
  std::string partition;
};
// Skips lines that are not rows (a warning on stdout).
std::vector<SqueueRow> ParseSqueue(std::string_view out);

// How a job ended, as Slurm tells it.
struct SlurmEnd {
  std::string state;  // COMPLETED, FAILED, TIMEOUT, CANCELLED, ...
  int exit_code = 0;  // ExitCode=E:S
  int signal = 0;
  std::string reason;        // scontrol's Reason=
  std::string cancelled_by;  // sacct's "CANCELLED by <uid>": the uid.
};
// `scontrol show job -o ID`: JobState, ExitCode, Reason. nullopt when the
// line has no JobState.
std::optional<SlurmEnd> ParseScontrolJob(std::string_view out);
// `sacct -n -X -P -o JobID,State,ExitCode` (or with --completion): by job
// id; steps ("12.batch") are skipped.
std::map<std::string, SlurmEnd> ParseSacct(std::string_view out);

// Whether `state` (squeue's %T) is an end.
bool IsSlurmEndState(std::string_view state);

// What the job script recorded: the command's exit status as the shell
// saw it (128+N after signal N), and wall times.
struct JobRecord {
  int status = 0;
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
  std::string node;
  std::string partition;  // The start record's: where Slurm placed it.
};
std::optional<JobRecord> ParseJobRecord(std::string_view text);

// The end to report for a job. `end` is Slurm's word on it (nullopt: not
// known, e.g. the controller did not answer or forgot it), `record` the
// script's (nullopt: it wrote none), `killed` whether baton cancelled it.
// The command's own exit status wins where the job simply ran to its end;
// Slurm's state where Slurm ended it (timeout, memory, a node's failure,
// someone's scancel).
ExitInfo SlurmExit(const std::optional<SlurmEnd>& end,
                   const std::optional<JobRecord>& record, bool killed,
                   std::string_view job_id);

}  // namespace baton

#endif  // BATON_EXECUTOR_SLURM_SLURM_COMMANDS_H_
