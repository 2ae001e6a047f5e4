#include "baton/executor/slurm/slurm_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "baton/executor/task_files.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

int64_t WallNowMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<JobRecord> ReadRecord(const std::string& path) {
  auto text = ReadFile(path);
  if (!text)
    return std::nullopt;
  return ParseJobRecord(*text);
}

// The job script's exit record in `dir`, once it wrote a whole one.
std::optional<JobRecord> ExitRecordIn(const std::string& dir) {
  auto record = ReadRecord(dir + "/" + kSlurmExitFile);
  if (!record || record->ended_ms == 0)
    return std::nullopt;
  return record;
}

}  // namespace

SlurmExecutor::SlurmExecutor(EventLoop* loop, StatePaths paths, Options options)
    : loop_(loop),
      paths_(std::move(paths)),
      options_(options),
      home_tag_(paths_.tag()),
      runner_(loop),
      interval_(options.poll_min) {}

SlurmExecutor::~SlurmExecutor() {
  for (TimerId timer : {poll_timer_, file_timer_, unsubmitted_timer_}) {
    if (timer)
      loop_->Cancel(timer);
  }
  for (auto& [id, job] : jobs_) {
    for (TimerId timer : {job.kill_timer, job.timeout_timer}) {
      if (timer)
        loop_->Cancel(timer);
    }
  }
  if (inotify_)
    loop_->RemoveFd(inotify_.get());
}

std::string SlurmExecutor::TaskDir(const TaskId& id) const {
  return TaskFolder(paths_, id);
}

std::string SlurmExecutor::OutputPath(const TaskId& id) const {
  return OutputLogPath(paths_, id);
}

std::string SlurmExecutor::JobDir(const TaskRecord& task) const {
  const std::string& shared =
      task.spec.slurm ? task.spec.slurm->shared_dir : std::string();
  if (shared.empty())
    return TaskDir(task.id);
  return fmt::format("{}/{}/{}", shared, home_tag_, task.id.ToString());
}

Result<uint64_t> SlurmExecutor::OutputSize(const TaskRecord& task) const {
  return KeptOutputSize(paths_, task);
}

std::vector<std::string> SlurmExecutor::CommandEnv(
    const SlurmRequest& request) const {
  std::vector<std::string> entries;
  if (!request.path.empty())
    entries.push_back("PATH=" + request.path);
  if (!request.slurm_conf.empty())
    entries.push_back("SLURM_CONF=" + request.slurm_conf);
  return SetEnvironmentEntries(CleanEnvironment(), entries);
}

void SlurmExecutor::RunCommand(const SlurmRequest& request,
                               std::vector<std::string> argv,
                               CommandRunner::Done done) {
  runner_.Run(std::move(argv), CommandEnv(request), options_.command_timeout,
              std::move(done));
}

void SlurmExecutor::Preflight(const TaskSpec& spec,
                              std::function<void(Status)> done) {
  SlurmRequest judged = *spec.slurm;
  judged.shared_dir.clear();
  std::string key = EncodeObject(judged);
  MonoTime now = std::chrono::steady_clock::now();
  std::erase_if(accepted_, [&](const auto& entry) {
    return now - entry.second > options_.preflight_reuse;
  });
  if (accepted_.contains(key)) {
    // Told from the loop, as an answer from sbatch would be.
    loop_->Schedule(now, [done = std::move(done)] { done({}); });
    return;
  }
  // The same request asked while one runs waits for its answer.
  std::vector<std::function<void(Status)>>& waiters = preflights_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1)
    return;
  TaskRecord task;
  task.id = TaskId{spec.kind, 0};
  task.spec = spec;
  std::vector<std::string> argv = SbatchArgv(
      task, SlurmJobName(home_tag_, "preflight"), "", "/dev/null", true);
  std::vector<std::string> env = SetEnvironmentEntries(
      spec.base_env.empty() ? CleanEnvironment() : spec.base_env,
      CommandEnv(*spec.slurm));
  milliseconds timeout = options_.command_timeout;
  runner_.Run(
      std::move(argv), std::move(env), timeout,
      [this, key, timeout](CommandResult result) {
        Status answer;
        if (result.ok()) {
          accepted_[key] = std::chrono::steady_clock::now();
        } else if (result.end == CommandResult::End::kSpawnFailed) {
          answer = MakeError(
              ErrorCode::kUnavailable,
              fmt::format("cannot run sbatch ({}); install Slurm's client "
                          "commands (Debian: slurm-client) or put them on "
                          "PATH",
                          result.Describe(timeout)));
        } else if (result.end == CommandResult::End::kTimedOut) {
          answer = MakeError(
              ErrorCode::kUnavailable,
              fmt::format("slurm did not answer sbatch --test-only within "
                          "{} s; is slurmctld up (scontrol ping)? Nothing "
                          "was started",
                          timeout.count() / 1000));
        } else {
          answer = MakeError(
              ErrorCode::kInvalidArgument,
              fmt::format("slurm would not take this job: {}; nothing was "
                          "started (check --partition, --time, --cpus, --mem "
                          "and --gres against sinfo)",
                          result.Describe(timeout)));
        }
        auto node = preflights_.extract(key);
        if (node.empty())
          return;
        for (auto& waiter : node.mapped())
          waiter(answer);
      },
      spec.cwd);
}

