// TaskRegistry's waits (task_registry.h, Wait): a flat flag per named task,
// an index from task to waits pruned lazily, answers at the first end (or
// the last, with `all`). Split from task_registry.cc.
#include <unordered_set>
#include <utility>

#include "baton/core/task_registry.h"

namespace baton {
namespace {

// What wakes a wait: the task ended, or asks a question.
bool EndedOrWaiting(TaskStatus status) {
  return IsTerminal(status) || status == TaskStatus::kWaiting;
}

// Whether a resent wait (news_since_ms) must tell `task` again although it
// was told: its end came after the first send, so only the lost answer can
// have told it. A question has no time of its own; it is told again (at
// least once, never lost: a director that misses it leaves the worker
// waiting).
bool MayHaveBeenLost(const TaskRecord& task,
                     std::optional<int64_t> news_since_ms) {
  if (!news_since_ms)
    return false;
  if (task.status == TaskStatus::kWaiting)
    return true;
  return task.ended_ms >= *news_since_ms;
}

}  // namespace

Result<WaitId> TaskRegistry::Wait(
    const std::vector<std::string>& ids, const std::string& session, bool all,
    std::optional<std::chrono::milliseconds> timeout, WaitCallback done,
    bool turns, std::optional<int64_t> news_since_ms) {
  if (ids.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "nothing to wait for; name one or more task ids");
  }
  Waiter waiter;
  waiter.session = session;
  waiter.all = all;
  waiter.turns = turns;
  waiter.done = std::move(done);
  std::vector<WaitEntry> entries;
  entries.reserve(ids.size());
  for (const auto& text : ids) {
    // A live task is checked in place: a wait over a thousand running
    // tasks must not copy a thousand records.
    auto id = TaskId::Parse(text);
    if (!id)
      return std::unexpected(id.error());
    const TaskRecord* task = FindLive(*id);
    std::optional<TaskRecord> stored;
    if (!task) {
      auto found = Lookup(*id);
      if (!found)
        return std::unexpected(found.error());
      task = &stored.emplace(std::move(*found));
    }
    if (auto allowed = CheckOwner(*task, text, session); !allowed)
      return std::unexpected(allowed.error());
    bool happened = EndedOrWaiting(task->status);
    entries.push_back({*id, !happened, !IsTerminal(task->status),
                       happened && (!ToldTo(*task, session) ||
                                    MayHaveBeenLost(*task, news_since_ms))});
  }
  return AddWait(std::move(waiter), entries, timeout);
}

WaitId TaskRegistry::AddWait(Waiter waiter,
                             const std::vector<WaitEntry>& entries,
                             std::optional<std::chrono::milliseconds> timeout) {
  WaitId id = next_wait_id_++;
  std::unordered_set<TaskId, TaskIdHash> seen;
  for (const WaitEntry& entry : entries) {
    if (!seen.insert(entry.id).second)
      continue;
    size_t index = waiter.ids.size();
    waiter.ids.push_back(entry.id);
    waiter.pending.push_back(entry.pending);
    waiter.pending_count += entry.pending;
    waiter.fresh.push_back(entry.fresh);
    waiter.fresh_count += entry.fresh;
    // A task that has ended changes no more: only live ones are indexed.
    if (!entry.live)
      continue;
    std::vector<WaitRef>& refs = waits_by_task_[entry.id];
    // The entries of waits answered or cancelled since are dropped here,
    // so a task's list never outgrows the waits open at once.
    std::erase_if(
        refs, [&](const WaitRef& ref) { return !waiters_.contains(ref.wait); });
    refs.push_back({id, index});
  }
  bool ready = WaiterReady(waiter);
  Waiter& added = waiters_.emplace(id, std::move(waiter)).first->second;
  if (ready) {
    CompleteWait(id, false);
  } else if (timeout) {
    added.timer = timers_->Schedule(clock_->Now() + *timeout,
                                    [this, id] { CompleteWait(id, true); });
  }
  return id;
}

bool TaskRegistry::WaiterReady(const Waiter& waiter) {
  // Any: at the first news, or when nothing is left to happen (every task
  // ended or asks, all told before), so that it never blocks forever.
  return waiter.all ? waiter.pending_count == 0
                    : waiter.fresh_count > 0 || waiter.pending_count == 0;
}

