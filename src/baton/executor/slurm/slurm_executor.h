// The Executor that runs tasks as Slurm jobs (doc/slurm.md). A task is
// submitted with sbatch once batond committed it; its job script writes
// the output into the job folder and records when the command started and
// how it ended there; batond notices those files at once on a local file
// system (inotify) and at each poll on a shared one, and asks the
// controller about all of its jobs in one squeue call per poll, more
// rarely while nothing changes. Every Slurm command runs as a child the
// loop watches, with a deadline: a controller that does not answer never
// blocks batond, and never ends a task (its jobs are shown "slurm
// unreachable" until it answers again).
#ifndef BATON_EXECUTOR_SLURM_SLURM_EXECUTOR_H_
#define BATON_EXECUTOR_SLURM_SLURM_EXECUTOR_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "baton/core/ports.h"
#include "baton/executor/slurm/slurm_commands.h"
#include "baton/loop/command_runner.h"
#include "baton/loop/event_loop.h"
#include "baton/util/state_paths.h"
#include "baton/util/unique_fd.h"

namespace baton {

// Lives on batond's loop thread; not thread-safe.
// REQUIRES: SetListener() before Start() or Adopt().
//
// Ordering contract (Executor's): Start() and Kill() only queue; nothing
// reaches Slurm before Flush().
class SlurmExecutor : public Executor {
 public:
  struct Options {
    // The bound on each Slurm command (a down controller answers sbatch
    // and squeue only after its MessageTimeout, 10 s by default).
    std::chrono::milliseconds command_timeout{15000};
    // The interval of status queries: the shortest, after a change, and
    // the longest, reached by doubling while nothing changes.
    std::chrono::milliseconds poll_min{1000};
    std::chrono::milliseconds poll_max{15000};
    // While the controller does not answer.
    std::chrono::milliseconds poll_unreachable{5000};
    // How often the job folders are looked at (a shared file system
    // may not tell inotify of another node's writes).
    std::chrono::milliseconds file_poll{1000};
    // sbatch calls at once: a burst of tasks is submitted a few at a
    // time, in order, not as a thousand processes on the controller.
    size_t max_submitting = 4;
    // How long a request Slurm accepted in a preflight is taken as
    // accepted again without asking (the same partition, account,
    // resources and sbatch options, on the same cluster config).
    std::chrono::milliseconds preflight_reuse{30000};
    // SIGTERM -> SIGKILL at baton's own deadline, and for a kill asked
    // before a restart (as LocalExecutor's `grace`).
    std::chrono::milliseconds grace{5000};
  };

  SlurmExecutor(EventLoop* loop, StatePaths paths, Options options);
  SlurmExecutor(EventLoop* loop, StatePaths paths)
      : SlurmExecutor(loop, std::move(paths), Options{}) {}
  ~SlurmExecutor() override;
  SlurmExecutor(const SlurmExecutor&) = delete;
  SlurmExecutor& operator=(const SlurmExecutor&) = delete;

  // Asks Slurm whether it would take `spec` (sbatch --test-only), before
  // anything is stored: `done` gets an error that says what Slurm refused
  // (a partition that does not exist, a request no node can meet) or that
  // it did not answer. Never calls `done` from inside.
  void Preflight(const TaskSpec& spec,
                 std::function<void(Status)> done) override;
  // Submits what Start() queued, and sends the kills Kill() asked for.
  void Flush() override;
  // A task whose spec asks for a Slurm job.
  bool Takes(const TaskSpec& spec) const override {
    return spec.remote && spec.remote->executor == kSlurmExecutor;
  }
  // Refuses options that are not a Slurm request, and retries (not built
  // for jobs yet: sbatch's own --requeue is the way).
  Status Accepts(const TaskSpec& spec) const override;
  bool Owns(const TaskId& id) const override {
    return jobs_.contains(id.ToString());
  }
  // The folder of a task's job files: its own folder (TaskDir), or, with
  // a shared_dir, "<shared_dir>/<home tag>/<id>" (output.log in the task's
  // folder is then a link to the job's).
  std::string JobDir(const TaskRecord& task) const;
  // Slurm commands run so far (sbatch, squeue, scontrol, sacct, scancel).
  int64_t controller_calls() const { return runner_.started(); }

  void SetListener(ExecutorListener* listener) override {
    listener_ = listener;
  }
  std::string TaskDir(const TaskId& id) const override;
  std::string OutputPath(const TaskId& id) const override;
  Result<uint64_t> OutputSize(const TaskRecord& task) const override;
  void Start(const TaskRecord& task) override;
  // A pending job is cancelled; a running one gets SIGTERM (every process
  // of the job: scancel --full), then SIGKILL after `grace`.
  void Kill(const TaskId& id, std::chrono::milliseconds grace) override;
  // A shell job's stdin is /dev/null; an agent's is a file batond appends
  // to: this marks it closed.
  void CloseStdin(const TaskId& id) override;
  // Tasks on Slurm only (the RoutingExecutor splits them out by Takes).
  void Adopt(const std::vector<TaskRecord>& live) override;

