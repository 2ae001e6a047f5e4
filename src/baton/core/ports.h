// The registry's boundaries with the outside world: where tasks are stored
// (TaskStore) and how processes are run (Executor); how time passes (Timers)
// is in util/timers.h, since loop/ implements it and uses only util.
// Implementations live in store/, executor/ and loop/; tests use the fakes in
// tests/support/. Declared here so that core depends on nothing to its right.
#ifndef BATON_CORE_PORTS_H_
#define BATON_CORE_PORTS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baton/core/audit.h"
#include "baton/core/land.h"
#include "baton/core/task.h"
#include "baton/core/task_filter.h"
#include "baton/util/clock.h"
#include "baton/util/result.h"
#include "baton/util/timers.h"

namespace baton {

struct ListQuery {
  // Tasks owned by `owner`, plus unowned tasks. An empty owner sees only
  // unowned tasks.
  std::string owner;
  bool include_live = true;
  bool include_terminal = true;
  // At most this many, most recent first; 0 = no limit.
  size_t limit = 0;
};

// A page of the ended tasks a person's view shows (the board): those of
// `owner` and the unowned ones that `filter` lets through, the most recent
// end first.
struct EndedQuery {
  std::string owner;  // The caller's session (core/sessions.h).
  TaskFilter filter;
  size_t offset = 0;
  size_t limit = 50;
  // The tasks of every status that ended at or after this time are counted,
  // whatever the filter (the header's "ended today").
  int64_t counted_since_ms = 0;
};

struct EndedPage {
  std::vector<TaskRecord> tasks;
  size_t total = 0;  // Ended tasks that match, the page's among them.
  // Visible tasks that ended since counted_since_ms, by status name.
  std::map<std::string, size_t> ended_since;
  // The labels of every visible task, live or ended, sorted; "" left out.
  std::vector<std::string> labels;
  // The sessions that own a visible task, live or ended, sorted; "" (the
  // unowned) left out.
  std::vector<std::string> owners;
};

// A named queue (doc/scheduling.md). The default queue is stored as "".
struct QueueRecord {
  std::string name;
  std::optional<int64_t> max_running;  // nullopt = no limit.
  bool paused = false;
  // Its tasks' hard limits where a task gives none (doc/limits.md).
  ResourceLimits limits;
};

// Durable task state. Writes are buffered and become durable together at
// Flush() (one transaction per event-loop iteration); reads see buffered
// writes. Not thread-safe: owned by the daemon's loop thread.
class TaskStore {
 public:
  virtual ~TaskStore() = default;

  // Reserves the next number of `kind`. Numbers are never handed out twice,
  // also across restarts, once the reservation has been flushed.
  virtual Result<int64_t> NextTaskNumber(TaskKind kind) = 0;
  // Inserts or replaces the task (all fields but spec.base_env).
  virtual Status PutTask(const TaskRecord& task) = 0;
  // nullopt when there is no such task.
  virtual Result<std::optional<TaskRecord>> GetTask(const TaskId& id) = 0;
  // Tasks whose status is not terminal, oldest first.
  virtual Result<std::vector<TaskRecord>> LoadLiveTasks() = 0;
  // Terminal, owned tasks whose end the owner has neither seen nor been told.
  virtual Result<std::vector<TaskRecord>> LoadUnnoticedTasks() = 0;
  // Visible tasks, most recent first (creation order).
  virtual Result<std::vector<TaskRecord>> ListTasks(const ListQuery& query) = 0;
  // How many tasks `query` would list without its limit.
  virtual Result<size_t> CountTasks(const ListQuery& query) = 0;
  // A page of ended tasks, with what a view needs beside it (EndedPage).
  virtual Result<EndedPage> PageEnded(const EndedQuery& query) = 0;

  // The consuming-read cursor of `reader` on a task; 0 when never read.
  virtual Result<uint64_t> GetCursor(const TaskId& id,
                                     const std::string& reader) = 0;
  virtual Status SetCursor(const TaskId& id, const std::string& reader,
                           uint64_t offset) = 0;

  // Sessions that attach (MCP) get a lease; remembered so that a restarted
  // daemon restarts their leases.
  virtual Status MarkSessionLeased(const std::string& session) = 0;
  virtual Result<std::vector<std::string>> LoadLeasedSessions() = 0;

  // Queues, by name; a put replaces the queue of that name.
  virtual Status PutQueue(const QueueRecord& queue) = 0;
  virtual Result<std::vector<QueueRecord>> LoadQueues() = 0;

  // Sessions' budgets over their agent tasks (doc/agents.md, "Session
  // budgets"); a put replaces the session's, an empty one removes it.
  virtual Status PutSessionBudget(const std::string& session,
                                  const AgentBudget& budget) = 0;
  virtual Result<std::map<std::string, AgentBudget>> LoadSessionBudgets() = 0;

  // The merge queue's entries (core/land.h, doc/land.md); a put replaces
  // the entry of that id. LoadLands: the unfinished ones (queued,
  // testing) and the last `finished` finished ones, by id.
  virtual Status PutLand(const LandEntry& entry) = 0;
  virtual Result<std::vector<LandEntry>> LoadLands(size_t finished) = 0;

  // The audit trail (core/audit.h). An appended record is written with
  // the batch; `key` names it until then. Reads see the pending records
  // too.
  virtual Status AppendAudit(const AuditRecord& record, uint64_t* key) = 0;
  virtual Result<std::vector<AuditRecord>> ListAudit(
      const AuditQuery& query) = 0;