void TaskRegistry::WakeWaiters(const TaskId& id, TaskRecord* ended) {
  auto entry = waits_by_task_.find(id);
  if (entry == waits_by_task_.end())
    return;
  std::vector<WaitId> ready;
  for (const WaitRef& ref : entry->second) {
    auto waiter = waiters_.find(ref.wait);
    if (waiter == waiters_.end())
      continue;
    Waiter& w = waiter->second;
    // An end or a question is news, also for a task that already asked
    // (told) and now ends.
    bool changed = false;
    if (w.pending[ref.index]) {
      w.pending[ref.index] = false;
      --w.pending_count;
      changed = true;
    }
    if (!w.fresh[ref.index]) {
      w.fresh[ref.index] = true;
      ++w.fresh_count;
      changed = true;
    }
    if (changed && WaiterReady(w))
      ready.push_back(ref.wait);
  }
  // An ended task changes no more; a waiting one may run again.
  if (ended)
    waits_by_task_.erase(entry);
  for (WaitId wait : ready)
    CompleteWait(wait, false, ended);
}

void TaskRegistry::TurnEnded(const TaskId& id, const std::string& text) {
  auto entry = waits_by_task_.find(id);
  if (entry == waits_by_task_.end())
    return;
  std::vector<WaitId> ready;
  for (const WaitRef& ref : entry->second) {
    auto waiter = waiters_.find(ref.wait);
    if (waiter == waiters_.end() || !waiter->second.turns)
      continue;
    Waiter& w = waiter->second;
    // Only a task still running: an end or a question says more.
    if (!w.pending[ref.index])
      continue;
    w.pending[ref.index] = false;
    --w.pending_count;
    w.fresh[ref.index] = true;
    ++w.fresh_count;
    w.turns_ended.emplace_back(ref.index, text);
    if (WaiterReady(w))
      ready.push_back(ref.wait);
  }
  for (WaitId wait : ready)
    CompleteWait(wait, false);
}

void TaskRegistry::CompleteWait(WaitId id, bool timed_out, TaskRecord* ended) {
  auto node = waiters_.extract(id);
  if (!node)
    return;
  Waiter& waiter = node.mapped();
  if (waiter.timer && !timed_out)
    timers_->Cancel(waiter.timer);
  WaitResult result;
  result.timed_out = timed_out;
  // A wait-any with news answers with the news only; the rest of what
  // ended or asks was told before.
  bool news_only = !waiter.all && waiter.fresh_count > 0;
  // Only the ended entries of `ids` are read: on this path, each read of a
  // thousand cold entries cost a wait-any 0.1 ms.
  for (size_t i = 0; i < waiter.ids.size(); ++i) {
    if (waiter.pending[i])
      continue;
    const TaskId& task_id = waiter.ids[i];
    if (news_only && !waiter.fresh[i]) {
      result.already_told.push_back(task_id);
      continue;
    }
    if (ended && ended->id == task_id) {
      MarkSeen(*ended, waiter.session);
      result.ended.push_back(*ended);
      continue;
    }
    if (!waiter.fresh[i])
      result.told_before.push_back(task_id);
    auto task = Lookup(task_id);
    if (!task)
      continue;
    MarkSeen(*task, waiter.session);
    result.ended.push_back(std::move(*task));
  }
  for (auto& [index, text] : waiter.turns_ended)
    result.turns.emplace_back(waiter.ids[index], std::move(text));
  result.asked_ = std::move(waiter.ids);
  result.running_ = std::move(waiter.pending);
  result.still_running_count_ = waiter.pending_count;
  // A listener that fails must not starve the others; ours cannot throw,
  // and each waiter is completed on its own.
  waiter.done(std::move(result));
}

void TaskRegistry::CancelWait(WaitId id) {
  auto node = waiters_.extract(id);
  if (node && node.mapped().timer)
    timers_->Cancel(node.mapped().timer);
}

void TaskRegistry::WaitForAll(const std::vector<TaskId>& ids,
                              std::function<void()> done) {
  Waiter waiter;
  waiter.all = true;
  waiter.done = [done = std::move(done)](WaitResult) { done(); };
  std::vector<WaitEntry> entries;
  for (const TaskId& id : ids) {
    // Until it ends: a task asking a question is still to be stopped.
    bool live = live_.contains(id);
    entries.push_back({id, live, live});
  }
  AddWait(std::move(waiter), entries, std::nullopt);
}

}  // namespace baton
