// TaskRegistry's waits (task_registry.h, Wait): the ids resolved and their
// owners checked here, the open waits kept by the WaitBook
// (core/wait_book.h), and their answers read here.
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
  WaitBook::Waiter waiter;
  waiter.session = session;
  waiter.all = all;
  waiter.turns = turns;
  waiter.done = std::move(done);
  std::vector<WaitBook::Entry> entries;
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
  return waits_.Add(std::move(waiter), entries, timeout);
}

void TaskRegistry::AnswerWait(const WaitBook::Waiter& waiter, TaskRecord* ended,
                              WaitResult& result) {
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
}

void TaskRegistry::TurnEnded(const TaskId& id, const std::string& text) {
  waits_.TurnEnded(id, text);
}

void TaskRegistry::CancelWait(WaitId id) {
  waits_.Cancel(id);
}

void TaskRegistry::WaitForAll(const std::vector<TaskId>& ids,
                              std::function<void()> done) {
  WaitBook::Waiter waiter;
  waiter.all = true;
  waiter.done = [done = std::move(done)](WaitResult) { done(); };
  std::vector<WaitBook::Entry> entries;
  for (const TaskId& id : ids) {
    // Until it ends: a task asking a question is still to be stopped.
    bool live = live_.contains(id);
    entries.push_back({id, live, live});
  }
  waits_.Add(std::move(waiter), entries, std::nullopt);
}

}  // namespace baton
