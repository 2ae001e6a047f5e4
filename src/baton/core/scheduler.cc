// The scheduler (scheduler.h, doc/scheduling.md).
#include "baton/core/scheduler.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/util/duration.h"
#include "baton/util/log.h"

namespace baton {
namespace {

// How many tasks a task may wait for.
constexpr size_t kMaxAfter = 64;

bool ValidQueueName(std::string_view name) {
  if (name.empty() || name.size() > 64)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

// The stored name: the default queue is "".
std::string StoredName(std::string_view name) {
  return name == kDefaultQueue ? std::string() : std::string(name);
}

std::string ShownName(std::string_view stored) {
  return stored.empty() ? std::string(kDefaultQueue) : std::string(stored);
}

std::string JoinIds(const std::vector<std::string>& ids) {
  return fmt::format("{}", fmt::join(ids, ", "));
}

// "failed", "was killed", "was interrupted": how a dependency ended.
std::string EndedHow(TaskStatus status) {
  switch (status) {
    case TaskStatus::kKilled:
      return "was killed";
    case TaskStatus::kInterrupted:
      return "was interrupted";
    default:
      return "failed";
  }
}

}  // namespace

Scheduler::Scheduler(Host* host, TaskStore* store, Timers* timers,
                     const Clock* clock)
    : host_(host), store_(store), timers_(timers), clock_(clock) {
  queues_[""];  // The default queue is always there.
}

Scheduler::~Scheduler() {
  for (const auto& [id, timer] : retry_timers_)
    timers_->Cancel(timer);
}

const ResourceLimits* Scheduler::QueueLimits(const std::string& queue) const {
  auto it = queues_.find(queue);
  return it == queues_.end() ? nullptr : &it->second.record.limits;
}

Status Scheduler::Prepare(Schedule& schedule, const std::string& session) {
  schedule.queue = StoredName(schedule.queue);
  auto invalid = [](std::string message) {
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  };
  if (!schedule.queue.empty() && !queues_.contains(schedule.queue)) {
    if (!ValidQueueName(schedule.queue)) {
      return invalid(fmt::format(
          "'{}' is not a queue name; use letters, digits, '_', '-' and '.'",
          schedule.queue));
    }
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no queue '{}'; create it first: baton queue "
                                 "add {} --max N (baton queue ls lists them)",
                                 schedule.queue, schedule.queue));
  }
  if (schedule.after.size() > kMaxAfter) {
    return invalid(fmt::format("a task may wait for at most {} tasks, not {}",
                               kMaxAfter, schedule.after.size()));
  }
  if (schedule.after_any && schedule.after.empty()) {
    return invalid("after_any needs the tasks to wait for (after)");
  }
  std::set<std::string> seen;
  for (const std::string& id : schedule.after) {
    if (!seen.insert(id).second) {
      return invalid(fmt::format("{} is named twice in after", id));
    }
    // Unknown ids and other sessions' tasks are refused as a read would.
    // A new task can only name tasks that exist, so no cycle can form.
    if (auto task = host_->ResolveTask(id, session); !task) {
      Error error = task.error();
      error.message = "after: " + error.message;
      return std::unexpected(std::move(error));
    }
  }
  return {};
}

bool Scheduler::HoldIfNeeded(TaskRecord& task) {
  QueueState& queue = queues_[task.spec.schedule.queue];
  // Held ones of the queue go first, even when a slot is free right now.
  if (task.spec.schedule.after.empty() && HasSlot(queue) &&
      queue.ready.empty()) {
    ++queue.running;
    return false;
  }
  task.held = true;
  Index(task);
  task.detail = HeldDetail(task);
  return true;
}

void Scheduler::Index(const TaskRecord& task) {
  const Schedule& schedule = task.spec.schedule;
  if (schedule.after.empty()) {
    queues_[schedule.queue].ready.insert(KeyOf(task));
    dirty_queues_.insert(schedule.queue);
    return;
  }
  for (const std::string& dep : schedule.after) {
    if (auto id = TaskId::Parse(dep))
      dependents_[*id].push_back(task.id);
  }
  // Its dependencies may have ended already (or while batond was down):
  // the pass looks at once.
  reconsider_.insert(task.id);
}

