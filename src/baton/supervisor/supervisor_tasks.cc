// The supervisor's task side: stops and deadlines, reaping, the leftovers a
// leader leaves in its group, exit records, and the tasks a supervisor that
// died left behind (doc/supervisor.md).
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <vector>

#include "baton/supervisor/process_info.h"
#include "baton/supervisor/supervisor_internal.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

// How often a group that outlived its leader is checked for emptiness
// when no SIGCHLD can tell (members that are not our children).
constexpr milliseconds kDrainPoll{20};
// How long after the grace's SIGKILL a group may still have members before
// the task ends without them.
constexpr milliseconds kDrainAfterSigkill{2000};
// An adopted task's end is read from its keeper's record, which follows
// the exit by a moment: looked for after 5 ms, doubling, 9 times (about
// 2.5 s in all) before the end is given up as unknown.
constexpr milliseconds kRecordRetry{5};
constexpr int kRecordTries = 9;
// A finished task's cgroup is removed once the processes just killed in it
// have left: tried every kDrainPoll, 50 times (about a second).
constexpr int kCgroupRemoveTries = 50;

milliseconds MillisUntil(int64_t wall_ms) {
  return milliseconds(std::max<int64_t>(wall_ms - WallMillis(), 0));
}

}  // namespace

void Supervisor::Stop(Task& task, milliseconds grace, ExitCause cause) {
  // The first stop wins: its cause is what happened, its grace holds. A
  // task whose leader ended is already having its group emptied.
  if (task.cause != ExitCause::kNatural || task.leader_ended)
    return;
  task.cause = cause;
  if (task.deadline)
    loop_.Cancel(std::exchange(task.deadline, 0));
  BATON_LOG_INFO("{}: {}; SIGTERM to group {}, SIGKILL after {} ms", task.id,
                 cause == ExitCause::kTimedOut ? "timed out" : "kill", task.pid,
                 grace.count());
  SignalTask(task, SIGTERM);
  // A stopped process acts on SIGTERM only once continued.
  SignalTask(task, SIGCONT);
  task.record.cause = cause;
  task.record.stopped_ms = WallMillis();
  task.record.stop_grace_ms = grace.count();
  if (journal_)
    journal_->Stopped(task.record);
  EscalateAfter(task.pid, grace, task.cgroup);
}

void Supervisor::EscalateAfter(pid_t pgid, milliseconds grace,
                               std::shared_ptr<TaskCgroup> cgroup) {
  // Keyed by the group, not the task: the leader may be reaped before the
  // grace ends while members that ignore SIGTERM live on.
  if (auto old = escalations_.find(pgid); old != escalations_.end())
    loop_.Cancel(old->second.timer);
  TimerId timer =
      loop_.Schedule(std::chrono::steady_clock::now() + grace, [this, pgid] {
        auto cgroup = std::move(escalations_[pgid].cgroup);
        escalations_.erase(pgid);
        if (GroupExists(pgid)) {
          BATON_LOG_INFO("group {} outlived its grace: SIGKILL", pgid);
          ::kill(-pgid, SIGKILL);
        }
        if (cgroup && cgroup->Signal(SIGKILL) > 0)
          BATON_LOG_INFO("cgroup of group {} outlived its grace: SIGKILL",
                         pgid);
      });
  escalations_[pgid] = {timer, std::move(cgroup)};
}

void Supervisor::SignalTask(const Task& task, int signal) {
  ::kill(-task.pid, signal);
  if (task.cgroup)
    task.cgroup->Signal(signal);
  for (pid_t escapee : task.escapees)
    ::kill(-escapee, signal);  // setsid made it its group's leader.
}

bool Supervisor::TaskAlive(const Task& task) {
  return GroupExists(task.pid) || (task.cgroup && !task.cgroup->Empty()) ||
         std::any_of(task.escapees.begin(), task.escapees.end(), GroupExists);
}

