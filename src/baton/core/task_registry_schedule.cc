// TaskRegistry's scheduling (doc/scheduling.md): named queues with a limit
// of running tasks, priorities within a queue, and tasks that start after
// others. A task that may not start yet is held: stored as `queued`, with a
// detail that says why, and not handed to the executor. Commit starts with
// a pass (SchedulePass) that starts what may start, so a start is committed
// with the batch that decided it, and ends the held tasks whose dependency
// failed. Split from task_registry.cc, which holds everything else.
#include <fmt/format.h>

#include <algorithm>

#include "baton/core/task_registry.h"
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

Status TaskRegistry::PrepareSchedule(Schedule& schedule,
                                     const std::string& session) {
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
    if (auto task = Resolve(id, session); !task) {
      Error error = task.error();
      error.message = "after: " + error.message;
      return std::unexpected(std::move(error));
    }
  }
  return {};
}

bool TaskRegistry::HoldIfNeeded(TaskRecord& task) {
  QueueState& queue = queues_[task.spec.schedule.queue];
  // Held ones of the queue go first, even when a slot is free right now.
  if (task.spec.schedule.after.empty() && HasSlot(queue) &&
      queue.ready.empty()) {
    ++queue.running;
    return false;
  }
  task.held = true;
  IndexHeld(task);
  task.detail = HeldDetail(task);
  return true;
}

