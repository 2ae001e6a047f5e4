// The task registry: ids, owners, statuses, reads, kills, waits, notices and
// leases (doc/tasks.md). Pure logic over three ports (TaskStore,
// Executor, Timers); it makes no system calls of its own.
//
// Single-threaded: every call, including the ExecutorListener callbacks and
// timer callbacks, happens on the daemon's loop thread. Writes go to the
// store's buffer, and requests to the executor (spawns, kills) wait in the
// registry; the daemon ends each loop iteration (a batch) with Commit(),
// which makes the writes durable before any of those requests goes, and
// only then sends the batch's replies: nothing leaves the daemon before the
// state it depends on is durable.
#ifndef BATON_CORE_TASK_REGISTRY_H_
#define BATON_CORE_TASK_REGISTRY_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/core/audit_trail.h"
#include "baton/core/metrics.h"
#include "baton/core/ports.h"
#include "baton/core/scheduler.h"
#include "baton/core/session_budgets.h"
#include "baton/core/task.h"
#include "baton/core/wait_book.h"

namespace baton {

// A byte range of a task's output log, for the client to copy itself.
struct OutputRange {
  TaskRecord task;
  std::string path;
  uint64_t from = 0;
  uint64_t to = 0;
  bool at_end = false;  // The task is terminal and the range reaches its end.
};

class TaskRegistry : public ExecutorListener, private Scheduler::Host {
 public:
  struct Options {
    std::chrono::milliseconds lease = std::chrono::minutes(5);
    std::chrono::milliseconds default_grace = std::chrono::seconds(5);
    // Terminal tasks `List` shows besides live ones, unless asked for all.
    size_t recent_terminal = 20;
    // batond's own uid and pid, for the audit records of its own actions
    // (core/ has no system calls).
    int64_t uid = -1;
    int64_t pid = 0;
  };

  // Borrows all four; they must outlive the registry.
  TaskRegistry(TaskStore* store, Executor* executor, Timers* timers,
               const Clock* clock, Options options);
  // Cancels its timers (retries, leases, waits' timeouts).
  ~TaskRegistry() override;
  TaskRegistry(const TaskRegistry&) = delete;
  TaskRegistry& operator=(const TaskRegistry&) = delete;

  // Loads live tasks, pending notices and leased sessions from the store and
  // hands the live tasks to the executor to re-adopt. Call once, first.
  Status Recover();

  // Ends a batch: makes the store's writes durable (its Flush), then hands
  // the executor the requests that waited for them, in order.
  //
  // When the store cannot commit (a full disk), the daemon answers the
  // batch's requests with that error, so what was done only for those
  // answers is taken back (doc/protocol.md, "When state cannot be saved"):
  // tasks started in the batch are gone (from memory and store, their
  // spawns never sent; waits naming them fail), and kills, consuming
  // reads, seen ends and delivered notices are undone. What happened to
  // tasks (spawns, exits, questions, expired leases) stays buffered, with
  // its executor requests, for the next Commit. Returns the store's error;
  // `rolled_back` (if given) gets the ids of the tasks that are gone.
  Status Commit(std::vector<TaskId>* rolled_back = nullptr);
  // Whether Commit has anything to do.
  bool HasUncommitted() const {
    return store_->HasPendingWrites() || !effects_.empty() || !undo_.empty() ||
           scheduler_.HasWork();
  }
  // The ends of `ids` were told to a client before the commit (the
  // executor still keeps their exit records): a failed Commit leaves them
  // seen.
  void KeepSeen(const std::vector<TaskId>& ids);

  // Validates `spec` (nothing is stored or spawned if it is bad), stores a
  // queued task and asks the executor to spawn it once the task is
  // committed. `done` runs before Start returns, with the queued task or the
  // validation error, unless the create hook (SetOnCreate) has work to do
  // off the loop first: then it runs from the loop once that is done. A
  // spawn that fails later ends the task as failed, with the reason in its
  // detail.
  using StartCallback = std::function<void(Result<TaskRecord>)>;
  void Start(TaskSpec spec, StartCallback done);

