// TaskRegistry's kills and leases: a client's kill (at once, or after a
// stop delay), one for a limit or a budget, all of them when batond stops,
// and a session's lease, which stops its live tasks when it lapses
// (task_registry.h). Split from task_registry.cc.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "baton/core/sessions.h"
#include "baton/core/task_registry.h"
#include "baton/util/log.h"

namespace baton {

Result<KillOutcome> TaskRegistry::Kill(
    std::string_view id, const std::string& session, std::string reason,
    std::optional<std::chrono::milliseconds> grace,
    std::chrono::milliseconds stop_delay, KillOrigin origin) {
  auto task = Resolve(id, session);
  if (!task)
    return std::unexpected(task.error());
  if (IsTerminal(task->status)) {
    MarkEndSeen(*task, session);
    return KillOutcome::kAlreadyTerminal;
  }
  Undo undo(Undo::Kind::kKill, task->id);
  undo.status = task->status;
  undo.kill_reason = task->kill_reason;
  undo.killed_at_limit = task->killed_at_limit;
  undo.end_seen = task->end_seen;
  undo_.push_back(std::move(undo));
  // The one who kills a task knows how it ends; no notice for it. batond
  // stopping it at a limit is no one's request: the owner is told.
  if (origin == KillOrigin::kRequest && !task->spec.owner.empty() &&
      task->spec.owner == session) {
    task->end_seen = true;
  }
  RequestKill(*task, std::move(reason), grace, stop_delay, /*undoable=*/true,
              origin);
  return KillOutcome::kRequested;
}

void TaskRegistry::RequestKill(TaskRecord& task, std::string reason,
                               std::optional<std::chrono::milliseconds> grace,
                               std::chrono::milliseconds stop_delay,
                               bool undoable, KillOrigin origin) {
  if (task.status == TaskStatus::kStopping) {
    Save(task, undoable);  // Already on its way down.
    return;
  }
  if (task.held) {
    // Never started: it ends now. (A failed commit keeps this end, as it
    // keeps any end that raced a kill: RollBack.)
    TaskRecord ended = task;
    ended.status = TaskStatus::kKilled;
    ended.kill_reason = reason.empty() ? "by request" : std::move(reason);
    ended.killed_at_limit = origin == KillOrigin::kLimit;
    ended.detail = ended.attempts.empty() ? "killed before it started"
                                          : "killed while it waited to retry";
    ended.retry_at_ms = 0;
    ended.ended_ms = clock_->WallNowMillis();
    task = ended;
    Finish(std::move(ended));
    return;
  }
  // A remote job is cancelled while it is pending too (the executor keeps
  // a kill that comes before its submission was answered).
  bool spawned = task.status != TaskStatus::kQueued || task.spec.remote;
  task.status = TaskStatus::kStopping;
  task.kill_reason = reason.empty() ? "by request" : std::move(reason);
  task.killed_at_limit = origin == KillOrigin::kLimit;
  Save(task, undoable);
  if (!spawned) {
    // Sent once the spawn is reported (OnTaskSpawned), with what was asked.
    spawn_kills_[task.id] = {grace.value_or(options_.default_grace),
                             stop_delay};
    return;
  }
  TaskRecord target;
  target.id = task.id;
  effects_.push_back({.kind = Effect::Kind::kKill,
                      .task = std::move(target),
                      .grace = grace.value_or(options_.default_grace),
                      .stop_delay = stop_delay,
                      .undoable = undoable});
}

std::vector<TaskId> TaskRegistry::KillAll(const std::string& reason) {
  std::vector<TaskRecord> tasks;
  for (const auto& [id, task] : live_)
    tasks.push_back(task);
  std::vector<TaskId> ids;
  for (auto& task : tasks) {
    RequestKill(task, reason, std::nullopt);
    ids.push_back(task.id);
  }
  return ids;
}

void TaskRegistry::Attach(const std::string& session) {
  if (session.empty())
    return;
  SessionState& state = sessions_[session];
  ++state.attached;
  if (state.lease_timer) {
    timers_->Cancel(state.lease_timer);
    state.lease_timer = 0;
  }
  if (leased_sessions_.insert(session).second)
    MarkLeased(session);
}

void TaskRegistry::MarkLeased(const std::string& session) {
  if (auto marked = store_->MarkSessionLeased(session); !marked) {
    BATON_LOG_ERROR("marking session {} leased: {}", session,
                    marked.error().message);
  }
}

void TaskRegistry::Detach(const std::string& session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second.attached == 0)
    return;
  if (--it->second.attached == 0)
    StartLease(session);
}

void TaskRegistry::StartLease(const std::string& session) {
  SessionState& state = sessions_[session];
  if (state.lease_timer)
    timers_->Cancel(state.lease_timer);
  state.lease_timer =
      timers_->Schedule(clock_->Now() + options_.lease,
                        [this, session] { ExpireLease(session); });
}

void TaskRegistry::ExpireLease(const std::string& session) {
  sessions_[session].lease_timer = 0;
  std::vector<TaskRecord> tasks;
  for (const auto& [id, task] : live_) {
    if (task.spec.owner == session)
      tasks.push_back(task);
  }
  BATON_LOG_INFO("lease of session {} ran out; stopping {} tasks", session,
                 tasks.size());
  // Killed in the owner's absence: the owner has not seen the end, so the
  // notice waits for its return.
  for (auto& task : tasks) {
    RequestKill(task, "session lease expired", std::nullopt);
    audit_.Record({.action = "lease_expired",
                   .task = task.id.ToString(),
                   .session = session,
                   .client = kAuditByBatond,
                   .uid = static_cast<int64_t>(options_.uid),
                   .pid = options_.pid,
                   .detail = "stopped: its session's lease ran out"},
                  /*with_batch=*/true);
  }
}

}  // namespace baton