void TaskRegistry::IndexHeld(const TaskRecord& task) {
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

std::string TaskRegistry::HeldDetail(const TaskRecord& task) const {
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

void TaskRegistry::SchedulePass() {
  // Held tasks whose dependencies ended: fail, wait on, or queue. A failure
  // goes down a chain within this pass: nothing would wake the loop for
  // the next link.
  while (!reconsider_.empty()) {
    TaskId id = *reconsider_.begin();
    reconsider_.erase(reconsider_.begin());
    auto it = live_.find(id);
    if (it == live_.end() || !it->second.held || ready_after_.contains(id))
      continue;
    TaskRecord& task = it->second;
    const Schedule& schedule = task.spec.schedule;
    bool any_ended = false;
    bool all_completed = true;
    std::optional<std::string> failure;
    for (const std::string& dep : schedule.after) {
      auto dep_id = TaskId::Parse(dep);
      auto record = dep_id
                        ? Lookup(*dep_id)
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
      Finish(std::move(ended));
      continue;
    }
    if (schedule.after_any ? !any_ended : !all_completed)
      continue;  // An end of another one brings it back here.
    // Nothing to wait for but a slot in its queue. Its record keeps what
    // it waited for, for people.
    ready_after_.insert(id);
    queues_[schedule.queue].ready.insert(KeyOf(task));
    dirty_queues_.insert(schedule.queue);
    task.detail = HeldDetail(task);
    Save(TaskRecord(task));
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
      auto it = live_.find(key.id);
      if (it == live_.end() || !it->second.held ||
          it->second.status != TaskStatus::kQueued) {
        continue;
      }
      Dispatch(it->second);
    }
  }
}

void TaskRegistry::Dispatch(TaskRecord& task) {
  ready_after_.erase(task.id);
  ++queues_[task.spec.schedule.queue].running;
  task.held = false;
  task.detail = task.attempts.empty()
                    ? std::string()
                    : fmt::format("attempt {} of {}", task.attempts.size() + 1,
                                  task.spec.retry.retries + 1);
  TaskRecord start = task;  // With the client's environment.
  // In the spawn request now; no longer stored unless a retry needs it.
  if (!KeepsEnvironment(task))
    task.spec.base_env = {};
  Save(TaskRecord(task));
  if (on_dispatch_)
    on_dispatch_(start);
  effects_.push_back({.kind = Effect::Kind::kStart, .task = std::move(start)});
}

void TaskRegistry::LeaveQueue(const TaskRecord& task) {
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

void TaskRegistry::Unschedule(const TaskRecord& task) {
  LeaveQueue(task);
  // Dependents look again: the end they waited for may have come.
  if (auto node = dependents_.extract(task.id)) {
    for (const TaskId& id : node.mapped())
      reconsider_.insert(id);
  }
}

bool TaskRegistry::RetriesAfter(const TaskRecord& ended,
                                const ExitInfo& exit) const {
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

void TaskRegistry::HoldForRetry(TaskRecord task) {
  Attempt attempt;
  attempt.started_ms = task.started_ms;
  attempt.ended_ms = task.ended_ms;
  attempt.exit_code = task.exit_code;
  attempt.signal = task.signal;
  attempt.detail = task.detail;
  attempt.output_from =
      task.attempts.empty() ? 0 : task.attempts.back().output_to;
  attempt.output_to = attempt.output_from;
  if (auto size = executor_->OutputSize(task))
    attempt.output_to =
        std::max(attempt.output_from, static_cast<int64_t>(*size));
  // Its slot is free while it waits; it takes one again when released.
  LeaveQueue(task);
  task.attempts.push_back(std::move(attempt));
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
  Save(task);
  ArmRetry(id, std::chrono::milliseconds(delay_ms));
}

void TaskRegistry::ArmRetry(const TaskId& id, std::chrono::milliseconds delay) {
  retry_timers_[id] = timers_->Schedule(clock_->Now() + delay, [this, id] {
    retry_timers_.erase(id);
    auto it = live_.find(id);
    // Killed while it waited, or released already.
    if (it == live_.end() || !it->second.held || it->second.retry_at_ms == 0)
      return;
    it->second.retry_at_ms = 0;
    EnqueueReady(it->second);
    Save(TaskRecord(it->second));
  });
}

void TaskRegistry::EnqueueReady(TaskRecord& task) {
  // It ran before: what it waited for is done.
  if (!task.spec.schedule.after.empty())
    ready_after_.insert(task.id);
  queues_[task.spec.schedule.queue].ready.insert(KeyOf(task));
  dirty_queues_.insert(task.spec.schedule.queue);
  task.detail = HeldDetail(task);
}

Result<QueueView> TaskRegistry::ChangeQueue(const QueueChange& change) {
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
  Undo undo(Undo::Kind::kQueue, TaskId{}, name);
  if (exists)
    undo.queue_before = it->second.record;
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
  undo_.push_back(std::move(undo));
  dirty_queues_.insert(name);
  // Its held tasks say the new limit (a rare change: each is saved).
  for (const HeldKey& key : queue.ready) {
    auto task = live_.find(key.id);
    if (task == live_.end())
      continue;
    std::string detail = HeldDetail(task->second);
    if (detail != task->second.detail) {
      task->second.detail = std::move(detail);
      Save(TaskRecord(task->second));
    }
  }
  return ViewOf(queue);
}

QueueView TaskRegistry::ViewOf(const QueueState& state) const {
  QueueView view;
  view.record = state.record;
  view.record.name = ShownName(state.record.name);
  view.running = state.running;
  for (const auto& [id, task] : live_) {
    if (task.held && task.spec.schedule.queue == state.record.name)
      ++view.queued;
  }
  return view;
}

std::vector<QueueView> TaskRegistry::Queues() const {
  std::vector<QueueView> views;
  for (const auto& [name, state] : queues_)
    views.push_back(ViewOf(state));
  return views;
}

Status TaskRegistry::RecoverSchedule() {
  auto queues = store_->LoadQueues();
  if (!queues)
    return std::unexpected(queues.error());
  for (QueueRecord& record : *queues) {
    std::string name = record.name;
    queues_[name].record = std::move(record);
  }
  for (auto& [id, task] : live_) {
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
      IndexHeld(task);
    } else {
      ++queues_[task.spec.schedule.queue].running;
    }
  }
  return {};
}

}  // namespace baton