  // Every call below takes the caller's session ("" = none) and refuses
  // tasks owned by another session (kPermissionDenied) and unknown ids
  // (kNotFound) with a message that says what to do.

  // A non-consuming look. Seeing a terminal task counts as seeing its end.
  Result<TaskRecord> Get(std::string_view id, const std::string& session);

  // Removing ended tasks (task_registry_remove.cc, doc/tasks.md, "Removing
  // ended tasks"). The plan: the tasks `ids` names (a task that cannot go
  // refuses the whole plan, saying why), or, with `every_ended`, every
  // ended task `session` sees, those that cannot go listed in `kept`.
  struct RemovalPlan {
    std::vector<TaskRecord> remove;
    std::vector<std::pair<std::string, std::string>> kept;  // Id, why.
  };
  Result<RemovalPlan> PlanRemoval(const std::vector<std::string>& ids,
                                  bool every_ended, const std::string& session);
  // Deletes them from the store (a transaction of its own: call it with
  // nothing uncommitted) and forgets them. Their files are the caller's.
  Status Remove(const std::vector<TaskId>& ids);

  // Editing a held task (task_registry_edit.cc, doc/tasks.md, "Editing a
  // queued task"). Editable: the task, if `session` may edit it now (held,
  // never run). Edit: gives it `spec`, checked as a start's spec is (and
  // an `after` that would wait for itself is refused), and places it again
  // in the schedule; the change goes with the batch.
  Result<TaskRecord> Editable(std::string_view id, const std::string& session);
  Result<TaskRecord> Edit(const TaskId& id, TaskSpec spec,
                          const std::string& session);

  // The tree of agents a session directs (doc/agents.md, "Questions of a
  // tree of agents"): the ids from the session's own task down to `task`,
  // by TaskSpec::parent (just `task` when it is the session's own); empty
  // when `task` is not of the session's tree. A person's session sees
  // every task, with its whole chain.
  std::vector<std::string> ChainFor(const TaskRecord& task,
                                    const std::string& session);
  // As Get, and a task of the session's tree too (a worker's sub-worker),
  // for answering its questions.
  Result<TaskRecord> GetInTree(std::string_view id, const std::string& session);

  // Visible tasks in creation order: all live ones plus the most recent
  // terminal ones (all terminal ones when `all`). `hidden` gets how many
  // terminal tasks were left out.
  Result<std::vector<TaskRecord>> List(const std::string& session, bool all,
                                       size_t* hidden);

  // A person's view (the board): every visible live task, in creation
  // order, and a page of the ended ones (EndedQuery; its owner is
  // `session`).
  std::vector<TaskRecord> ListLive(const std::string& session) const;
  Result<EndedPage> PageEnded(const std::string& session, EndedQuery query);

  Result<OutputRange> Read(std::string_view id, const std::string& session,
                           ReadMode mode, uint64_t offset = 0);

  // Asks the executor to stop the task (SIGTERM, then SIGKILL after
  // `grace`, default Options::default_grace), once the kill is committed. With
  // `stop_delay`, the task is `stopping` at once but the signals wait that
  // long: an agent that was asked to end its turn gets the time to end by
  // itself. An exit in that time still counts as killed. A kill at a limit
  // (KillOrigin::kLimit, batond's own) leaves the owner's notice of the end
  // due, where a client's kill counts as its owner seeing the end.
  Result<KillOutcome> Kill(
      std::string_view id, const std::string& session, std::string reason,
      std::optional<std::chrono::milliseconds> grace,
      std::chrono::milliseconds stop_delay = std::chrono::milliseconds(0),
      KillOrigin origin = KillOrigin::kRequest);