std::string Scheduler::HeldDetail(const TaskRecord& task) const {
  const Schedule& schedule = task.spec.schedule;
  if (!schedule.after.empty() && !ready_after_.contains(task.id)) {
    return fmt::format("after {}{}", schedule.after_any ? "any of " : "",
                       JoinIds(schedule.after));
  }
  auto it = queues_.find(schedule.queue);
  if (it == queues_.end())
    return "";
  const QueueRecord& queue = it->second.record;
  std::string name = ShownName(schedule.queue);
  if (queue.paused)
    return fmt::format("queue {}: paused", name);
  if (queue.max_running) {
    return fmt::format("queue {}: {} of {} running", name, it->second.running,
                       *queue.max_running);
  }
  return fmt::format("queue {}: next", name);
}

void Scheduler::Pass() {
  // Held tasks whose dependencies ended: fail, wait on, or queue. A failure
  // goes down a chain within this pass: nothing would wake the loop for
  // the next link.
  std::map<TaskId, TaskRecord>& live = host_->Live();
  while (!reconsider_.empty()) {
    TaskId id = *reconsider_.begin();
    reconsider_.erase(reconsider_.begin());
    auto it = live.find(id);
    if (it == live.end() || !it->second.held || ready_after_.contains(id))
      continue;
    Reconsider(it->second);
  }
  // Queues with room start their held tasks, by priority.
  for (const std::string& name : std::exchange(dirty_queues_, {})) {
    auto found = queues_.find(name);
    if (found == queues_.end())
      continue;
    QueueState& queue = found->second;
    while (!queue.ready.empty() && HasSlot(queue)) {
      HeldKey key = *queue.ready.begin();
      queue.ready.erase(queue.ready.begin());
      auto it = live.find(key.id);
      if (it == live.end() || !it->second.held ||
          it->second.status != TaskStatus::kQueued) {
        continue;
      }
      Dispatch(it->second);
    }
  }
}

void Scheduler::Reconsider(TaskRecord& task) {
  const Schedule& schedule = task.spec.schedule;
  bool any_ended = false;
  bool all_completed = true;
  std::optional<std::string> failure;
  for (const std::string& dep : schedule.after) {
    auto dep_id = TaskId::Parse(dep);
    auto record = dep_id ? host_->LookupTask(*dep_id)
                         : Result<TaskRecord>(std::unexpected(dep_id.error()));
    if (!record) {
      failure = fmt::format("dependency {} is gone", dep);
      break;
    }
    if (!IsTerminal(record->status)) {
      all_completed = false;
      continue;
    }
    any_ended = true;
    if (record->status != TaskStatus::kCompleted) {
      all_completed = false;
      if (!schedule.after_any) {
        failure =
            fmt::format("dependency {} {}", dep, EndedHow(record->status));
        break;
      }
    }
  }
  if (failure) {
    // Ends without running, as a failure its director is told of.
    TaskRecord ended = task;
    ended.status = TaskStatus::kFailed;
    ended.detail = *failure;
    ended.ended_ms = clock_->WallNowMillis();
    host_->FailTask(std::move(ended));
    return;
  }
  if (schedule.after_any ? !any_ended : !all_completed)
    return;  // An end of another one brings it back here.
  // Nothing to wait for but a slot in its queue. Its record keeps what
  // it waited for, for people.
  ready_after_.insert(task.id);
  queues_[schedule.queue].ready.insert(KeyOf(task));
  dirty_queues_.insert(schedule.queue);
  task.detail = HeldDetail(task);
  host_->SaveTask(task);
}

void Scheduler::Dispatch(TaskRecord& task) {
  ready_after_.erase(task.id);
  ++queues_[task.spec.schedule.queue].running;
  task.held = false;
  task.detail = task.attempts.empty()
                    ? std::string()
                    : fmt::format("attempt {} of {}", task.attempts.size() + 1,
                                  task.spec.retry.retries + 1);
  host_->StartTask(task);
}