void Supervisor::FindEscapees(Task& task) {
  if (task.cgroup || task.id_entry.empty())
    return;
  for (pid_t child : ChildrenOfMainThread()) {
    if (child == task.pid || ids_by_pid_.contains(child) ||
        std::find(task.escapees.begin(), task.escapees.end(), child) !=
            task.escapees.end()) {
      continue;
    }
    // A member of the group is a leftover already; one that only changed
    // its group (setpgid) is a leader too, and found the same way.
    auto stat = ReadProcStat(child);
    if (!stat || stat->pgrp == task.pid || stat->pgrp != child ||
        !EnvironmentHas(child, task.id_entry)) {
      continue;
    }
    task.escapees.push_back(child);
  }
}

void Supervisor::RemoveCgroup(std::shared_ptr<TaskCgroup> cgroup, int tries) {
  if (cgroup->Remove())
    return;
  if (tries <= 0) {
    BATON_LOG_WARN("cgroup {} still has processes; left in place",
                   cgroup->dirs().front());
    return;
  }
  cgroup->Signal(SIGKILL);
  loop_.Schedule(std::chrono::steady_clock::now() + kDrainPoll,
                 [this, cgroup, tries] { RemoveCgroup(cgroup, tries - 1); });
}

void Supervisor::ReapChildren() {
  for (;;) {
    // Each end is seen first as a zombie (WNOWAIT), and a task's is
    // journaled before its reap, as a keeper does: a supervisor killed
    // between its reap and its record lost the exit code (a compound
    // chaos run). While spawns are under way, an unknown child may be a
    // task whose spawn outcome is still on its way: its start time is read
    // from the zombie (EarlyExit).
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    pid_t pid = info.si_pid;
    if (pid == 0)
      break;
    int status = 0;
    std::optional<ProcStat> zombie;
    if (auto id = ids_by_pid_.find(pid); id != ids_by_pid_.end()) {
      JournalEnd(id->second, pid, WaitStatusOf(info));
    } else if (!starting_.empty()) {
      // A child that leads no session is a grandchild, never a task; an
      // escapee that does costs one line.
      zombie = ReadProcStat(pid);
      if (journal_ && zombie && zombie->session == pid) {
        journal_->Reaped(
            {pid, zombie->start_ticks, WaitStatusOf(info), WallMillis()});
      }
    }
    pid = ::waitpid(pid, &status, WNOHANG);
    if (pid < 0 && errno == EINTR)
      continue;
    if (pid <= 0)
      break;
    // Others are orphaned grandchildren, reaped only so they leave no
    // zombie, or tasks whose spawn outcome is still on its way.
    if (auto id = ids_by_pid_.find(pid); id != ids_by_pid_.end()) {
      LeaderEnded(tasks_.find(id->second), status, false);
    } else if (!starting_.empty()) {
      EarlyExit(pid, status);
    }
  }
  // A group whose last member (often a grandchild reparented to us) was
  // just reaped needs no SIGKILL: drop its escalation, so an idle
  // supervisor can exit now rather than after the grace.
  for (auto e = escalations_.begin(); e != escalations_.end();) {
    if (!GroupExists(e->first) &&
        (!e->second.cgroup || e->second.cgroup->Empty())) {
      loop_.Cancel(e->second.timer);
      e = escalations_.erase(e);
    } else {
      ++e;
    }
  }
  FinishDrainedTasks();
}

void Supervisor::EarlyExit(pid_t pid, int status) {
  // Journaled before its reap (ReapChildren), as a keeper would: if we die
  // before the spawn's outcome comes back, the next supervisor knows the
  // task's end by the pid its child said (IdentifyBegun).
  early_exits_[pid] = status;
}

void Supervisor::JournalEnd(const std::string& id, pid_t pid, int status) {
  auto it = tasks_.find(id);
  if (journal_ && it != tasks_.end())
    journal_->Reaped(
        {pid, it->second.record.start_ticks, status, WallMillis()});
}