  // Calls `done` once, as soon as any of `ids` ends or asks a question
  // that `session` was not told of yet (all of them ended or asking, when
  // `all`), or when `timeout` passes. An end or question already told to
  // `session` (a wait, a read, a status, a notice) is not news: a wait-any
  // over it blocks until another task ends or asks, and returns at once,
  // with all of them, only when every named task has ended or asks and
  // was told. If that already holds, `done` runs before Wait returns.
  // Fails (without calling `done`) on a bad id.
  // With `turns`, an agent task that ends a turn is news too (TurnEnded).
  // With `news_since_ms` (a wait sent again after its connection to a
  // batond was lost), an end at or after that wall time, or an open
  // question, is news even if told: the lost answer may have told it.
  using WaitCallback = WaitBook::Done;
  Result<WaitId> Wait(const std::vector<std::string>& ids,
                      const std::string& session, bool all,
                      std::optional<std::chrono::milliseconds> timeout,
                      WaitCallback done, bool turns = false,
                      std::optional<int64_t> news_since_ms = std::nullopt);
  // Drops a wait whose client went away; `done` is not called.
  void CancelWait(WaitId id);

  // Tasks of `session` that ended and whose end it has not seen, and agent
  // tasks that ask a question it was not told of, each returned once;
  // marks them delivered (told).
  std::vector<TaskRecord> TakeNotices(const std::string& session);

  // A connection of `session` attaches / goes away. When the last one goes,
  // the lease starts; when it runs out, the session's live tasks are killed.
  void Attach(const std::string& session);
  void Detach(const std::string& session);

  size_t live_count() const { return live_.size(); }
  size_t open_waits() const { return waits_.open(); }
  // False once the task is terminal (its end saved to the store).
  bool IsLive(const TaskId& id) const { return live_.contains(id); }

  // Agent tasks: a question is open (kWaiting) or answered (kRunning).
  // Waiting wakes waits, as an end does. No-op unless the task is live.
  void SetWaiting(const TaskId& id, bool waiting);
  // Agent tasks: a turn ended with `text` (its final text) and the task
  // runs on. Wakes the waits that asked for turns and name it.
  void TurnEnded(const TaskId& id, const std::string& text);
  // Agent tasks: the CLI's own session id, for resume.
  void SetAgentSession(const TaskId& id, const std::string& session_id);
  // Agent tasks: what the worker spent so far (its totals), stored.
  void SetUsage(const TaskId& id, const AgentUsage& usage);
  // Ids of the other tasks, of any owner, that worked in `task`'s folder
  // while it ran: live ones, and ones that ended after it started (among
  // the last kRecentEnded to end).
  std::vector<std::string> OverlappingTasks(const TaskRecord& task) const;
  static constexpr size_t kRecentEnded = 512;

  // Called when a held task is handed to the executor (its spawn waits for
  // the commit), with the task and its environment: what a start does
  // beside the spawn (the check runner's snapshot) happens then, not at
  // submit.
  void SetOnDispatch(std::function<void(const TaskRecord&)> on_dispatch) {
    on_dispatch_ = std::move(on_dispatch);
  }
  // How far a live task's log may be read now (doc/redaction.md: the
  // redactor masks it first); nullopt: to its end. Read never answers, nor
  // moves a cursor, past it.
  void SetReadBound(
      std::function<std::optional<uint64_t>(const TaskRecord&)> bound) {
    read_bound_ = std::move(bound);
  }
  // Called by Start once a new task has its id, before it is stored: what
  // batond makes on disk for a task, which the registry (no system calls)
  // cannot (an agent's own worktree, doc/agents.md). It may change the
  // spec (the folder), and calls `made` once, at once or later from the
  // loop (git runs off it), with the task to store or an error that
  // refuses it; then nothing is stored.
  using CreateHook = std::function<void(TaskRecord task, StartCallback made)>;
  void SetOnCreate(CreateHook on_create) { on_create_ = std::move(on_create); }

  // Queues (doc/scheduling.md): changes take effect at the next Commit,
  // which starts what may start. Errors say what to do: a bad name, an
  // add of a queue that exists, a set of one that does not.
  Result<QueueView> ChangeQueue(const QueueChange& change) {
    return scheduler_.ChangeQueue(change);
  }
  std::vector<QueueView> Queues() const { return scheduler_.Queues(); }