  // Makes every write since the last successful Flush durable, atomically.
  // On failure (e.g. disk full) the writes stay buffered and the next Flush
  // retries them, unless DropBatch takes the last batch's back.
  virtual Status Flush() = 0;
  virtual bool HasPendingWrites() const = 0;
  // Deletes stored, ended tasks with their cursors, in a transaction of its
  // own, now: all or none. Not for a task with a buffered write (its next
  // Flush would bring it back): kInternal, nothing deleted.
  virtual Status DeleteTasks(const std::vector<TaskId>& ids) = 0;

  // After a failed Flush(): takes back the last batch (the writes between
  // the Flush() before that one and it), all of it, as one: each key it
  // wrote goes back to what was buffered before it (none, or a write kept
  // from an earlier failed Flush), and the sessions and audit records it
  // added go. A task first stored in the batch is gone again, with its
  // counter's write; its number stays used (this store does not hand it
  // out again, but a store opened after a crash may: nobody can know that
  // number). The caller then writes again what it keeps of the batch.
  // REQUIRES: no write since the failed Flush (the next write starts a new
  // batch).
  virtual void DropBatch() = 0;
};

// Receives what happens to processes. Calls come from the loop thread.
class ExecutorListener {
 public:
  virtual ~ExecutorListener() = default;
  virtual void OnTaskSpawned(const TaskId& id, int64_t pid,
                             int64_t started_ms) = 0;
  virtual void OnTaskSpawnFailed(const TaskId& id, const Error& error) = 0;
  virtual void OnTaskExited(const TaskId& id, const ExitInfo& exit) = 0;
  // A task on a remote executor (TaskSpec::remote): where its job stands
  // (submitted, pending and why, running on a node, the executor
  // unreachable). The start itself still comes as OnTaskSpawned, once the
  // job runs.
  virtual void OnTaskPlaced(const TaskId& id, const Placement& job) = 0;
};

// A stage of a chain of listeners (batond's: executor → agent runtime →
// output cap → redactor → check runner → registry): each event it does
// not override goes on to `next` as it came.
class ForwardingListener : public ExecutorListener {
 public:
  explicit ForwardingListener(ExecutorListener* next) : next_(next) {}

  void OnTaskSpawned(const TaskId& id, int64_t pid,
                     int64_t started_ms) override {
    next_->OnTaskSpawned(id, pid, started_ms);
  }
  void OnTaskSpawnFailed(const TaskId& id, const Error& error) override {
    next_->OnTaskSpawnFailed(id, error);
  }
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override {
    next_->OnTaskExited(id, exit);
  }
  void OnTaskPlaced(const TaskId& id, const Placement& job) override {
    next_->OnTaskPlaced(id, job);
  }

 protected:
  ExecutorListener* next_;
};

// Runs task processes. Asynchronous: results arrive through the listener.
//
// Ordering contract: Start() and Kill() only queue what they ask for;
// nothing reaches a process, a supervisor or a cluster before Flush(),
// which batond calls once per loop iteration, after the commit of the
// store transaction that recorded the same changes. So nothing runs that
// the store does not know, and a crash between the two loses a start that
// was never acknowledged, not a task.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual void SetListener(ExecutorListener* listener) = 0;

  // Whether this executor runs a task of `spec` (the router asks each in
  // its order; the last takes what no other does).
  virtual bool Takes(const TaskSpec&) const { return true; }
  // Ok, or why this executor cannot run a task of `spec` that it Takes
  // (an error that names the fix). The registry asks before it stores a
  // task.
  virtual Status Accepts(const TaskSpec&) const { return {}; }
  // Asks, before anything is stored, whether the executor's machines would
  // run a task of `spec` now (a cluster's trial submission): `done` gets ok
  // or what they refused. It may be called before Preflight returns (this
  // default: at once) or later from the loop.
  virtual void Preflight(const TaskSpec&, std::function<void(Status)> done) {
    done({});
  }
  // Whether `id` is a live task this executor started or adopted.
  virtual bool Owns(const TaskId&) const { return false; }
  // Sends what Start() and Kill() queued. Never blocks.
  virtual void Flush() {}

  // The folder of a task's files.
  virtual std::string TaskDir(const TaskId& id) const = 0;
  // Where a task's output log lives (stdout and stderr, merged; for an
  // agent task, the transcript batond writes).
  virtual std::string OutputPath(const TaskId& id) const = 0;
  // Bytes in the output log so far; for a running shell task, at most its
  // spec.max_output (what is past it is being dropped).
  virtual Result<uint64_t> OutputSize(const TaskRecord& task) const = 0;

  // Spawns the task's process in its own session and process group.
  // Answered by OnTaskSpawned or OnTaskSpawnFailed.
  virtual void Start(const TaskRecord& task) = 0;
  // SIGTERM to the task's process group, SIGKILL after `grace` if anything
  // of the group is left. The exit comes through OnTaskExited with cause
  // kKilled.
  virtual void Kill(const TaskId& id, std::chrono::milliseconds grace) = 0;
  // Lets a task with a pipe stdin read EOF once batond closed its end.
  virtual void CloseStdin(const TaskId& id) = 0;
  // After a daemon restart: `live` are the tasks the store says are not
  // terminal. Each is re-adopted (its exit comes later) or reported through
  // OnTaskExited (it ended while no daemon ran, or it was lost: kLost).
  virtual void Adopt(const std::vector<TaskRecord>& live) = 0;
};

}  // namespace baton

#endif  // BATON_CORE_PORTS_H_
