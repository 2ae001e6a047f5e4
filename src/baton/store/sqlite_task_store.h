// TaskStore on an embedded SQLite database (WAL): the daemon's durable
// registry. Buffers writes in memory and makes them durable in one
// transaction per Flush(). Schema and pragmas: doc/schema.md.
#ifndef BATON_STORE_SQLITE_TASK_STORE_H_
#define BATON_STORE_SQLITE_TASK_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/ports.h"
#include "baton/store/sqlite_handle.h"

namespace baton {

// Owns its connection; not thread-safe (used from the daemon's loop thread).
// Reads overlay the pending (not yet flushed) writes on the database, so a
// caller never sees its own writes disappear between two Flush() calls.
class SqliteTaskStore : public TaskStore {
 public:
  // Opens the database at `path`, creating it (and the schema) if absent and
  // migrating an older schema. Never overwrites what it cannot use: a
  // database from a newer baton or another application -> kIncompatible, a
  // file that is not a database or is damaged -> kCorrupt, a file baton may
  // not write -> kPermissionDenied (or kIo).
  static Result<std::unique_ptr<SqliteTaskStore>> Open(const std::string& path);

  Result<int64_t> NextTaskNumber(TaskKind kind) override;
  // Fails with kInvalidArgument when id and spec disagree on the kind.
  // spec.base_env is dropped at once, so reads never return it either.
  Status PutTask(const TaskRecord& task) override;
  Result<std::optional<TaskRecord>> GetTask(const TaskId& id) override;
  Result<std::vector<TaskRecord>> LoadLiveTasks() override;
  Result<std::vector<TaskRecord>> LoadUnnoticedTasks() override;
  Result<std::vector<TaskRecord>> ListTasks(const ListQuery& query) override;
  Result<size_t> CountTasks(const ListQuery& query) override;
  Result<EndedPage> PageEnded(const EndedQuery& query) override;
  Result<uint64_t> GetCursor(const TaskId& id,
                             const std::string& reader) override;
  // Fails with kNotFound when the task does not exist: the cursor row
  // references the task row.
  Status SetCursor(const TaskId& id, const std::string& reader,
                   uint64_t offset) override;
  Status MarkSessionLeased(const std::string& session) override;
  Result<std::vector<std::string>> LoadLeasedSessions() override;
  Status PutQueue(const QueueRecord& queue) override;
  Result<std::vector<QueueRecord>> LoadQueues() override;
  Status PutSessionBudget(const std::string& session,
                          const AgentBudget& budget) override;
  Result<std::map<std::string, AgentBudget>> LoadSessionBudgets() override;
  Status PutLand(const LandEntry& entry) override;
  Result<std::vector<LandEntry>> LoadLands(size_t finished) override;
  // sqlite_task_store_audit.cc. A record gets its seq when appended.
  Status AppendAudit(const AuditRecord& record, uint64_t* key) override;
  Result<std::vector<AuditRecord>> ListAudit(const AuditQuery& query) override;
  // Writes everything pending in one transaction. On failure (disk full, I/O
  // error, database locked past busy_timeout) it rolls back, keeps the
  // writes pending and says so in the error.
  Status Flush() override;
  bool HasPendingWrites() const override;
  Status DeleteTasks(const std::vector<TaskId>& ids) override;
  void DropBatch() override;

  // The work of every read so far, independent of the machine's speed and
  // load: a read that scans the table instead of an index shows here on
  // any machine.
  QueryWork read_work() const { return read_work_; }

 private:
  // A task row: its creation-order key and the record.
  struct Row {
    int64_t seq = 0;
    TaskRecord record;
  };
  using RowFilter = bool (*)(const TaskRecord&, const ListQuery&);
  using Binder = std::function<void(Statement&)>;
  using RowReader = std::function<Status(const Statement&)>;

  explicit SqliteTaskStore(Db db) : db_(std::move(db)) {}