  // Session budgets (core/session_budgets.h) and the audit trail
  // (core/audit_trail.h): collaborators with their own state, committed
  // and rolled back with the registry's batch.
  SessionBudgets& budgets() { return budgets_; }
  const SessionBudgets& budgets() const { return budgets_; }
  AuditTrail& audit() { return audit_; }
  // What batond counts for /metrics (core/metrics.h, doc/metrics.md).
  DaemonMetrics& metrics() { return metrics_; }
  const DaemonMetrics& metrics() const { return metrics_; }
  // Calls `visit` with each live task, in place (owner not checked).
  template <class F>
  void ForEachLive(F&& visit) const {
    for (const auto& [id, task] : live_)
      visit(task);
  }

  // Every live task, owner not checked.
  std::vector<TaskRecord> LiveTasks() const;
  // The live task `id`, owner not checked; nullptr if it is not live.
  const TaskRecord* FindLive(const TaskId& id) const;

  // For a daemon stop that takes its tasks down: kills every live task,
  // whoever owns it, and returns their ids.
  std::vector<TaskId> KillAll(const std::string& reason);
  // Calls `done` once every task of `ids` has ended (owner not checked).
  void WaitForAll(const std::vector<TaskId>& ids, std::function<void()> done);

  // ExecutorListener.
  void OnTaskSpawned(const TaskId& id, int64_t pid,
                     int64_t started_ms) override;
  void OnTaskSpawnFailed(const TaskId& id, const Error& error) override;
  void OnTaskPlaced(const TaskId& id, const Placement& job) override;
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override;
  // Whether the live task `id`, ended by `exit`, will run again (a retry):
  // what an agent's runtime asks before OnTaskExited, to keep the ended
  // attempt's stream apart.
  bool WillRetry(const TaskId& id, const ExitInfo& exit) const;

 private:
  struct SessionState {
    int attached = 0;
    TimerId lease_timer = 0;  // 0 when no lease runs.
  };

  // An executor request, held until the commit of its batch.
  struct Effect {
    enum class Kind { kStart, kKill };
    Kind kind;
    TaskRecord task;  // kStart: the whole task, base_env too; kKill: its id.
    std::chrono::milliseconds grace{0};       // kKill.
    std::chrono::milliseconds stop_delay{0};  // kKill.
    bool undoable = false;  // Made for a reply: dropped by a failed commit.
  };
  // A change made only for a reply; a failed commit undoes it.
  struct Undo {
    enum class Kind {
      kCreated,
      kEndSeen,
      kNoticeDelivered,
      kCursor,
      kKill,
      kQuestionTold,
      kEdited
    };
    Undo(Kind kind, TaskId id, std::string reader = {})
        : kind(kind), id(id), reader(std::move(reader)) {}
    Kind kind;
    TaskId id;
    std::string reader;  // kCursor.
    // kKill: the fields the kill replaced.
    TaskStatus status = TaskStatus::kQueued;
    std::string kill_reason;
    bool killed_at_limit = false;
    bool end_seen = false;
    // kEdited: the held task as it was before the edit.
    std::optional<TaskRecord> task_before;
  };

  // Start's second half, once the create hook gave the task back: stores
  // it (held, or to be spawned at the commit) and answers.
  void Admit(TaskRecord task, StartCallback done);
  // The record as `exit` ends it, retries aside: its status, detail, times.
  void ApplyEnd(TaskRecord& task, const ExitInfo& exit) const;

  // Scheduler::Host.
  std::map<TaskId, TaskRecord>& Live() override { return live_; }
  Result<TaskRecord> LookupTask(const TaskId& id) override {
    return Lookup(id);
  }
  Result<TaskRecord> ResolveTask(std::string_view id,
                                 const std::string& session) override {
    return Resolve(id, session);
  }
  void SaveTask(const TaskRecord& task) override { Save(task); }
  void StartTask(TaskRecord& task) override;
  void FailTask(TaskRecord ended) override { Finish(std::move(ended)); }

  void RunEffect(Effect effect);
  void RollBack(const Error& error, std::vector<TaskId>* rolled_back);

