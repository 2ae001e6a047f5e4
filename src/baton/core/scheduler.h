// The scheduler (doc/scheduling.md): named queues with a limit of running
// tasks, priorities within a queue, tasks that start after others, and the
// delays of retries. A task that may not start yet is held: stored as
// `queued`, with a detail that says why, and not handed to the executor.
// The registry's Commit starts with a pass (Pass) that starts what may
// start, so a start is committed with the batch that decided it, and ends
// the held tasks whose dependency failed.
//
// The scheduler owns the queues and its indexes of held tasks; the tasks
// themselves are the registry's, reached through Host. Single-threaded, on
// batond's loop, as the registry.
#ifndef BATON_CORE_SCHEDULER_H_
#define BATON_CORE_SCHEDULER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/ports.h"
#include "baton/core/task.h"

namespace baton {

// A queue as people see it (doc/scheduling.md).
struct QueueView {
  QueueRecord record;   // The default queue's name is kDefaultQueue here.
  int64_t running = 0;  // Its tasks handed to the executor and not ended.
  int64_t queued = 0;   // Its tasks held: waiting for a slot or for others.
};

// A change to a queue: `add` makes a new one, `set` changes one.
struct QueueChange {
  enum class Kind { kAdd, kSet };
  Kind kind = Kind::kSet;
  std::string name;
  std::optional<int64_t> max_running;  // 0 = no limit; nullopt = unchanged.
  std::optional<bool> paused;          // nullopt = unchanged.
  // Its tasks' default limits, each: 0 = none, nullopt = unchanged.
  std::optional<int64_t> memory_bytes;
  std::optional<int64_t> cpu_millis;
  std::optional<int64_t> pids;
};

class Scheduler {
 public:
  // What the scheduler asks of the registry, which owns the tasks.
  class Host {
   public:
    virtual ~Host() = default;
    // The live tasks, by id: the scheduler changes held ones in place,
    // then saves them.
    virtual std::map<TaskId, TaskRecord>& Live() = 0;
    // Any task, live or stored; for what a held task waits for.
    virtual Result<TaskRecord> LookupTask(const TaskId& id) = 0;
    // `id` as `session` may see it, refused as a read would be.
    virtual Result<TaskRecord> ResolveTask(std::string_view id,
                                           const std::string& session) = 0;
    virtual void SaveTask(const TaskRecord& task) = 0;
    // A held task starts: handed to the executor with this batch.
    virtual void StartTask(TaskRecord& task) = 0;
    // A held task ends without running (a dependency failed): `ended` is
    // terminal, its director is told as of any failure.
    virtual void FailTask(TaskRecord ended) = 0;
  };

  // Borrows all four; they must outlive it. The default queue is there
  // from the start.
  Scheduler(Host* host, TaskStore* store, Timers* timers, const Clock* clock);
  // Cancels the retries' timers.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Rebuilds the queues and indexes from the store and the host's live
  // tasks. Call once, after the host loaded them.
  Status Recover();

  // Stores the default queue's name as "", then refuses (kInvalidArgument,
  // kNotFound, kPermissionDenied) a schedule that names a queue or tasks
  // that `session` cannot use.
  Status Prepare(Schedule& schedule, const std::string& session);
  // The default limits of a task of `queue` (QueueRecord::limits); nullptr
  // for a queue that is not there.
  const ResourceLimits* QueueLimits(const std::string& queue) const;
  // Whether a new task must be held, and then holds it (indexes it, sets
  // its detail); else it takes its queue's slot. The caller saves it.
  bool HoldIfNeeded(TaskRecord& task);
  // Puts a held task where the pass finds it: its queue's ready set, or
  // under the tasks it waits for (and to be looked at).
  void Index(const TaskRecord& task);
  // A held task leaves every index (its queue, and the waits of the tasks
  // it runs after), to be indexed again as it changes (an edit).
  void Unindex(const TaskRecord& task);
  // Why a held task waits, for its detail.
  std::string HeldDetail(const TaskRecord& task) const;
  // Looks again at the held tasks whose dependencies ended, and starts
  // what the queues have room for.
  void Pass();
  // Whether Pass has anything to do.
  bool HasWork() const {
    return !reconsider_.empty() || !dirty_queues_.empty();
  }
  // A task leaves the schedule: it ended, or its creation was rolled back.
  void Remove(const TaskRecord& task);
  // Retries (doc/scheduling.md, "Retries"). Whether the attempt that ended
  // so (`ended` has the exit applied) is followed by another.
  static bool RetriesAfter(const TaskRecord& ended, const ExitInfo& exit);
  // A task whose failed attempt is recorded last in `task.attempts` is held,
  // queued, until its retry's time, and saved; its end is not told to
  // anyone, waits included.
  void HoldForRetry(TaskRecord task);

  // Queues: changes take effect at the next Pass. Errors say what to do:
  // a bad name, an add of a queue that exists, a set of one that does not.
  Result<QueueView> ChangeQueue(const QueueChange& change);
  std::vector<QueueView> Queues() const;

  // The batch was committed: nothing of it is taken back any more.
  void Committed() { batch_.clear(); }
  // The batch's commit failed and the store dropped it (DropBatch): its
  // queue changes go here too.
  void RollBack();

 private:
  // A held task's place in its queue: higher priority first, then the
  // older.
  struct HeldKey {
    int64_t neg_priority;
    int64_t created_ms;
    TaskId id;
    auto operator<=>(const HeldKey&) const = default;
  };
  struct QueueState {
    QueueRecord record;
    int64_t running = 0;      // Its tasks handed to the executor, live.
    std::set<HeldKey> ready;  // Held, waiting for nothing but a slot.
  };
  static HeldKey KeyOf(const TaskRecord& task) {
    return {-task.spec.schedule.priority, task.created_ms, task.id};
  }
  // Whether the queue may start one more task.
  static bool HasSlot(const QueueState& queue) {
    return !queue.record.paused && (!queue.record.max_running ||
                                    queue.running < *queue.record.max_running);
  }
  // A held task whose dependencies ended: fails, waits on, or is queued.
  void Reconsider(TaskRecord& task);
  // Hands a held task to the host to start (its start waits for the
  // commit).
  void Dispatch(TaskRecord& task);
  // It leaves its queue (its slot, or its place among the held), but not
  // the schedule: its dependents still wait for its end.
  void LeaveQueue(const TaskRecord& task);
  // At `delay` from now, a task held for a retry joins its queue.
  void ArmRetry(const TaskId& id, std::chrono::milliseconds delay);
  // A held task that waits for nothing but a slot now: into its queue.
  void EnqueueReady(TaskRecord& task);
  QueueView ViewOf(const QueueState& state) const;

  Host* host_;
  TaskStore* store_;
  Timers* timers_;
  const Clock* clock_;

  // The queues by stored name ("" = the default, always there); per task
  // that held tasks wait for, those tasks; the held tasks to look at again,
  // and the queues that may have room, at the next pass.
  std::map<std::string, QueueState> queues_;
  std::map<TaskId, std::vector<TaskId>> dependents_;
  std::set<TaskId> reconsider_;
  std::set<std::string> dirty_queues_;
  // Held tasks whose dependencies are done, now waiting for a slot.
  std::set<TaskId> ready_after_;
  // Tasks held for a retry, by the timer that releases them.
  std::map<TaskId, TimerId> retry_timers_;
  // This batch's queue changes, in order: the name and the queue before
  // (nullopt: it did not exist).
  std::vector<std::pair<std::string, std::optional<QueueRecord>>> batch_;
};

}  // namespace baton

#endif  // BATON_CORE_SCHEDULER_H_
