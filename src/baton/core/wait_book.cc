#include "baton/core/wait_book.h"

#include <unordered_set>

namespace baton {

WaitBook::WaitBook(Timers* timers, const Clock* clock, Answer answer)
    : timers_(timers), clock_(clock), answer_(std::move(answer)) {}

WaitBook::~WaitBook() {
  for (const auto& [id, waiter] : waiters_) {
    if (waiter.timer)
      timers_->Cancel(waiter.timer);
  }
}

WaitId WaitBook::Add(Waiter waiter, const std::vector<Entry>& entries,
                     std::optional<std::chrono::milliseconds> timeout) {
  WaitId id = next_id_++;
  std::unordered_set<TaskId, TaskIdHash> seen;
  for (const Entry& entry : entries) {
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
    std::vector<Ref>& refs = by_task_[entry.id];
    // The entries of waits answered or cancelled since are dropped here,
    // so a task's list never outgrows the waits open at once.
    std::erase_if(refs,
                  [&](const Ref& ref) { return !waiters_.contains(ref.wait); });
    refs.push_back({id, index});
  }
  bool ready = Ready(waiter);
  Waiter& added = waiters_.emplace(id, std::move(waiter)).first->second;
  if (ready) {
    Complete(id, false);
  } else if (timeout) {
    added.timer = timers_->Schedule(clock_->Now() + *timeout,
                                    [this, id] { Complete(id, true); });
  }
  return id;
}

void WaitBook::Cancel(WaitId id) {
  auto node = waiters_.extract(id);
  if (node && node.mapped().timer)
    timers_->Cancel(node.mapped().timer);
}

bool WaitBook::Ready(const Waiter& waiter) {
  // Any: at the first news, or when nothing is left to happen (every task
  // ended or asks, all told before), so that it never blocks forever.
  return waiter.all ? waiter.pending_count == 0
                    : waiter.fresh_count > 0 || waiter.pending_count == 0;
}

std::vector<WaitId> WaitBook::ChangeEach(
    const TaskId& id, const std::function<bool(Waiter&, size_t)>& change) {
  std::vector<WaitId> ready;
  auto entry = by_task_.find(id);
  if (entry == by_task_.end())
    return ready;
  for (const Ref& ref : entry->second) {
    auto waiter = waiters_.find(ref.wait);
    if (waiter != waiters_.end() && change(waiter->second, ref.index) &&
        Ready(waiter->second)) {
      ready.push_back(ref.wait);
    }
  }
  return ready;
}

void WaitBook::TaskChanged(const TaskId& id, TaskRecord* ended) {
  std::vector<WaitId> ready = ChangeEach(id, [](Waiter& w, size_t i) {
    // An end or a question is news, also for a task that already asked
    // (told) and now ends.
    bool changed = false;
    if (w.pending[i]) {
      w.pending[i] = false;
      --w.pending_count;
      changed = true;
    }
    if (!w.fresh[i]) {
      w.fresh[i] = true;
      ++w.fresh_count;
      changed = true;
    }
    return changed;
  });
  // An ended task changes no more; a waiting one may run again.
  if (ended)
    by_task_.erase(id);
  for (WaitId wait : ready)
    Complete(wait, false, ended);
}

void WaitBook::TaskRunsAgain(const TaskId& id) {
  // It counts as running again for a wait --all still open.
  ChangeEach(id, [](Waiter& w, size_t i) {
    if (!w.pending[i]) {
      w.pending[i] = true;
      ++w.pending_count;
    }
    if (w.fresh[i]) {
      w.fresh[i] = false;
      --w.fresh_count;
    }
    return false;
  });
}

void WaitBook::TurnEnded(const TaskId& id, const std::string& text) {
  std::vector<WaitId> ready = ChangeEach(id, [&](Waiter& w, size_t i) {
    // Only a task still running: an end or a question says more.
    if (!w.turns || !w.pending[i])
      return false;
    w.pending[i] = false;
    --w.pending_count;
    w.fresh[i] = true;
    ++w.fresh_count;
    w.turns_ended.emplace_back(i, text);
    return true;
  });
  for (WaitId wait : ready)
    Complete(wait, false);
}

void WaitBook::Fail(const TaskId& id, const Error& error) {
  auto entry = by_task_.find(id);
  if (entry == by_task_.end())
    return;
  std::vector<Ref> refs = std::move(entry->second);
  by_task_.erase(entry);
  for (const Ref& ref : refs) {
    auto node = waiters_.extract(ref.wait);
    if (!node)
      continue;
    if (node.mapped().timer)
      timers_->Cancel(node.mapped().timer);
    WaitResult result;
    result.error = error;
    node.mapped().done(std::move(result));
  }
}

void WaitBook::Complete(WaitId id, bool timed_out, TaskRecord* ended) {
  auto node = waiters_.extract(id);
  if (!node)
    return;
  Waiter& waiter = node.mapped();
  if (waiter.timer && !timed_out)
    timers_->Cancel(waiter.timer);
  WaitResult result;
  result.timed_out = timed_out;
  result.woken_by_end = ended != nullptr;
  answer_(waiter, ended, result);
  for (auto& [index, text] : waiter.turns_ended)
    result.turns.emplace_back(waiter.ids[index], std::move(text));
  result.asked_ = std::move(waiter.ids);
  result.running_ = std::move(waiter.pending);
  result.still_running_count_ = waiter.pending_count;
  // A listener that fails must not starve the others; ours cannot throw,
  // and each waiter is completed on its own.
  waiter.done(std::move(result));
}

}  // namespace baton
