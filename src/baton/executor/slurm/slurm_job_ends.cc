// How batond learns of its Slurm jobs' starts and ends: the job folder's
// start and exit records (inotify, and a poll for shared file systems that
// send no events), squeue for all jobs in one call with backoff, sacct for
// the end of a job that left no record, and the adoption of jobs after a
// restart. Split from slurm_executor.cc (paths, preflight, submission,
// kills).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "baton/executor/slurm/slurm_executor.h"
#include "baton/executor/task_files.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

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

void SlurmExecutor::Adopt(const std::vector<TaskRecord>& live) {
  for (const TaskRecord& task : live) {
    if (!Takes(task.spec))
      continue;
    std::string id = task.id.ToString();
    Job& job = NewJob(task);
    job.kill_requested = task.status == TaskStatus::kStopping;
    job.grace = options_.grace;
    if (task.placement && !task.placement->job_id.empty()) {
      job.phase = Phase::kSubmitted;
      job.seen = *task.placement;
      job.running_told = task.started_ms > 0;
      // baton's own deadline counts from the start, across the restart.
      if (job.running_told && task.spec.timeout) {
        ArmTimeout(job, *task.spec.timeout -
                            milliseconds(WallMillis() - task.started_ms));
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
  RunCommand(job.request, {"squeue", "-h", "-t", "all", "-n", name, "-o", "%i"},
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
  const SlurmRequest& request = job.request;
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
               RunCommand(asked->request,
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
                                still->request,
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
    exit.ended_ms = WallMillis();
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
    const SlurmRequest& request = job.request;
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
    Placement seen = job->seen;
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
