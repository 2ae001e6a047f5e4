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
#include "baton/util/clock.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {

using std::chrono::milliseconds;

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
  std::string shared = RequestOf(task.spec).shared_dir;
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

Status SlurmExecutor::Accepts(const TaskSpec& spec) const {
  if (auto request = SlurmRequestOf(spec); !request)
    return std::unexpected(request.error());
  if (spec.retry.retries > 0) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "retries of a task on Slurm are not built yet; use sbatch's own "
        "--requeue (--sbatch-arg --requeue) or run without --retry");
  }
  return {};
}

void SlurmExecutor::Preflight(const TaskSpec& spec,
                              std::function<void(Status)> done) {
  SlurmRequest judged = RequestOf(spec);
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
      CommandEnv(RequestOf(spec)));
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

SlurmExecutor::Job& SlurmExecutor::NewJob(const TaskRecord& task) {
  Job& job = jobs_[task.id.ToString()];
  job.task = task;
  job.request = RequestOf(task.spec);
  job.seen.executor = kSlurmExecutor;
  job.run = RunName(task);
  job.dir = JobDir(task);
  return job;
}

void SlurmExecutor::Start(const TaskRecord& task) {
  BATON_CHECK(Takes(task.spec));
  NewJob(task).phase = Phase::kToSubmit;
  outbox_.push_back(task.id.ToString());
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
      job.task.spec.base_env.empty() ? CommandEnv(job.request)
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
  job->seen.partition = job->request.partition;
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
                           started_ms > 0 ? started_ms : WallMillis());
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
  // is a few calls, not a thousand), per cluster config. A plain scancel,
  // pending or running: Slurm's accounting then says CANCELLED, as it does
  // for a person's own scancel, and slurmd sends SIGTERM to every process
  // of the job, the script too (which records the command's end), then
  // SIGKILL after the cluster's KillWait. A cancelled job cannot be
  // signalled any more, so that wait is the grace on Slurm; baton's grace
  // only times a second scancel, for a first one the controller missed.
  constexpr size_t kIdsPerCall = 500;
  std::map<std::string, std::vector<Job*>> groups;
  for (const std::string& id : ids) {
    Job* job = Find(id);
    if (!job || job->phase != Phase::kSubmitted)
      continue;
    groups[job->request.slurm_conf].push_back(job);
  }
  for (auto& [conf, jobs] : groups) {
    const SlurmRequest request = jobs.front()->request;
    for (size_t from = 0; from < jobs.size(); from += kIdsPerCall) {
      std::vector<std::string> argv = {"scancel"};
      for (size_t i = from; i < std::min(jobs.size(), from + kIdsPerCall); ++i)
        argv.push_back(jobs[i]->seen.job_id);
      RunCommand(request, std::move(argv), [](CommandResult) {});
    }
    for (Job* job : jobs) {
      std::string id = job->task.id.ToString();
      job->kill_timer = loop_->Schedule(
          std::chrono::steady_clock::now() + job->grace, [this, id] {
            Job* left = Find(id);
            if (!left)
              return;
            left->kill_timer = 0;
            RunCommand(left->request, {"scancel", left->seen.job_id},
                       [](CommandResult) {});
          });
    }
  }
  if (!groups.empty()) {
    interval_ = options_.poll_min;
    SchedulePoll(options_.poll_min);
  }
}

}  // namespace baton