void Supervisor::LeaderEnded(TaskMap::iterator it, int status, bool status_lost,
                             int64_t ended_ms) {
  Task& task = it->second;
  task.leader_ended_ms = ended_ms > 0 ? ended_ms : WallMillis();
  ids_by_pid_.erase(task.pid);
  if (task.deadline)
    loop_.Cancel(std::exchange(task.deadline, 0));
  task.leader_ended = true;
  task.leader_status = status;
  task.status_lost = status_lost;
  FindEscapees(task);
  if (!TaskAlive(task)) {
    Finish(it);
    return;
  }
  // A task leaves nothing behind: what the leader left in its group is
  // stopped as a kill stops it, and the task ends once the group is empty
  // (doc/supervisor.md, "Leftovers"). A kill or deadline already under way
  // has its SIGKILL scheduled.
  std::vector<pid_t> members = GroupMembers(task.pid);
  // With a cgroup, also what left the group (setsid) but not the cgroup.
  if (task.cgroup) {
    for (pid_t pid : task.cgroup->Members()) {
      if (std::find(members.begin(), members.end(), pid) == members.end())
        members.push_back(pid);
    }
  }
  // An adopted task's leader may still be its keeper's zombie.
  std::erase(members, task.pid);
  members.insert(members.end(), task.escapees.begin(), task.escapees.end());
  if (task.cause == ExitCause::kNatural && !members.empty()) {
    task.leftovers = static_cast<int>(members.size());
    BATON_LOG_INFO(
        "{}: leader ended, {} left in group {}: SIGTERM, SIGKILL "
        "after {} ms",
        task.id, task.leftovers, task.pid, task.grace.count());
    SignalTask(task, SIGTERM);
    SignalTask(task, SIGCONT);
    EscalateAfter(task.pid, task.grace, task.cgroup);
    for (pid_t escapee : task.escapees)
      EscalateAfter(escapee, task.grace, nullptr);
  } else if (!task.escapees.empty()) {
    // A stop under way reached the group only: the escapees now, with the
    // same SIGKILL after the stop's grace.
    task.leftovers = static_cast<int>(task.escapees.size());
    for (pid_t escapee : task.escapees) {
      ::kill(-escapee, SIGTERM);
      ::kill(-escapee, SIGCONT);
      EscalateAfter(escapee, milliseconds(task.record.stop_grace_ms), nullptr);
    }
  }
  task.drained = true;
  // The SIGKILL comes within the grace: the task's for leftovers, the
  // stop's for a kill or deadline under way.
  milliseconds grace = task.cause == ExitCause::kNatural
                           ? task.grace
                           : milliseconds(task.record.stop_grace_ms);
  task.drain_deadline =
      std::chrono::steady_clock::now() + grace + kDrainAfterSigkill;
  task.drain_timer =
      loop_.Schedule(std::chrono::steady_clock::now() + kDrainPoll,
                     [this, id = task.id] { PollDrain(id); });
}

void Supervisor::PollDrain(const std::string& id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end())
    return;
  it->second.drain_timer = 0;
  if (!TaskAlive(it->second)) {
    Finish(it);
    return;
  }
  // Past its SIGKILL, what is left is no process we can signal (another
  // user's, in the group): the task ends without waiting for it.
  if (std::chrono::steady_clock::now() > it->second.drain_deadline) {
    BATON_LOG_WARN(
        "{}: group {} still has members after SIGKILL; ending "
        "the task without them",
        id, it->second.pid);
    Finish(it);
    return;
  }
  it->second.drain_timer =
      loop_.Schedule(std::chrono::steady_clock::now() + kDrainPoll,
                     [this, id] { PollDrain(id); });
}

void Supervisor::FinishDrainedTasks() {
  std::vector<std::string> drained;
  for (const auto& [id, task] : tasks_) {
    if (task.leader_ended && !TaskAlive(task))
      drained.push_back(id);
  }
  for (const std::string& id : drained)
    Finish(tasks_.find(id));
}