  Status Load();
  // Runs `sql` after `bind`, handing each row to `read`. Errors are worded
  // by Describe(error, doing).
  Status ForEachRow(const std::string& sql, const Binder& bind,
                    const RowReader& read, std::string_view doing);
  // The one number a `SELECT count(*) ...` gives.
  Result<size_t> CountRows(const std::string& sql, const Binder& bind,
                           std::string_view doing);
  // The task rows of `sql`, which selects kTaskColumns.
  Result<std::vector<Row>> QueryRows(const std::string& sql,
                                     const Binder& bind);
  // Database rows (already without pending tasks) merged with the pending
  // tasks that pass `keep`, sorted by seq, cut to `limit` (0 = all).
  std::vector<TaskRecord> Merge(std::vector<Row> rows, const ListQuery& query,
                                RowFilter keep, bool newest_first,
                                size_t limit) const;
  // The seqs of pending tasks as a JSON array, for
  // "seq NOT IN (SELECT value FROM json_each(?))".
  std::string PendingSeqsJson() const;
  // The sessions that own a task `session` sees (core/sessions.h), stored
  // or pending, sorted; "" left out.
  Result<std::vector<std::string>> VisibleOwners(const std::string& session);
  // The seq of a flushed task, nullopt if there is none.
  Result<std::optional<int64_t>> StoredSeq(const TaskId& id);
  Status WritePending();
  // The audit's part of Load and of WritePending.
  Status LoadAudit();
  Status WriteAudit();
  // The merge queue's part of WritePending (sqlite_task_store_lands.cc).
  Status WriteLands();
  // Called by every write: after a Flush(), the first write starts a new
  // batch, and the journal of the last one is dropped.
  void StartWrite();
  void ClearJournal();
  // Before a write: notes in the journal (once per batch) the buffered
  // write it replaces, for DropBatch.
  void JournalTask(const TaskId& id);
  void JournalCounter(TaskKind kind);
  void JournalCursor(const std::pair<TaskId, std::string>& key);
  // "database <path>: <doing>: <error>"; a damaged database gets the
  // move-it-aside advice instead.
  Error Describe(Error error, std::string_view doing) const;

  Db db_;
  QueryWork read_work_;
  // In-memory id counters (last number handed out per kind) and the next
  // seq; both always ahead of the database.
  std::map<TaskKind, int64_t> last_numbers_;
  int64_t next_seq_ = 1;
  // What saves of a task can know without reading the database (a read
  // transaction per save was half of batond's fcntl calls per task): the
  // highest number per kind that any row may have (the counters move with
  // the rows, in one transaction), and the seqs of the tasks last written
  // live.
  std::map<TaskKind, int64_t> stored_numbers_;
  std::map<TaskId, int64_t> live_seqs_;

  // Writes since the last successful Flush().
  std::map<TaskId, Row> pending_tasks_;
  std::map<TaskKind, int64_t> pending_counters_;
  std::map<std::pair<TaskId, std::string>, uint64_t> pending_cursors_;
  std::set<std::string> pending_sessions_;
  std::map<std::string, QueueRecord> pending_queues_;
  std::map<std::string, AgentBudget> pending_budgets_;  // Empty: delete.
  std::map<uint64_t, AuditRecord> pending_audit_;       // By seq.
  std::map<int64_t, LandEntry> pending_lands_;          // By id.
  int64_t next_audit_seq_ = 1;

  // The batch's journal, for DropBatch: per key it wrote, the pending
  // write it replaced (nullopt: there was none); the sessions and audit
  // records it added. Dropped at the next batch.
  std::map<TaskId, std::optional<Row>> task_journal_;
  std::map<std::pair<TaskId, std::string>, std::optional<uint64_t>>
      cursor_journal_;
  std::map<TaskKind, std::optional<int64_t>> counter_journal_;
  std::map<std::string, std::optional<QueueRecord>> queue_journal_;
  std::map<std::string, std::optional<AgentBudget>> budget_journal_;
  std::map<int64_t, std::optional<LandEntry>> land_journal_;
  std::set<std::string> session_journal_;
  std::vector<int64_t> audit_journal_;
  bool batch_flushed_ = false;  // Flush() ran since the batch's last write.
};

}  // namespace baton

#endif  // BATON_STORE_SQLITE_TASK_STORE_H_