void Scheduler::LeaveQueue(const TaskRecord& task) {
  ready_after_.erase(task.id);
  auto queue = queues_.find(task.spec.schedule.queue);
  if (task.held) {
    if (queue != queues_.end())
      queue->second.ready.erase(KeyOf(task));
  } else if (queue != queues_.end() && queue->second.running > 0) {
    --queue->second.running;
    if (!queue->second.ready.empty())
      dirty_queues_.insert(task.spec.schedule.queue);
  }
}

void Scheduler::Remove(const TaskRecord& task) {
  if (auto timer = retry_timers_.extract(task.id))
    timers_->Cancel(timer.mapped());
  LeaveQueue(task);
  // Dependents look again: the end they waited for may have come.
  if (auto node = dependents_.extract(task.id)) {
    for (const TaskId& id : node.mapped())
      reconsider_.insert(id);
  }
}

bool Scheduler::RetriesAfter(const TaskRecord& ended, const ExitInfo& exit) {
  // A failure, or a timeout; never a kill or a lost task. An attempt that
  // filled the output cap is the last: its log has no room for what a
  // retry would print. An agent starts again from its brief
  // (doc/agents.md, "Retries").
  bool failed =
      ended.status == TaskStatus::kFailed || exit.cause == ExitCause::kTimedOut;
  return failed && ended.kill_reason.empty() &&
         static_cast<int64_t>(ended.attempts.size()) <
             ended.spec.retry.retries &&
         ended.output_dropped == 0;
}

void Scheduler::HoldForRetry(TaskRecord task) {
  // Its slot is free while it waits; it takes one again when released.
  LeaveQueue(task);
  int64_t retry = static_cast<int64_t>(task.attempts.size());
  int64_t delay_ms = RetryDelayMs(task.spec.retry, retry);
  task.status = TaskStatus::kQueued;
  task.held = true;
  task.pid = 0;
  task.started_ms = 0;
  task.ended_ms = 0;
  task.exit_code.reset();
  task.signal.reset();
  task.evidence.reset();
  task.retry_at_ms = clock_->WallNowMillis() + delay_ms;
  task.detail = fmt::format("retry {} of {} in {} (attempt {}: {})", retry,
                            task.spec.retry.retries,
                            FormatDuration(std::chrono::milliseconds(delay_ms)),
                            retry, task.attempts.back().detail);
  BATON_LOG_INFO("{}: attempt {} {}; {}", task.id.ToString(), retry,
                 task.attempts.back().detail, task.detail);
  TaskId id = task.id;
  host_->SaveTask(task);
  ArmRetry(id, std::chrono::milliseconds(delay_ms));
}

void Scheduler::ArmRetry(const TaskId& id, std::chrono::milliseconds delay) {
  retry_timers_[id] = timers_->Schedule(clock_->Now() + delay, [this, id] {
    retry_timers_.erase(id);
    std::map<TaskId, TaskRecord>& live = host_->Live();
    auto it = live.find(id);
    // Killed while it waited, or released already.
    if (it == live.end() || !it->second.held || it->second.retry_at_ms == 0)
      return;
    it->second.retry_at_ms = 0;
    EnqueueReady(it->second);
    host_->SaveTask(it->second);
  });
}

void Scheduler::EnqueueReady(TaskRecord& task) {
  // It ran before: what it waited for is done.
  if (!task.spec.schedule.after.empty())
    ready_after_.insert(task.id);
  queues_[task.spec.schedule.queue].ready.insert(KeyOf(task));
  dirty_queues_.insert(task.spec.schedule.queue);
  task.detail = HeldDetail(task);
}