  // The task, if `session` may see it.
  Result<TaskRecord> Resolve(std::string_view id, const std::string& session);
  // kPermissionDenied unless `session` may see `task`.
  static Status CheckOwner(const TaskRecord& task, std::string_view id_text,
                           const std::string& session);
  Result<TaskRecord> Lookup(const TaskId& id);
  Status Validate(const TaskSpec& spec) const;
  // Stores `task` (and keeps it in live_ while it is not terminal).
  // `undoable`: a change made only for a reply, which the caller records in
  // undo_; any other change stays if the commit fails.
  void Save(const TaskRecord& task, bool undoable = false);
  // Marks the end of a terminal task seen when `session` owns it.
  void MarkEndSeen(TaskRecord& task, const std::string& session);
  // Marks a waiting task's question told when `session` owns it.
  void MarkQuestionTold(TaskRecord& task, const std::string& session);
  // Both: what a look at the task (read, wait, status) tells its owner.
  void MarkSeen(TaskRecord& task, const std::string& session) {
    MarkEndSeen(task, session);
    MarkQuestionTold(task, session);
  }
  // Whether `session` was told that `task` ended, or of its open question.
  static bool ToldTo(const TaskRecord& task, const std::string& session);
  void Finish(TaskRecord task);
  void RequestKill(
      TaskRecord& task, std::string reason,
      std::optional<std::chrono::milliseconds> grace,
      std::chrono::milliseconds stop_delay = std::chrono::milliseconds(0),
      bool undoable = false, KillOrigin origin = KillOrigin::kRequest);
  // Fills a completing wait's answer with the tasks it names that ended
  // or ask (WaitBook::Answer), marking them told to its session.
  void AnswerWait(const WaitBook::Waiter& waiter, TaskRecord* ended,
                  WaitResult& result);
  void StartLease(const std::string& session);
  // Stores that `session` has a lease (its error is logged: the lease
  // runs in memory all the same).
  void MarkLeased(const std::string& session);
  // After a failed commit: `again`, per owner, the ends and questions to
  // notice before the later ones.
  void NoticeFirst(std::map<std::string, std::vector<TaskId>> again);
  void ExpireLease(const std::string& session);

  TaskStore* store_;
  Executor* executor_;
  Timers* timers_;
  const Clock* clock_;
  Options options_;

  std::map<TaskId, TaskRecord> live_;  // Every non-terminal task.
  DaemonMetrics metrics_;
  // This batch's (see Commit): executor requests, in order; undoable
  // changes, in order; tasks with a change that stays.
  std::vector<Effect> effects_;
  std::vector<Undo> undo_;
  std::set<TaskId> saved_in_batch_;
  // Kills asked while a task's spawn was in flight: their grace and stop
  // delay, for the kill sent once the spawn is reported.
  std::map<TaskId,
           std::pair<std::chrono::milliseconds, std::chrono::milliseconds>>
      spawn_kills_;
  WaitBook waits_;
  // Per owner, tasks that ended unseen and not yet noticed, in end order.
  std::map<std::string, std::vector<TaskId>> unnoticed_;
  std::map<std::string, SessionState> sessions_;
  std::set<std::string> leased_sessions_;  // Known to the store.
  struct EndedSpan {
    std::string id;
    std::string cwd;
    int64_t started_ms;
    int64_t ended_ms;
  };
  std::deque<EndedSpan> recent_ended_;  // At most kRecentEnded, oldest first.
  // Per session, how many ended tasks it can see; filled on first `List`.
  std::map<std::string, size_t> terminal_counts_;

  std::function<void(const TaskRecord&)> on_dispatch_;
  CreateHook on_create_;
  std::function<std::optional<uint64_t>(const TaskRecord&)> read_bound_;

  SessionBudgets budgets_;
  AuditTrail audit_;
  // Last: its destructor cancels timers whose callbacks reach the rest.
  Scheduler scheduler_;
};

// "shell-3 completed (exit code: 0)", "agent-1 waiting (asks a
// question)": the first line of a notice.
std::string NoticeText(const TaskRecord& task);

}  // namespace baton

#endif  // BATON_CORE_TASK_REGISTRY_H_