SlurmExecutor::Job* SlurmExecutor::Find(const std::string& id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

void SlurmExecutor::Start(const TaskRecord& task) {
  BATON_CHECK(task.spec.slurm.has_value());
  std::string id = task.id.ToString();
  Job& job = jobs_[id];
  job.task = task;
  job.run = RunName(task);
  job.dir = JobDir(task);
  job.phase = Phase::kToSubmit;
  outbox_.push_back(id);
}

void SlurmExecutor::Flush() {
  for (const std::string& id : std::exchange(outbox_, {}))
    to_submit_.push_back(id);
  SubmitWaiting();
  SendKills(std::exchange(kills_, {}));
}

void SlurmExecutor::SubmitWaiting() {
  while (submitting_ < options_.max_submitting && !to_submit_.empty()) {
    std::string id = std::move(to_submit_.front());
    to_submit_.pop_front();
    if (Job* job = Find(id); job && job->phase == Phase::kToSubmit)
      Submit(*job);
  }
}

void SlurmExecutor::Submit(Job& job) {
  std::string id = job.task.id.ToString();
  std::string task_dir = TaskDir(job.task.id);
  std::error_code error;
  std::filesystem::create_directories(job.dir, error);
  std::filesystem::create_directories(task_dir, error);
  bool agent = job.task.spec.agent.has_value();
  // A shell task's output is the job's; an agent's output is the
  // transcript batond writes, and the job's own messages go aside.
  std::string output =
      job.dir + "/" + (agent ? kSlurmJobLog : std::string("output.log"));
  auto fail = [&](std::string what) {
    std::string message = fmt::format("{}: {}", what, std::strerror(errno));
    jobs_.erase(id);
    listener_->OnTaskSpawnFailed(TaskId::Parse(id).value(),
                                 Error{ErrorCode::kSpawnFailed, message});
  };
  // The files exist before sbatch answers, so readers find them; the job
  // appends to its output (--open-mode=append).
  std::vector<std::string> files = {output};
  if (agent) {
    files.push_back(job.dir + "/" + kAgentStreamFile);
    files.push_back(job.dir + "/" + kAgentStderrFile);
  }
  for (const std::string& file : files) {
    if (UniqueFd made(
            ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        !made) {
      return fail("cannot create " + file);
    }
  }
  if (agent) {
    // Its stdin: a file batond appends to, ended by a marker. A brief
    // given as text is all of it.
    std::string stdin_file = job.dir + "/" + kStdinFile;
    std::string closed = job.dir + "/" + kSlurmStdinClosedFile;
    ::unlink(closed.c_str());
    if (!WriteFileAtomic(stdin_file, job.task.spec.stdin_text.value_or("")))
      return fail("cannot write " + stdin_file);
    if (job.task.spec.stdin_text && !WriteFileAtomic(closed, ""))
      return fail("cannot write " + closed);
  }
  if (job.dir != task_dir) {
    // What batond reads and writes in the task's folder, linked to the
    // job's.
    std::vector<std::string> names = {"output.log"};
    if (agent)
      names = {kAgentStreamFile, kAgentStderrFile, kStdinFile};
    for (const std::string& name : names) {
      std::string link = task_dir + "/" + name;
      std::string target = job.dir + "/" + name;
      ::unlink(link.c_str());
      if (::symlink(target.c_str(), link.c_str()) != 0)
        return fail("cannot link " + link);
    }
  }
  std::string script = job.dir + "/" + kSlurmScriptFile;
  if (!WriteFileAtomic(script, SlurmJobScript(job.task, job.dir)))
    return fail("cannot write " + script);
  for (const char* file : {kSlurmStartedFile, kSlurmExitFile})
    ::unlink((job.dir + "/" + file).c_str());
  Watch(job);
  // sbatch gets the task's environment: with --export=ALL the job has it.
  std::vector<std::string> env = SetEnvironmentEntries(
      job.task.spec.base_env.empty() ? CommandEnv(*job.task.spec.slurm)
                                     : job.task.spec.base_env,
      TaskEnvironmentEntries(job.task));
  job.task.spec.base_env = {};
  job.phase = Phase::kSubmitting;
  ++submitting_;
  runner_.Run(
      SbatchArgv(job.task, SlurmJobName(home_tag_, job.run), script, output,
                 false),
      std::move(env), options_.command_timeout,
      [this, id](CommandResult result) { OnSubmitted(id, result); },
      job.task.spec.cwd);
}

void SlurmExecutor::OnSubmitted(const std::string& id,
                                const CommandResult& result) {
  --submitting_;
  SubmitWaiting();
  Job* job = Find(id);
  if (!job)
    return;
  TaskId task_id = job->task.id;
  Result<std::string> job_id =
      result.ok() ? ParseSbatchJobId(result.out)
                  : MakeError(ErrorCode::kSpawnFailed,
                              result.Describe(options_.command_timeout));
  if (!job_id) {
    std::string message = fmt::format("sbatch: {}", job_id.error().message);
    if (result.end == CommandResult::End::kTimedOut) {
      message += fmt::format(
          "; the job may have been submitted all the same: look for it by "
          "name (squeue -n {}) and cancel it",
          SlurmJobName(home_tag_, job->run));
    }
    BATON_LOG_WARN("{}: {}", id, message);
    if (job->kill_requested)
      return ReportExit(id, {.cause = ExitCause::kKilled});
    Unwatch(*job);
    jobs_.erase(id);
    listener_->OnTaskSpawnFailed(task_id,
                                 Error{ErrorCode::kSpawnFailed, message});
    return;
  }
  job->phase = Phase::kSubmitted;
  job->seen.job_id = *job_id;
  job->seen.state = "PENDING";
  job->seen.partition = job->task.spec.slurm->partition;
  BATON_LOG_INFO("{}: slurm job {}", id, *job_id);
  TellPlaced(*job);
  if (job->kill_requested)
    SendKills({id});
  CheckFiles(*job);  // A quick job may be done already.
  interval_ = options_.poll_min;
  SchedulePoll(options_.poll_min);
}

void SlurmExecutor::TellPlaced(Job& job) {
  listener_->OnTaskPlaced(job.task.id, job.seen);
}

void SlurmExecutor::TellRunning(Job& job, int64_t started_ms,
                                const std::string& node) {
  if (job.running_told)
    return;
  job.running_told = true;
  job.seen.state = "RUNNING";
  job.seen.reason.clear();
  if (!node.empty())
    job.seen.node = node;
  TellPlaced(job);
  listener_->OnTaskSpawned(job.task.id, 0,
                           started_ms > 0 ? started_ms : WallNowMs());
  if (job.task.spec.timeout)
    ArmTimeout(job, *job.task.spec.timeout);
}

void SlurmExecutor::ArmTimeout(Job& job, milliseconds left) {
  if (job.kill_requested || job.timeout_timer)
    return;
  std::string id = job.task.id.ToString();
  job.timeout_timer = loop_->Schedule(
      std::chrono::steady_clock::now() + std::max(left, milliseconds(0)),
      [this, id] {
        Job* timed = Find(id);
        if (!timed)
          return;
        timed->timeout_timer = 0;
        timed->timed_out = true;
        Kill(timed->task.id, options_.grace);
        Flush();
      });
}

void SlurmExecutor::CloseStdin(const TaskId& id) {
  // The relay in the job passes what the file holds, then ends the CLI's
  // stdin.
  if (Job* job = Find(id.ToString()))
    (void)WriteFileAtomic(job->dir + "/" + kSlurmStdinClosedFile, "");
}

void SlurmExecutor::Kill(const TaskId& task_id, milliseconds grace) {
  std::string id = task_id.ToString();
  Job* job = Find(id);
  if (!job || job->kill_requested)
    return;
  job->kill_requested = true;
  job->grace = grace;
  if (job->timeout_timer) {
    loop_->Cancel(job->timeout_timer);
    job->timeout_timer = 0;
  }
  switch (job->phase) {
    case Phase::kToSubmit:
      // Never submitted: it ends now, told from the loop.
      std::erase(outbox_, id);
      std::erase(to_submit_, id);
      unsubmitted_kills_.push_back(id);
      if (!unsubmitted_timer_) {
        unsubmitted_timer_ =
            loop_->Schedule(std::chrono::steady_clock::now(), [this] {
              unsubmitted_timer_ = 0;
              for (const std::string& killed :
                   std::exchange(unsubmitted_kills_, {})) {
                ReportExit(killed, {.cause = ExitCause::kKilled});
              }
            });
      }
      return;
    case Phase::kSubmitting:
    case Phase::kLookingUp:
      return;  // Sent once sbatch (or the lookup) answered.
    case Phase::kSubmitted:
      kills_.push_back(id);
      return;
  }
}

void SlurmExecutor::SendKills(const std::vector<std::string>& ids) {
  // One scancel for many jobs (a `daemon stop --kill-tasks` of a thousand
  // is a few calls, not a thousand), per cluster config and per kind:
  // a pending job is cancelled (nothing runs to be asked to stop); a
  // running one gets SIGTERM on every process of the job, the script too,
  // which records the command's end (a plain scancel --signal reaches only
  // job steps, which a batch job without srun has none of), then SIGKILL
  // after its grace.
  constexpr size_t kIdsPerCall = 500;
  std::map<std::pair<std::string, bool>, std::vector<Job*>> groups;
  for (const std::string& id : ids) {
    Job* job = Find(id);
    if (!job || job->phase != Phase::kSubmitted)
      continue;
    groups[{job->task.spec.slurm->slurm_conf, job->running_told}].push_back(
        job);
  }
  for (auto& [key, jobs] : groups) {
    const SlurmRequest request = *jobs.front()->task.spec.slurm;
    for (size_t from = 0; from < jobs.size(); from += kIdsPerCall) {
      std::vector<std::string> argv = {"scancel"};
      if (key.second) {
        argv.push_back("--full");
        argv.push_back("--signal=TERM");
      }
      for (size_t i = from; i < std::min(jobs.size(), from + kIdsPerCall); ++i)
        argv.push_back(jobs[i]->seen.job_id);
      RunCommand(request, std::move(argv), [](CommandResult) {});
    }
    if (!key.second)
      continue;
    for (Job* job : jobs) {
      std::string id = job->task.id.ToString();
      job->kill_timer = loop_->Schedule(
          std::chrono::steady_clock::now() + job->grace, [this, id] {
            Job* left = Find(id);
            if (!left)
              return;
            left->kill_timer = 0;
            RunCommand(
                *left->task.spec.slurm,
                {"scancel", "--full", "--signal=KILL", left->seen.job_id},
                [](CommandResult) {});
            RunCommand(*left->task.spec.slurm, {"scancel", left->seen.job_id},
                       [](CommandResult) {});
          });
    }
  }
  if (!groups.empty()) {
    interval_ = options_.poll_min;
    SchedulePoll(options_.poll_min);
  }
}

void SlurmExecutor::Adopt(const std::vector<TaskRecord>& live) {
  for (const TaskRecord& task : live) {
    if (!task.spec.slurm)
      continue;
    std::string id = task.id.ToString();
    Job& job = jobs_[id];
    job.task = task;
    job.run = RunName(task);
    job.dir = JobDir(task);
    job.kill_requested = task.status == TaskStatus::kStopping;
    job.grace = options_.grace;
    if (task.slurm_job && !task.slurm_job->job_id.empty()) {
      job.phase = Phase::kSubmitted;
      job.seen = *task.slurm_job;
      job.running_told = task.started_ms > 0;
      // baton's own deadline counts from the start, across the restart.
      if (job.running_told && task.spec.timeout) {
        ArmTimeout(job, *task.spec.timeout -
                            milliseconds(WallNowMs() - task.started_ms));
      }
      Watch(job);
      if (job.kill_requested)
        kills_.push_back(id);
    } else {
      LookUp(job);
    }
  }
  // A job that ended while batond was down is reported, and leaves jobs_,
  // inside CheckFiles: walk a copy of the ids, not the map.
  CheckEachJobsFiles();
  Flush();
  SchedulePoll(milliseconds(0));
}

void SlurmExecutor::CheckEachJobsFiles() {
  std::vector<std::string> ids;
  ids.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_)
    ids.push_back(id);
  for (const std::string& id : ids) {
    if (Job* job = Find(id))
      CheckFiles(*job);
  }
}

void SlurmExecutor::LookUp(Job& job) {
  // batond died after sbatch was run and before its answer was stored:
  // the job's name finds it. Only an answer that lists none submits it.
  job.phase = Phase::kLookingUp;
  job.asking = true;
  std::string id = job.task.id.ToString();
  std::string name = SlurmJobName(home_tag_, job.run);
  RunCommand(*job.task.spec.slurm,
             {"squeue", "-h", "-t", "all", "-n", name, "-o", "%i"},
             [this, id](CommandResult result) {
               Job* found = Find(id);
               if (!found || found->phase != Phase::kLookingUp)
                 return;
               found->asking = false;
               if (!result.ok()) {
                 // Not now: the next poll asks again.
                 found->seen.unreachable = true;
                 TellPlaced(*found);
                 return;
               }
               auto job_id = ParseSbatchJobId(result.out);
               if (!job_id) {
                 if (found->kill_requested)
                   return ReportExit(id, {.cause = ExitCause::kKilled});
                 return Submit(*found);
               }
               found->phase = Phase::kSubmitted;
               found->seen.job_id = *job_id;
               found->seen.unreachable = false;
               TellPlaced(*found);
               Watch(*found);
               if (found->kill_requested)
                 SendKills({id});
               CheckFiles(*found);
             });
}

void SlurmExecutor::CheckFiles(Job& job) {
  if (job.phase != Phase::kSubmitted || job.asking)
    return;
  std::string id = job.task.id.ToString();
  if (!job.running_told) {
    if (auto started = ReadRecord(job.dir + "/" + kSlurmStartedFile)) {
      if (!started->partition.empty())
        job.seen.partition = started->partition;
      TellRunning(job, started->started_ms, started->node);
    }
  }
  if (job.exit_record)
    return;  // Waits for Slurm's word on it.
  auto record = ExitRecordIn(job.dir);
  if (!record)
    return;
  if (!job.running_told)
    TellRunning(job, record->started_ms, "");
  // An exit status the command gave: that is how it ended. A signal's
  // status (128+N) may be Slurm's doing: its word says which.
  if (record->status <= 128 || job.kill_requested) {
    return ReportExit(id, SlurmExit(std::nullopt, record, job.kill_requested,
                                    job.seen.job_id));
  }
  job.exit_record = record;
  interval_ = options_.poll_min;
  SchedulePoll(milliseconds(0));
}

void SlurmExecutor::AskEnd(Job& job, std::optional<SlurmEnd> known) {
  // scontrol knows a job until MinJobAge after its end; sacct after that,
  // from accounting, or from the job completion log where there is none.
  job.asking = true;
  std::string id = job.task.id.ToString();
  const SlurmRequest& request = *job.task.spec.slurm;
  std::string job_id = job.seen.job_id;
  RunCommand(request, {"scontrol", "show", "job", "-o", job_id},
             [this, id, job_id, known](CommandResult result) {
               Job* asked = Find(id);
               if (!asked)
                 return;
               std::optional<SlurmEnd> end =
                   result.ok() ? ParseScontrolJob(result.out) : std::nullopt;
               if (end && IsSlurmEndState(end->state)) {
                 if (known && !known->cancelled_by.empty())
                   end->cancelled_by = known->cancelled_by;
                 return ReportEnd(id, end);
               }
               if (end || (known && IsSlurmEndState(known->state)))
                 return ReportEnd(id, known);
               RunCommand(*asked->task.spec.slurm,
                          {"sacct", "-n", "-X", "-P", "-o",
                           "JobID,State,ExitCode", "-j", job_id},
                          [this, id, job_id](CommandResult accounting) {
                            Job* still = Find(id);
                            if (!still)
                              return;
                            auto ends = ParseSacct(accounting.out);
                            if (auto it = ends.find(job_id); it != ends.end())
                              return ReportEnd(id, it->second);
                            RunCommand(
                                *still->task.spec.slurm,
                                {"sacct", "--completion", "-n", "-P", "-o",
                                 "JobID,State,ExitCode", "-j", job_id},
                                [this, id, job_id](CommandResult completion) {
                                  if (!Find(id))
                                    return;
                                  auto logged = ParseSacct(completion.out);
                                  auto it = logged.find(job_id);
                                  ReportEnd(id,
                                            it == logged.end()
                                                ? std::nullopt
                                                : std::optional(it->second));
                                });
                          });
             });
}

void SlurmExecutor::ReportEnd(const std::string& id,
                              const std::optional<SlurmEnd>& end) {
  Job* job = Find(id);
  if (!job)
    return;
  job->asking = false;
  std::optional<JobRecord> record =
      job->exit_record ? job->exit_record : ExitRecordIn(job->dir);
  ReportExit(id, SlurmExit(end, record, job->kill_requested, job->seen.job_id),
             end ? end->state : "");
}

void SlurmExecutor::ReportExit(const std::string& id, ExitInfo exit,
                               std::string final_state) {
  auto node = jobs_.extract(id);
  if (node.empty())
    return;
  Job& job = node.mapped();
  Unwatch(job);
  for (TimerId timer : {job.kill_timer, job.timeout_timer}) {
    if (timer)
      loop_->Cancel(timer);
  }
  if (exit.ended_ms == 0)
    exit.ended_ms = WallNowMs();
  // Killed at baton's own deadline (ArmTimeout).
  if (job.timed_out && exit.cause == ExitCause::kKilled)
    exit.cause = ExitCause::kTimedOut;
  if (!job.seen.job_id.empty()) {
    // The job's last word: Slurm's where it said one, else what the
    // script's record means in Slurm's terms.
    if (final_state.empty()) {
      bool killed = exit.cause == ExitCause::kKilled ||
                    exit.cause == ExitCause::kTimedOut;
      bool zero = exit.exit_code == 0 && !exit.signal;
      final_state = killed ? "CANCELLED" : zero ? "COMPLETED" : "FAILED";
    }
    job.seen.state = std::move(final_state);
    job.seen.reason.clear();
    job.seen.unreachable = false;
    TellPlaced(job);
  }
  listener_->OnTaskExited(job.task.id, exit);
}

void SlurmExecutor::SchedulePoll(milliseconds after) {
  MonoTime when = std::chrono::steady_clock::now() + after;
  if (poll_timer_) {
    if (poll_at_ <= when)
      return;
    loop_->Cancel(poll_timer_);
  }
  poll_at_ = when;
  poll_timer_ = loop_->Schedule(when, [this] {
    poll_timer_ = 0;
    Poll();
  });
  if (!file_timer_ && !jobs_.empty()) {
    file_timer_ = loop_->Schedule(
        std::chrono::steady_clock::now() + options_.file_poll, [this] {
          file_timer_ = 0;
          CheckEachJobsFiles();
          if (!jobs_.empty() && !poll_timer_)
            SchedulePoll(interval_);
        });
  }
}

void SlurmExecutor::Poll() {
  // One query per cluster config, for every job of it Slurm has.
  struct Group {
    const SlurmRequest* request = nullptr;
    std::vector<std::string> ids;
    std::string job_ids;  // "12,13,..."
  };
  std::map<std::string, Group> groups;
  for (auto& [id, job] : jobs_) {
    if (job.phase == Phase::kLookingUp) {
      if (!job.asking)  // One lookup at a time: the last may still run.
        LookUp(job);
      continue;
    }
    if (job.phase != Phase::kSubmitted || job.asking)
      continue;
    const SlurmRequest& request = *job.task.spec.slurm;
    Group& group = groups[request.slurm_conf];
    group.request = &request;
    group.ids.push_back(id);
    if (!group.job_ids.empty())
      group.job_ids += ',';
    group.job_ids += job.seen.job_id;
  }
  for (auto& [conf, group] : groups) {
    if (queries_.contains(conf))
      continue;
    queries_.insert(conf);
    RunCommand(
        *group.request,
        {"squeue", "-h", "-t", "all", "-j", group.job_ids, "-o", kSqueueFormat},
        [this, conf, ids = group.ids](CommandResult result) {
          queries_.erase(conf);
          OnSqueue(ids, result);
        });
  }
  if (!jobs_.empty())
    SchedulePoll(interval_);
}

void SlurmExecutor::OnSqueue(const std::vector<std::string>& ids,
                             const CommandResult& result) {
  // A list of one unknown id fails with "Invalid job id": it answered.
  bool answered =
      result.ok() || (result.end == CommandResult::End::kExited &&
                      result.err.find("Invalid job id") != std::string::npos);
  bool changed = false;
  if (!answered) {
    for (const std::string& id : ids) {
      Job* job = Find(id);
      if (!job || job->seen.unreachable)
        continue;
      BATON_LOG_WARN("{}: slurm unreachable: squeue {}", id,
                     result.Describe(options_.command_timeout));
      job->seen.unreachable = true;
      TellPlaced(*job);
    }
    interval_ = options_.poll_unreachable;
    SchedulePoll(interval_);
    return;
  }
  std::map<std::string, SqueueRow> rows;
  for (SqueueRow& row : ParseSqueue(result.out))
    rows[row.job_id] = std::move(row);
  for (const std::string& id : ids) {
    Job* job = Find(id);
    if (!job || job->phase != Phase::kSubmitted || job->asking)
      continue;
    bool was_unreachable = job->seen.unreachable;
    job->seen.unreachable = false;
    auto it = rows.find(job->seen.job_id);
    if (it == rows.end()) {
      // Forgotten by the controller (past MinJobAge), or not listed yet.
      if (++job->missing >= 2) {
        changed = true;
        AskEnd(*job, std::nullopt);
      } else if (was_unreachable) {
        TellPlaced(*job);
      }
      continue;
    }
    job->missing = 0;
    const SqueueRow& row = it->second;
    // squeue may tell the start before the job's started file is read:
    // the partition is squeue's then.
    if (job->seen.partition.empty() && !row.partition.empty())
      job->seen.partition = row.partition;
    if (IsSlurmEndState(row.state)) {
      changed = true;
      SlurmEnd end;
      end.state = row.state;
      if (job->kill_requested) {
        ReportEnd(id, end);  // Killed, however Slurm words it.
        continue;
      }
      if (!job->running_told && row.state != "CANCELLED")
        TellRunning(*job, 0, row.node);
      AskEnd(*job, end);
      continue;
    }
    if (row.state == "RUNNING" || row.state == "COMPLETING") {
      if (!job->running_told) {
        changed = true;
        TellRunning(*job, 0, row.node);
        continue;
      }
    }
    SlurmJob seen = job->seen;
    seen.state = row.state == "COMPLETING" ? "RUNNING" : row.state;
    seen.reason = row.state == "PENDING" ? row.reason : "";
    if (!row.node.empty())
      seen.node = row.node;
    if (!row.partition.empty())
      seen.partition = row.partition;
    if (seen != job->seen || was_unreachable) {
      changed = true;
      job->seen = seen;
      TellPlaced(*job);
    }
    // An exit record with a signal's status waits for Slurm's word; not
    // for ever.
    if (job->exit_record && ++job->waits_for_word >= 10) {
      changed = true;
      ReportEnd(id, std::nullopt);
    }
  }
  interval_ =
      changed ? options_.poll_min : std::min(interval_ * 2, options_.poll_max);
  if (!jobs_.empty())
    SchedulePoll(interval_);
}

void SlurmExecutor::Watch(Job& job) {
  if (!inotify_) {
    inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!inotify_ || !loop_->AddFd(inotify_.get(), EPOLLIN,
                                   [this](uint32_t) { OnInotify(); })) {
      inotify_.reset();
      return;  // The file poll still sees the files.
    }
  }
  int watch = ::inotify_add_watch(inotify_.get(), job.dir.c_str(),
                                  IN_MOVED_TO | IN_CLOSE_WRITE);
  if (watch < 0)
    return;
  job.watch = watch;
  watches_[watch] = job.task.id.ToString();
}

void SlurmExecutor::Unwatch(Job& job) {
  if (job.watch < 0)
    return;
  // Two tasks share no folder, so a watch is one task's; the kernel may
  // reuse its number once it is removed.
  ::inotify_rm_watch(inotify_.get(), job.watch);
  watches_.erase(job.watch);
  job.watch = -1;
}

void SlurmExecutor::OnInotify() {
  alignas(inotify_event) char buffer[16384];
  std::set<std::string> touched;
  for (;;) {
    ssize_t n = ::read(inotify_.get(), buffer, sizeof buffer);
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      break;
    }
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->len == 0)
        continue;
      std::string_view name(event->name);
      if (name != kSlurmStartedFile && name != kSlurmExitFile)
        continue;
      if (auto it = watches_.find(event->wd); it != watches_.end())
        touched.insert(it->second);
    }
  }
  for (const std::string& id : touched) {
    if (Job* job = Find(id))
      CheckFiles(*job);
  }
}

}  // namespace baton