Result<QueueView> Scheduler::ChangeQueue(const QueueChange& change) {
  if (!ValidQueueName(change.name)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' is not a queue name; use 1 to 64 "
                                 "letters, digits, '_', '-' and '.'",
                                 change.name));
  }
  for (auto [value, name] :
       {std::pair(change.memory_bytes, "memory"),
        std::pair(change.cpu_millis, "cpus"), std::pair(change.pids, "pids")}) {
    if (value && *value < 0) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("a queue's {} must be 0 (none) or more", name));
    }
  }
  if (change.max_running && *change.max_running < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--max must be 0 (no limit) or more");
  }
  std::string name = StoredName(change.name);
  auto it = queues_.find(name);
  bool exists = it != queues_.end();
  if (change.kind == QueueChange::Kind::kAdd && exists) {
    return MakeError(ErrorCode::kAlreadyExists,
                     fmt::format("queue '{}' exists; change it with: baton "
                                 "queue set {} --max N",
                                 change.name, change.name));
  }
  if (change.kind == QueueChange::Kind::kSet && !exists) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no queue '{}'; create it with: baton queue "
                                 "add {} --max N",
                                 change.name, change.name));
  }
  std::optional<QueueRecord> before;
  if (exists)
    before = it->second.record;
  QueueState& queue = queues_[name];
  queue.record.name = name;
  if (change.max_running) {
    queue.record.max_running = *change.max_running == 0
                                   ? std::nullopt
                                   : std::optional(*change.max_running);
  }
  if (change.paused)
    queue.record.paused = *change.paused;
  if (change.memory_bytes)
    queue.record.limits.memory_bytes = *change.memory_bytes;
  if (change.cpu_millis)
    queue.record.limits.cpu_millis = *change.cpu_millis;
  if (change.pids)
    queue.record.limits.pids = *change.pids;
  if (auto saved = store_->PutQueue(queue.record); !saved)
    return std::unexpected(saved.error());
  batch_.emplace_back(name, std::move(before));
  dirty_queues_.insert(name);
  // Its held tasks say the new limit (a rare change: each is saved).
  std::map<TaskId, TaskRecord>& live = host_->Live();
  for (const HeldKey& key : queue.ready) {
    auto task = live.find(key.id);
    if (task == live.end())
      continue;
    std::string detail = HeldDetail(task->second);
    if (detail != task->second.detail) {
      task->second.detail = std::move(detail);
      host_->SaveTask(task->second);
    }
  }
  return ViewOf(queue);
}

QueueView Scheduler::ViewOf(const QueueState& state) const {
  QueueView view;
  view.record = state.record;
  view.record.name = ShownName(state.record.name);
  view.running = state.running;
  for (const auto& [id, task] : const_cast<Scheduler*>(this)->host_->Live()) {
    if (task.held && task.spec.schedule.queue == state.record.name)
      ++view.queued;
  }
  return view;
}

std::vector<QueueView> Scheduler::Queues() const {
  std::vector<QueueView> views;
  for (const auto& [name, state] : queues_)
    views.push_back(ViewOf(state));
  return views;
}

Status Scheduler::Recover() {
  auto queues = store_->LoadQueues();
  if (!queues)
    return std::unexpected(queues.error());
  for (QueueRecord& record : *queues) {
    std::string name = record.name;
    queues_[name].record = std::move(record);
  }
  for (auto& [id, task] : host_->Live()) {
    if (task.held && !task.attempts.empty()) {
      // Held for a retry: at its time, or now if that passed while batond
      // was down; or released already, waiting for a slot.
      if (task.retry_at_ms != 0) {
        ArmRetry(id, std::chrono::milliseconds(std::max<int64_t>(
                         0, task.retry_at_ms - clock_->WallNowMillis())));
      } else {
        EnqueueReady(task);
      }
    } else if (task.held) {
      Index(task);
    } else {
      ++queues_[task.spec.schedule.queue].running;
    }
  }
  return {};
}

void Scheduler::Unindex(const TaskRecord& task) {
  LeaveQueue(task);
  for (const std::string& dep : task.spec.schedule.after) {
    auto dep_id = TaskId::Parse(dep);
    if (!dep_id)
      continue;
    auto waiting = dependents_.find(*dep_id);
    if (waiting == dependents_.end())
      continue;
    std::erase(waiting->second, task.id);
    if (waiting->second.empty())
      dependents_.erase(waiting);
  }
}

void Scheduler::RollBack() {
  // Newest first, so each queue gets the record it had before the batch.
  for (auto change = batch_.rbegin(); change != batch_.rend(); ++change) {
    const auto& [name, before] = *change;
    if (before) {
      queues_[name].record = *before;
    } else if (auto queue = queues_.find(name); queue != queues_.end() &&
                                                queue->second.ready.empty() &&
                                                queue->second.running == 0) {
      queues_.erase(queue);
    }
  }
  batch_.clear();
}

}  // namespace baton