void Supervisor::Finish(TaskMap::iterator it) {
  Task& task = it->second;
  int status = task.leader_status;
  ExitedEvent exited;
  exited.task = task.id;
  exited.pid = task.pid;
  if (task.status_lost) {
    exited.cause = ExitCause::kLost;
  } else {
    if (WIFEXITED(status))
      exited.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status))
      exited.signal = WTERMSIG(status);
    exited.cause = task.cause;
  }
  // The end is when nothing of the task runs any more.
  exited.ended_ms = task.drained ? WallMillis() : task.leader_ended_ms;
  exited.started_ms = task.record.started_ms;
  exited.leftovers = task.leftovers;
  exited.out_of_memory = task.cgroup && task.cgroup->OomKilled();
  // A heuristic: a full file system at exit probably cut the output short.
  struct statvfs vfs {};
  exited.disk_full = task.log_fd && ::fstatvfs(task.log_fd.get(), &vfs) == 0 &&
                     vfs.f_bavail == 0;
  std::string record = EncodeMessage(exited);
  // A batond that is here gets the record and keeps it in its store; until
  // it acknowledges that, we keep it too, and write the exit file only if
  // batond goes away first. A batond that is away finds the file: it is
  // written before the task leaves the live set (and so the hello list).
  PendingExit exit{task.record.exit_file, record, task.pid,
                   task.record.started_ms};
  if (client_said_hello_ && client_ && !client_->closed()) {
    // Journaled with the record first: if batond dies before its commit
    // and we die too, the next supervisor writes the file from it.
    if (journal_) {
      JournalExit held{exit.file, record};
      journal_->Ended(task.id, &held);
    }
    Send(record);
    client_->Flush();
    unacked_exits_[task.id] = std::move(exit);
  } else {
    WriteExitFile(task.id, std::move(exit));
    if (journal_)
      journal_->Ended(task.id);
  }
  if (task.deadline)
    loop_.Cancel(task.deadline);
  if (task.drain_timer)
    loop_.Cancel(task.drain_timer);
  if (task.pidfd)
    loop_.RemoveFd(task.pidfd.get());
  // Nothing can join an empty group, so a pending SIGKILL could only hit a
  // new group that reuses the id.
  if (auto e = escalations_.find(task.pid);
      e != escalations_.end() && !TaskAlive(task)) {
    loop_.Cancel(e->second.timer);
    escalations_.erase(e);
  }
  if (task.cgroup)
    RemoveCgroup(std::move(task.cgroup), kCgroupRemoveTries);
  BATON_LOG_INFO("{}: pid {} ended: {}", task.id, task.pid, record);
  ids_by_pid_.erase(task.pid);
  tasks_.erase(it);
  CompactJournalIfLarge();
}

void Supervisor::WriteExitFile(const std::string& task, PendingExit exit) {
  auto written = WriteFileAtomic(exit.file, exit.record);
  if (written) {
    unwritten_exits_.erase(task);
    if (journal_)
      journal_->Acked({task});
    return;
  }
  // The task's folder is gone (its state folder removed or unmounted):
  // no batond of that folder will ever read the record.
  std::string folder = exit.file.substr(0, exit.file.rfind('/'));
  if (::access(folder.c_str(), F_OK) != 0 && errno == ENOENT) {
    BATON_LOG_ERROR("{}: exit record dropped: its folder {} is gone", task,
                    folder);
    unwritten_exits_.erase(task);
    return;
  }
  // Never dropped: the record stays here until it is written or a batond
  // takes it, and meanwhile the supervisor does not exit.
  if (!unwritten_exits_.contains(task)) {
    BATON_LOG_ERROR("{}: exit record not written, kept and retried: {}", task,
                    written.error().message);
  }
  unwritten_exits_[task] = std::move(exit);
  if (!unwritten_timer_) {
    unwritten_timer_ = loop_.Schedule(
        std::chrono::steady_clock::now() + std::chrono::seconds(1), [this] {
          unwritten_timer_ = 0;
          RetryUnwrittenExits();
        });
  }
}

void Supervisor::RetryUnwrittenExits() {
  auto pending = unwritten_exits_;
  for (auto& [task, exit] : pending)
    WriteExitFile(task, std::move(exit));
  if (unwritten_exits_.empty() && !pending.empty())
    BATON_LOG_INFO("wrote {} exit records kept since a failed write",
                   pending.size());
}

void Supervisor::WriteUnackedExits() {
  size_t written = 0;
  for (auto& [task, exit] : std::exchange(unacked_exits_, {})) {
    WriteExitFile(task, std::move(exit));
    written += unwritten_exits_.contains(task) ? 0 : 1;
  }
  if (written > 0) {
    BATON_LOG_INFO("wrote {} exit records batond had not acknowledged",
                   written);
  }
}

