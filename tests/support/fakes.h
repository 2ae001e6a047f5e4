// Hand-written fakes for the registry's ports (as ninja's FakeCommandRunner):
// an in-memory TaskStore, an Executor that records requests and lets the test
// decide when processes spawn and exit, and a clock plus timers driven by
// hand.
#ifndef BATON_TESTS_SUPPORT_FAKES_H_
#define BATON_TESTS_SUPPORT_FAKES_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "baton/core/ports.h"

namespace baton::testing {

class InMemoryTaskStore : public TaskStore {
 public:
  Result<int64_t> NextTaskNumber(TaskKind kind) override;
  Status PutTask(const TaskRecord& task) override;
  Result<std::optional<TaskRecord>> GetTask(const TaskId& id) override;
  Result<std::vector<TaskRecord>> LoadLiveTasks() override;
  Result<std::vector<TaskRecord>> LoadUnnoticedTasks() override;
  Result<std::vector<TaskRecord>> ListTasks(const ListQuery& query) override;
  Result<size_t> CountTasks(const ListQuery& query) override;
  Result<EndedPage> PageEnded(const EndedQuery& query) override;
  Result<uint64_t> GetCursor(const TaskId& id,
                             const std::string& reader) override;
  Status SetCursor(const TaskId& id, const std::string& reader,
                   uint64_t offset) override;
  Status MarkSessionLeased(const std::string& session) override;
  Result<std::vector<std::string>> LoadLeasedSessions() override;
  Status PutQueue(const QueueRecord& queue) override;
  Result<std::vector<QueueRecord>> LoadQueues() override;
  Status PutSessionBudget(const std::string& session,
                          const AgentBudget& budget) override;
  Result<std::map<std::string, AgentBudget>> LoadSessionBudgets() override;
  // Kept at once, outside the batch: no test of the registry lands.
  Status PutLand(const LandEntry& entry) override {
    lands[entry.id] = entry;
    return {};
  }
  Result<std::vector<LandEntry>> LoadLands(size_t) override {
    std::vector<LandEntry> all;
    for (const auto& [id, entry] : lands)
      all.push_back(entry);
    return all;
  }
  Status AppendAudit(const AuditRecord& record, uint64_t* key) override;
  Result<std::vector<AuditRecord>> ListAudit(const AuditQuery& query) override;
  // Fails with `fail_flush` while it is set; the writes stay buffered.
  Status Flush() override;
  bool HasPendingWrites() const override {
    return !dirty_tasks_.empty() || !dirty_cursors_.empty() ||
           dirty_sessions_ || dirty_queues_ || budgets != flushed_budgets_ ||
           !pending_audit_.empty();
  }
  Status DeleteTasks(const std::vector<TaskId>& ids) override;
  void DropBatch() override;

  // A crash: what was not flushed is gone.
  void LoseUnflushed();

  // What reads see: the flushed state with the buffered writes over it.
  std::map<TaskId, TaskRecord> tasks;
  std::vector<TaskId> order;  // Creation order.
  // What the last successful Flush made durable.
  std::map<TaskId, TaskRecord> flushed;
  std::map<std::string, QueueRecord> queues;
  std::map<std::string, AgentBudget> budgets;
  std::map<int64_t, LandEntry> lands;
  std::vector<AuditRecord> audit;  // Flushed, in order.
  std::optional<Error> fail_flush;
  int failed_flushes = 0;

 private:
  using CursorKey = std::pair<TaskId, std::string>;
  // Called by every write: after a Flush(), the first write starts a new
  // batch, and the journal of the last one is dropped.
  void StartWrite();
  // DropBatch's parts: each takes back what the batch did to one key.
  void RevertTask(const TaskId& id);
  void RevertCursor(const TaskId& id, const std::string& reader);
  void RevertQueue(const std::string& name);
  void RevertSessionBudget(const std::string& session);