 private:
  enum class Phase {
    kToSubmit,    // Queued for the next Flush().
    kSubmitting,  // sbatch runs.
    kLookingUp,   // After a restart, no job id stored: found by name?
    kSubmitted,   // Slurm has it.
  };
  struct Job {
    TaskRecord task;       // As started or adopted.
    SlurmRequest request;  // Its RequestOf.
    std::string run;       // RunName.
    std::string dir;       // JobDir.
    Phase phase = Phase::kToSubmit;
    Placement seen;  // As last told to the listener.
    bool running_told = false;
    bool kill_requested = false;
    bool timed_out = false;  // Killed at the task's own timeout.
    std::chrono::milliseconds grace{0};
    TimerId kill_timer = 0;
    TimerId timeout_timer = 0;
    int watch = -1;   // inotify watch of `dir`.
    int missing = 0;  // Status queries in a row that did not list it.
    // The script's exit record, when the status it holds needs Slurm's
    // word (a signal: its time limit, its memory, someone's scancel), and
    // how many queries have passed without it.
    std::optional<JobRecord> exit_record;
    int waits_for_word = 0;
    // A question about it runs: scontrol or sacct about its end, or the
    // lookup by name after a restart.
    bool asking = false;
  };

  Job* Find(const std::string& id);
  // The job of a task it starts or adopts, with what the task says.
  Job& NewJob(const TaskRecord& task);
  // Starts sbatch for the jobs waiting, while slots are free.
  void SubmitWaiting();
  void Submit(Job& job);
  void OnSubmitted(const std::string& id, const CommandResult& result);
  void LookUp(Job& job);
  // Cancels the jobs of `ids` that Slurm has.
  void SendKills(const std::vector<std::string>& ids);
  // Looks at the job's files: its start, its end. An end found is reported
  // and the job leaves jobs_.
  void CheckFiles(Job& job);
  // CheckFiles for every job, safe against those that leave jobs_.
  void CheckEachJobsFiles();
  void TellRunning(Job& job, int64_t started_ms, const std::string& node);
  // Ends the job as timed out `left` from now (baton's own --timeout).
  void ArmTimeout(Job& job, std::chrono::milliseconds left);
  void TellPlaced(Job& job);
  // Asks scontrol (then sacct) how the job ended, then reports it.
  void AskEnd(Job& job, std::optional<SlurmEnd> known);
  void ReportEnd(const std::string& id, const std::optional<SlurmEnd>& end);
  // `final_state`: Slurm's word on the end, when it said one.
  void ReportExit(const std::string& id, ExitInfo exit,
                  std::string final_state = "");
  // The status queries, one squeue per cluster config.
  void SchedulePoll(std::chrono::milliseconds after);
  void Poll();
  void OnSqueue(const std::vector<std::string>& ids,
                const CommandResult& result);
  void OnInotify();
  void Watch(Job& job);
  void Unwatch(Job& job);
  // The environment Slurm's commands about a job run with: the clean one,
  // with the PATH and SLURM_CONF its client had.
  std::vector<std::string> CommandEnv(const SlurmRequest& request) const;
  void RunCommand(const SlurmRequest& request, std::vector<std::string> argv,
                  CommandRunner::Done done);

  EventLoop* loop_;
  StatePaths paths_;
  Options options_;
  std::string home_tag_;
  CommandRunner runner_;
  ExecutorListener* listener_ = nullptr;
  std::map<std::string, Job> jobs_;  // By task id.
  std::vector<std::string> outbox_;  // Ids to submit at Flush().
  // Ids flushed, waiting for a free sbatch slot, in order.
  std::deque<std::string> to_submit_;
  size_t submitting_ = 0;
  // Requests (SlurmRequest's fields as JSON) a preflight accepted, and when.
  std::map<std::string, MonoTime> accepted_;
  // Preflights running, by request, with everyone waiting for the answer.
  std::map<std::string, std::vector<std::function<void(Status)>>> preflights_;
  std::vector<std::string> kills_;  // Ids to cancel at Flush().
  UniqueFd inotify_;
  std::map<int, std::string> watches_;  // inotify watch -> task id.
  TimerId poll_timer_ = 0;
  MonoTime poll_at_{};
  std::chrono::milliseconds interval_;
  std::set<std::string> queries_;  // Cluster configs with a squeue running.
  TimerId file_timer_ = 0;
  // Exits of tasks killed before their submission, told from the loop.
  std::vector<std::string> unsubmitted_kills_;
  TimerId unsubmitted_timer_ = 0;
};

}  // namespace baton

#endif  // BATON_EXECUTOR_SLURM_SLURM_EXECUTOR_H_