void Supervisor::CompactJournalIfLarge() {
  if (!journal_ || journal_->size() < Journal::kCompactBytes)
    return;
  std::vector<JournalTask> open;
  for (const auto& [id, task] : tasks_)
    open.push_back(task.record);
  // Ids whose ends are unknown stay "spawning" (the journal adds the spawns
  // its threads have under way).
  for (const std::string& id : unknown_ends_) {
    open.emplace_back();
    open.back().task = id;
    open.back().may_run = true;
  }
  journal_->Compact(open);
}

void Supervisor::AdoptOrphans(JournalState state) {
  spawned_ids_ = std::move(state.known);
  // Ends a dead supervisor told a batond that did not acknowledge them
  // (both died): written to their files before the first hello.
  for (auto& [task, held] : state.held) {
    PendingExit exit{held.exit_file, held.record};
    auto event = ParseSupervisorEvent(held.record);
    if (event && std::holds_alternative<ExitedEvent>(*event)) {
      exit.pid = std::get<ExitedEvent>(*event).pid;
      exit.started_ms = std::get<ExitedEvent>(*event).started_ms;
    }
    BATON_LOG_INFO("{}: writing the exit record a supervisor that died held",
                   task);
    WriteExitFile(task, std::move(exit));
  }
  reaped_ = std::move(state.reaped);
  for (const auto& [id, record] : state.open) {
    if (record.started) {
      AdoptOrphan(record);
      continue;
    }
    // Between "spawning" and the spawn's outcome, with a child that said
    // "began" (one that did not never ran, and the journal forgot it).
    if (auto began = IdentifyBegun(record)) {
      BATON_LOG_INFO("{}: a supervisor that died was starting it: pid {}", id,
                     began->pid);
      if (journal_) {
        journal_->Started(*began);
        journal_->Claim(id);
      }
      AdoptOrphan(*began);
      continue;
    }
    BATON_LOG_WARN(
        "{}: a supervisor that died was starting it; its end "
        "cannot be known",
        id);
    unknown_ends_.push_back(id);
  }
  // Records that match no orphan we wait for are of nobody we know.
  std::set<int64_t> waiting;
  for (const auto& [id, task] : tasks_)
    waiting.insert(task.pid);
  std::erase_if(reaped_, [&](const ReapedRecord& record) {
    return !waiting.contains(record.pid);
  });
}

std::optional<JournalTask> Supervisor::IdentifyBegun(
    const JournalTask& record) {
  if (record.pid <= 0 || record.started_ms <= 0)
    return std::nullopt;
  // The pid is this task's if a process with it started since the spawn
  // began (a tick of rounding allowed): alive, a zombie, or reaped by its
  // keeper, which recorded its start.
  auto since_spawn = [&](uint64_t start_ticks) {
    auto at = StartedAtWallMillis(start_ticks);
    return at && *at >= record.started_ms - kTickSlackMs;
  };
  JournalTask began = record;
  began.started = true;
  if (auto stat = ReadProcStat(static_cast<pid_t>(record.pid));
      stat && since_spawn(stat->start_ticks)) {
    began.start_ticks = stat->start_ticks;
    return began;
  }
  // Gone: its keeper recorded its end before it reaped it, maybe since we
  // opened the journal.
  if (journal_) {
    for (ReapedRecord& reaped : journal_->ReadReaped())
      reaped_.push_back(reaped);
  }
  for (const ReapedRecord& reaped : reaped_) {
    if (reaped.pid == record.pid && since_spawn(reaped.start_ticks)) {
      began.start_ticks = reaped.start_ticks;
      return began;
    }
  }
  return std::nullopt;
}