  std::map<TaskKind, int64_t> next_;
  std::map<CursorKey, uint64_t> cursors_;
  std::map<CursorKey, uint64_t> flushed_cursors_;
  std::set<std::string> leased_;
  // Keys written since the last successful Flush.
  std::set<TaskId> dirty_tasks_;
  std::set<CursorKey> dirty_cursors_;
  bool dirty_sessions_ = false;
  bool dirty_queues_ = false;
  std::map<std::string, QueueRecord> flushed_queues_;
  std::map<std::string, AgentBudget> flushed_budgets_;

  std::map<uint64_t, AuditRecord> pending_audit_;  // By key, in order.
  uint64_t next_audit_key_ = 1;
  // Per key written in the batch: what reads saw before (nullopt: none),
  // and whether it was written since the last successful Flush already.
  template <class T>
  struct Before {
    std::optional<T> value;
    bool dirty = false;
  };
  std::map<TaskId, Before<TaskRecord>> task_journal_;
  std::map<CursorKey, Before<uint64_t>> cursor_journal_;
  std::map<std::string, std::optional<QueueRecord>> queue_journal_;
  std::map<std::string, std::optional<AgentBudget>> budget_journal_;
  std::vector<uint64_t> audit_journal_;    // Records the batch appended.
  std::set<std::string> session_journal_;  // Sessions the batch marked.
  bool batch_flushed_ = false;
};

class FakeExecutor : public Executor {
 public:
  void SetListener(ExecutorListener* listener) override {
    listener_ = listener;
  }
  std::string TaskDir(const TaskId& id) const override {
    return "/fake/" + id.ToString();
  }
  void CloseStdin(const TaskId& id) override { stdin_closed.push_back(id); }
  std::string OutputPath(const TaskId& id) const override {
    return "/fake/" + id.ToString() + ".log";
  }
  Result<uint64_t> OutputSize(const TaskRecord& task) const override {
    auto it = output_sizes.find(task.id);
    return it == output_sizes.end() ? 0 : it->second;
  }
  void Start(const TaskRecord& task) override { started.push_back(task); }
  void Kill(const TaskId& id, std::chrono::milliseconds grace) override {
    kills.push_back({id, grace});
  }
  void Adopt(const std::vector<TaskRecord>& live) override { adopted = live; }

  // Test controls.
  void Spawn(const TaskId& id, int64_t pid = 100) {
    listener_->OnTaskSpawned(id, pid, 1000);
  }
  void Exit(const TaskId& id, int code, ExitCause cause = ExitCause::kNatural) {
    ExitInfo exit;
    exit.cause = cause;
    exit.exit_code = code;
    exit.ended_ms = 2000;
    listener_->OnTaskExited(id, exit);
  }

  std::vector<TaskRecord> started;
  std::vector<std::pair<TaskId, std::chrono::milliseconds>> kills;
  std::vector<TaskRecord> adopted;
  std::vector<TaskId> stdin_closed;
  std::map<TaskId, uint64_t> output_sizes;

 private:
  ExecutorListener* listener_ = nullptr;
};

// The fake executor, with each task's folder under `root` (a temporary
// folder): for what writes there (an agent's files, a check's "before").
class FolderExecutor : public FakeExecutor {
 public:
  explicit FolderExecutor(std::string root) : root_(std::move(root)) {}
  std::string TaskDir(const TaskId& id) const override {
    return root_ + "/" + id.ToString();
  }

 private:
  std::string root_;
};

// A clock and timers that move only when the test says so.
class FakeTimeline : public Clock, public Timers {
 public:
  MonoTime Now() const override { return now_; }
  int64_t WallNowMillis() const override {
    return 1'700'000'000'000 +
           std::chrono::duration_cast<std::chrono::milliseconds>(
               now_.time_since_epoch())
               .count();
  }
  TimerId Schedule(MonoTime when, std::function<void()> callback) override;
  void Cancel(TimerId id) override { timers_.erase(id); }
  // Moves time forward, firing due timers in order.
  void Advance(std::chrono::milliseconds by);
  size_t pending_timers() const { return timers_.size(); }

 private:
  MonoTime now_{};
  TimerId next_ = 1;
  std::map<TimerId, std::pair<MonoTime, std::function<void()>>> timers_;
};

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_FAKES_H_
