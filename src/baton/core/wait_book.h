// The open waits of TaskRegistry::Wait (doc/protocol.md, "Waits"): per
// wait, the tasks it names, each once, with two flat flags (still pending:
// neither ended nor asking; fresh: news its session was not told); per
// live task, the waits that name it. It answers a wait-any at the first
// news and a wait-all once nothing is pending, at a timeout, or with an
// error when a task it names is taken back.
//
// It knows no records, owners or store: the registry resolves the ids
// before (Add) and builds the answer (the `Answer` it is given) after.
// Single-threaded, on the loop, like the registry.
#ifndef BATON_CORE_WAIT_BOOK_H_
#define BATON_CORE_WAIT_BOOK_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/clock.h"
#include "baton/util/result.h"
#include "baton/util/timers.h"

namespace baton {

// What a wait answers (TaskRegistry::Wait).
struct WaitResult {
  std::vector<TaskRecord> ended;  // Terminal (or asking a question).
  bool timed_out = false;
  // A task's end answered it, as the end was recorded (not a question, a
  // timeout, or an end known before the wait): what /metrics' wake time
  // measures (doc/metrics.md).
  bool woken_by_end = false;
  // Set when the wait has no answer: a task it names was taken back by a
  // failed commit (TaskRegistry::Commit). Nothing else is set then.
  std::optional<Error> error;
  // Named tasks that ended or ask, whose end or question the session was
  // told before, left out of `ended` because others are news.
  std::vector<TaskId> already_told;
  // Tasks in `ended` whose end (or question) the session was told before
  // this wait: when nothing named is news, a wait answers at once with
  // every ended one, and these say which were not news.
  std::vector<TaskId> told_before;
  // With `turns`: the agent tasks of `ended` that ended a turn (and run
  // on), each with that turn's final text.
  std::vector<std::pair<TaskId, std::string>> turns;

  // The tasks still running, in the order asked: only ids (FindLive has
  // the records), and only listed on demand. A wait over a thousand ids is
  // answered by a count as quickly as a wait over one.
  size_t still_running_count() const { return still_running_count_; }
  std::vector<TaskId> StillRunning() const {
    std::vector<TaskId> ids;
    ids.reserve(still_running_count_);
    for (size_t i = 0; i < asked_.size(); ++i) {
      if (running_[i])
        ids.push_back(asked_[i]);
    }
    return ids;
  }

 private:
  friend class WaitBook;
  std::vector<TaskId> asked_;  // Each once, in the order asked.
  std::vector<bool> running_;  // Per entry of asked_.
  size_t still_running_count_ = 0;
};

using WaitId = uint64_t;

class WaitBook {
 public:
  using Done = std::function<void(WaitResult)>;

  // One open wait.
  struct Waiter {
    std::string session;
    std::vector<TaskId> ids;  // Each once, in the order asked.
    // Per entry of `ids`: neither ended nor waiting. Kept up to date on
    // each change of one of them, so that a task's end costs O(1) per
    // waiter; flat, so that answering a wait over 1,000 ids walks two
    // arrays instead of chasing a thousand tree nodes.
    std::vector<bool> pending;
    size_t pending_count = 0;
    // Per entry of `ids`: ended or asking, and not yet told to `session`
    // (news). A wait-any answers at the first.
    std::vector<bool> fresh;
    size_t fresh_count = 0;
    // Whether a turn's end answers it, and the turns that ended (index
    // in `ids`, final text).
    bool turns = false;
    std::vector<std::pair<size_t, std::string>> turns_ended;
    bool all = false;
    TimerId timer = 0;
    Done done;
  };
  // A task a new wait names: whether the wait counts it as pending, and
  // whether it is live (a task that has ended changes no more).
  struct Entry {
    TaskId id;
    bool pending;
    bool live;
    bool fresh = false;
  };
  // Fills `result.ended`, `already_told` and `told_before` of a wait that
  // completes (`ended`, when given, is the record of the task whose end
  // completes it); the book adds the rest and calls the wait's `done`.
  using Answer = std::function<void(const Waiter& waiter, TaskRecord* ended,
                                    WaitResult& result)>;

  WaitBook(Timers* timers, const Clock* clock, Answer answer);
  // Cancels the timers of the waits still open; calls no `done`.
  ~WaitBook();
  WaitBook(const WaitBook&) = delete;
  WaitBook& operator=(const WaitBook&) = delete;

  // Registers `waiter` (session, all, turns, done) over `entries` (a task
  // named twice counts once) under a new id; answers it at once if it is
  // ready, else at the first news or after `timeout`.
  WaitId Add(Waiter waiter, const std::vector<Entry>& entries,
             std::optional<std::chrono::milliseconds> timeout);
  // Drops a wait without an answer.
  void Cancel(WaitId id);

  // A task ended (`ended`: its record) or asks a question (`ended` null):
  // news to every wait that names it.
  void TaskChanged(const TaskId& id, TaskRecord* ended);
  // A question was answered: the task counts as running again.
  void TaskRunsAgain(const TaskId& id);
  // An agent task ended a turn: news to the waits that asked for turns.
  void TurnEnded(const TaskId& id, const std::string& text);
  // A task was taken back (a failed commit): the waits naming it answer
  // with `error`.
  void Fail(const TaskId& id, const Error& error);

  size_t open() const { return waiters_.size(); }

 private:
  // Where a wait names a task: the wait, and the task's place in its ids.
  struct Ref {
    WaitId wait;
    size_t index;
  };
  struct TaskIdHash {
    size_t operator()(const TaskId& id) const {
      return std::hash<int64_t>()(id.number * 2 +
                                  static_cast<int64_t>(id.kind));
    }
  };

  static bool Ready(const Waiter& waiter);
  // Calls `change(waiter, index)` for each open wait naming `id`; returns
  // those for which it said "changed" and that are now ready.
  std::vector<WaitId> ChangeEach(
      const TaskId& id, const std::function<bool(Waiter&, size_t)>& change);
  void Complete(WaitId id, bool timed_out, TaskRecord* ended = nullptr);

  Timers* timers_;
  const Clock* clock_;
  Answer answer_;
  std::unordered_map<WaitId, Waiter> waiters_;
  // Per live task, the waits naming it. An answered or cancelled wait
  // leaves its entries behind: they are skipped, and dropped when the task
  // ends or a new wait names it. Removing them at once would cost a wait
  // over 1,000 ids a thousand look-ups right when it is answered.
  std::unordered_map<TaskId, std::vector<Ref>, TaskIdHash> by_task_;
  WaitId next_id_ = 1;
};

}  // namespace baton

#endif  // BATON_CORE_WAIT_BOOK_H_