void Supervisor::AdoptOrphan(const JournalTask& record) {
  auto [it, inserted] = tasks_.try_emplace(record.task);
  Task& task = it->second;
  task.id = record.task;
  task.pid = static_cast<pid_t>(record.pid);
  task.cgroup = limits_.Find(task.id);
  task.record = record;
  task.grace = milliseconds(record.grace_ms);
  task.cause = record.cause;
  task.orphan = true;
  // It ended while no supervisor ran: its keeper recorded it (and may not
  // have reaped the zombie yet).
  if (auto reaped = FindReaped(task)) {
    BATON_LOG_INFO("{}: ended while no supervisor ran (pid {})", task.id,
                   task.pid);
    LeaderEnded(it, reaped->status, false, reaped->ended_ms);
    return;
  }
  auto stat = ReadProcStat(task.pid);
  if (stat && stat->start_ticks == record.start_ticks)
    task.pidfd.reset(OpenPidfd(task.pid));
  if (!task.pidfd) {
    // Gone since the look above: its keeper writes the record before it
    // reaps, so the record is there now (a chaos run lost an exit code to
    // this window, between the keeper's append and its reap).
    if (auto reaped = FindReaped(task)) {
      BATON_LOG_INFO("{}: ended while no supervisor ran (pid {})", task.id,
                     task.pid);
      LeaderEnded(it, reaped->status, false, reaped->ended_ms);
      return;
    }
    // Reaped by the supervisor that died, which may have written its
    // record; else nobody can tell its end.
    if (!ReadFile(record.exit_file)) {
      BATON_LOG_WARN("{}: pid {} is gone and its end was not recorded", task.id,
                     task.pid);
      unknown_ends_.push_back(task.id);
    } else if (journal_) {
      journal_->Ended(task.id);
    }
    tasks_.erase(it);
    return;
  }
  // Live (or a zombie its keeper is about to reap): ours to stop and time,
  // its end comes through the pidfd and the keeper's record.
  task.log_fd.reset(
      ::open(record.log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  (void)loop_.AddFd(task.pidfd.get(), EPOLLIN,
                    [this, id = task.id](uint32_t) { OnOrphanEnded(id); });
  if (task.cause != ExitCause::kNatural) {
    // Its stop was under way: the SIGKILL is still due.
    EscalateAfter(task.pid,
                  MillisUntil(record.stopped_ms + record.stop_grace_ms),
                  task.cgroup);
  } else if (record.deadline_ms) {
    ScheduleDeadline(task, MillisUntil(*record.deadline_ms));
  }
  BATON_LOG_INFO("{}: adopted pid {} from a supervisor that died", task.id,
                 task.pid);
}

std::optional<ReapedRecord> Supervisor::FindReaped(const Task& task) {
  // A start not read at the spawn (the task had ended and been reaped
  // by then) matches any start since the spawn began.
  auto match = [&](const ReapedRecord& r) {
    if (r.pid != task.pid)
      return false;
    if (task.record.start_ticks != 0)
      return r.start_ticks == task.record.start_ticks;
    auto at = StartedAtWallMillis(r.start_ticks);
    return at && *at >= task.record.started_ms - kTickSlackMs;
  };
  auto found = std::find_if(reaped_.begin(), reaped_.end(), match);
  if (found == reaped_.end() && journal_) {
    for (ReapedRecord& record : journal_->ReadReaped())
      reaped_.push_back(record);
    found = std::find_if(reaped_.begin(), reaped_.end(), match);
  }
  if (found == reaped_.end())
    return std::nullopt;
  ReapedRecord record = *found;
  reaped_.erase(found);
  return record;
}

void Supervisor::OnOrphanEnded(const std::string& id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.leader_ended)
    return;
  Task& task = it->second;
  if (task.pidfd) {
    loop_.RemoveFd(task.pidfd.get());
    task.pidfd.reset();
  }
  if (auto reaped = FindReaped(task)) {
    LeaderEnded(it, reaped->status, false, reaped->ended_ms);
    return;
  }
  if (task.record_tries == kRecordTries) {
    BATON_LOG_WARN("{}: pid {} ended, but no keeper recorded how", id,
                   task.pid);
    LeaderEnded(it, 0, true);
    return;
  }
  milliseconds wait = kRecordRetry * (1 << task.record_tries++);
  loop_.Schedule(std::chrono::steady_clock::now() + wait,
                 [this, id] { OnOrphanEnded(id); });
}

}  // namespace baton
