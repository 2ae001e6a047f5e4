#include "baton/store/sqlite_task_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "baton/core/sessions.h"
#include "baton/core/task_extra.h"
#include "baton/store/migrations.h"
#include "baton/store/task_rows.h"
#include "baton/util/json_fields.h"

namespace baton {
namespace {

// Long enough to ride out a checkpoint or a sqlite3 shell reading the file,
// short enough not to stall the event loop: a failed Flush is retried.
constexpr int kBusyTimeoutMs = 2000;

// "database <path>: <doing>: <error>", or the advice for damage.
Error DescribeError(Error error, const std::string& path,
                    std::string_view doing) {
  if (error.code == ErrorCode::kCorrupt) {
    return CorruptError(path, error.message);
  }
  if (error.code != ErrorCode::kIncompatible) {  // Already says it all.
    error.message =
        fmt::format("database {}: {}: {}", path, doing, error.message);
  }
  return error;
}

Status Configure(Db& db) {
  // WAL: readers never block the writer, and a commit is one append.
  auto mode = db.Prepare("PRAGMA journal_mode = WAL");
  if (!mode)
    return std::unexpected(std::move(mode.error()));
  auto row = (*mode)->Step();
  if (!row)
    return std::unexpected(std::move(row.error()));
  if (!*row || (*mode)->ColumnText(0) != "wal") {
    return MakeError(ErrorCode::kIo,
                     "its file system does not support SQLite's WAL mode");
  }
  // NORMAL: in WAL mode a commit survives a crash of the process; only a
  // crash of the OS may lose the last commits (doc/schema.md).
  return db.Exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                 "set pragmas");
}

}  // namespace

Result<std::unique_ptr<SqliteTaskStore>> SqliteTaskStore::Open(
    const std::string& path) {
  // A file we may read but not write passes sqlite3_open (SQLite falls back
  // to read-only) and fails at the first read of a WAL database or at the
  // first write; either way the user needs to hear which file to check.
  auto fail = [&](Error error) {
    if (error.code == ErrorCode::kPermissionDenied) {
      error.message = fmt::format(
          "database {} is not writable by baton ({}); check the owner and "
          "mode of the file and of its directory",
          path, error.message);
      return std::unexpected(std::move(error));
    }
    return std::unexpected(DescribeError(std::move(error), path, "opening"));
  };
  auto db = Db::Open(path);
  if (!db)
    return fail(std::move(db.error()));
  // Before the first read: another connection's checkpoint may hold a lock
  // for a moment.
  sqlite3_busy_timeout(db->get(), kBusyTimeoutMs);

  // Nothing is written before this check, so a refused file stays as it is.
  auto version = CheckSchemaVersion(*db);
  if (!version)
    return fail(std::move(version.error()));
  if (db->read_only()) {
    return fail(Error{ErrorCode::kPermissionDenied, "opened read-only"});
  }
  if (auto configured = Configure(*db); !configured) {
    return fail(std::move(configured.error()));
  }
  if (auto migrated = Migrate(*db, *version); !migrated) {
    return fail(std::move(migrated.error()));
  }
  std::unique_ptr<SqliteTaskStore> store(new SqliteTaskStore(std::move(*db)));
  if (auto loaded = store->Load(); !loaded) {
    return fail(std::move(loaded.error()));
  }
  return store;
}

Status SqliteTaskStore::Load() {
  // max(rowid) is a single b-tree descent, not a scan.
  auto max_seq = db_.QueryInt("SELECT coalesce(max(seq), 0) FROM tasks");
  if (!max_seq)
    return std::unexpected(std::move(max_seq.error()));
  next_seq_ = *max_seq + 1;
  if (auto audit = LoadAudit(); !audit)
    return audit;
  return ForEachRow(
      "SELECT kind, last_number FROM counters", [](Statement&) {},
      [&](const Statement& s) -> Status {
        // A kind this build does not know cannot be used by it either.
        if (auto kind = ParseTaskKind(s.ColumnText(0))) {
          last_numbers_[*kind] = s.ColumnInt(1);
          stored_numbers_[*kind] = s.ColumnInt(1);
        }
        return {};
      },
      "loading counters");
}

Result<int64_t> SqliteTaskStore::NextTaskNumber(TaskKind kind) {
  StartWrite();
  JournalCounter(kind);
  int64_t number = ++last_numbers_[kind];
  pending_counters_[kind] = number;
  return number;
}

Status SqliteTaskStore::PutTask(const TaskRecord& task) {
  if (task.spec.kind != task.id.kind || task.id.number < 1) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("task {} (spec of kind {}): ids are "
                    "<kind>-<N>, N >= 1, of the spec's kind",
                    task.id.ToString(), TaskKindName(task.spec.kind)));
  }
  StartWrite();
  JournalTask(task.id);
  auto pending = pending_tasks_.find(task.id);
  if (pending == pending_tasks_.end()) {
    Result<std::optional<int64_t>> seq = std::nullopt;  // A new task.
    if (auto live = live_seqs_.find(task.id); live != live_seqs_.end()) {
      seq = live->second;
    } else if (task.id.number <= stored_numbers_[task.id.kind]) {
      seq = StoredSeq(task.id);
    }
    if (!seq)
      return std::unexpected(std::move(seq.error()));
    // A new task takes the next seq now, so reads can order it among the
    // flushed ones before it has a row.
    Row row{seq->value_or(next_seq_), task};
    if (!seq->has_value())
      ++next_seq_;
    pending = pending_tasks_.emplace(task.id, std::move(row)).first;
  } else {
    pending->second.record = task;
  }
  // The client's environment may hold secrets: kept only while the task
  // may still start (held, or a retry left), since it must start with it
  // after a restart (KeepsEnvironment, task.h).
  if (!KeepsEnvironment(task))
    pending->second.record.spec.base_env.clear();

  // Keep the counter ahead of every stored number, so none is handed out
  // twice even if a caller numbered a task itself.
  int64_t& last = last_numbers_[task.id.kind];
  if (task.id.number > last) {
    JournalCounter(task.id.kind);
    last = task.id.number;
    pending_counters_[task.id.kind] = last;
  }
  return {};
}

Result<std::optional<TaskRecord>> SqliteTaskStore::GetTask(const TaskId& id) {
  if (auto it = pending_tasks_.find(id); it != pending_tasks_.end()) {
    return it->second.record;
  }
  auto rows =
      QueryRows(fmt::format("SELECT {} FROM tasks WHERE id = ?1", kTaskColumns),
                [&](Statement& s) { s.BindText(1, id.ToString()); });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  if (rows->empty())
    return std::nullopt;
  return std::move(rows->front().record);
}

Result<uint64_t> SqliteTaskStore::GetCursor(const TaskId& id,
                                            const std::string& reader) {
  auto it = pending_cursors_.find({id, reader});
  if (it != pending_cursors_.end())
    return it->second;
  uint64_t offset = 0;
  auto read = ForEachRow(
      "SELECT byte_offset FROM cursors WHERE task_id = ?1 AND reader = ?2",
      [&](Statement& s) {
        s.BindText(1, id.ToString());
        s.BindText(2, reader);
      },
      [&](const Statement& s) -> Status {
        offset = static_cast<uint64_t>(s.ColumnInt(0));
        return {};
      },
      "reading a cursor of " + id.ToString());
  if (!read)
    return std::unexpected(std::move(read.error()));
  return offset;
}

Status SqliteTaskStore::SetCursor(const TaskId& id, const std::string& reader,
                                  uint64_t offset) {
  // Checked now: a cursor of a missing task would fail its foreign key at
  // every Flush, and block every other write with it.
  if (!pending_tasks_.contains(id)) {
    auto seq = StoredSeq(id);
    if (!seq)
      return std::unexpected(std::move(seq.error()));
    if (!seq->has_value()) {
      return MakeError(ErrorCode::kNotFound,
                       fmt::format("no task {}", id.ToString()));
    }
  }
  StartWrite();
  std::pair<TaskId, std::string> key{id, reader};
  JournalCursor(key);
  pending_cursors_[key] = offset;
  return {};
}

Status SqliteTaskStore::MarkSessionLeased(const std::string& session) {
  StartWrite();
  if (pending_sessions_.insert(session).second)
    session_journal_.insert(session);
  return {};
}

Result<std::vector<std::string>> SqliteTaskStore::LoadLeasedSessions() {
  std::set<std::string> sessions = pending_sessions_;
  auto read = ForEachRow(
      "SELECT name FROM sessions WHERE leased = 1", [](Statement&) {},
      [&](const Statement& s) -> Status {
        sessions.insert(s.ColumnText(0));
        return {};
      },
      "reading sessions");
  if (!read)
    return std::unexpected(std::move(read.error()));
  return std::vector<std::string>(sessions.begin(), sessions.end());
}

Status SqliteTaskStore::PutQueue(const QueueRecord& queue) {
  StartWrite();
  if (!queue_journal_.contains(queue.name)) {
    auto pending = pending_queues_.find(queue.name);
    queue_journal_[queue.name] =
        pending == pending_queues_.end()
            ? std::nullopt
            : std::optional<QueueRecord>(pending->second);
  }
  pending_queues_[queue.name] = queue;
  return {};
}

Result<std::vector<QueueRecord>> SqliteTaskStore::LoadQueues() {
  std::map<std::string, QueueRecord> queues;
  auto read = ForEachRow(
      "SELECT name, max_running, paused, limits FROM queues", [](Statement&) {},
      [&](const Statement& s) -> Status {
        QueueRecord queue;
        queue.name = s.ColumnText(0);
        if (!s.ColumnIsNull(1))
          queue.max_running = s.ColumnInt(1);
        queue.paused = s.ColumnInt(2) != 0;
        auto limits = ParseJson(s.ColumnText(3));
        if (!limits ||
            !DecodeValue(limits->value, queue.limits, {}, "queue limits")) {
          return MakeError(ErrorCode::kCorrupt,
                           fmt::format("queue {}: its limits are not "
                                       "readable: {}",
                                       queue.name, s.ColumnText(3)));
        }
        queues[queue.name] = std::move(queue);
        return {};
      },
      "reading queues");
  if (!read)
    return std::unexpected(std::move(read.error()));
  for (const auto& [name, queue] : pending_queues_)
    queues[name] = queue;
  std::vector<QueueRecord> all;
  for (auto& [name, queue] : queues)
    all.push_back(std::move(queue));
  return all;
}

Status SqliteTaskStore::PutSessionBudget(const std::string& session,
                                         const AgentBudget& budget) {
  StartWrite();
  if (!budget_journal_.contains(session)) {
    auto pending = pending_budgets_.find(session);
    budget_journal_[session] =
        pending == pending_budgets_.end()
            ? std::nullopt
            : std::optional<AgentBudget>(pending->second);
  }
  pending_budgets_[session] = budget;
  return {};
}

Result<std::map<std::string, AgentBudget>>
SqliteTaskStore::LoadSessionBudgets() {
  std::map<std::string, AgentBudget> budgets;
  auto read = ForEachRow(
      "SELECT session, budget FROM session_budgets", [](Statement&) {},
      [&](const Statement& s) -> Status {
        AgentBudget budget;
        auto json = ParseJson(s.ColumnText(1));
        if (!json || !DecodeValue(json->value, budget, {}, "session budget")) {
          return MakeError(ErrorCode::kCorrupt,
                           fmt::format("session {}: its budget is not "
                                       "readable: {}",
                                       s.ColumnText(0), s.ColumnText(1)));
        }
        budgets[s.ColumnText(0)] = budget;
        return {};
      },
      "reading session budgets");
  if (!read)
    return std::unexpected(std::move(read.error()));
  for (const auto& [session, budget] : pending_budgets_) {
    if (budget.any()) {
      budgets[session] = budget;
    } else {
      budgets.erase(session);
    }
  }
  return budgets;
}

Status SqliteTaskStore::Flush() {
  batch_flushed_ = true;
  if (!HasPendingWrites())
    return {};
  if (auto written = WritePending(); !written) {
    return std::unexpected(Describe(
        std::move(written.error()),
        fmt::format("saving {} task(s), {} cursor(s) and {} session(s) "
                    "failed; they stay in memory and the next flush retries",
                    pending_tasks_.size(), pending_cursors_.size(),
                    pending_sessions_.size())));
  }
  for (const auto& [id, row] : pending_tasks_) {
    if (IsTerminal(row.record.status)) {
      live_seqs_.erase(id);
    } else {
      live_seqs_[id] = row.seq;
    }
  }
  for (const auto& [kind, number] : pending_counters_) {
    int64_t& stored = stored_numbers_[kind];
    stored = std::max(stored, number);
  }
  pending_tasks_.clear();
  pending_counters_.clear();
  pending_cursors_.clear();
  pending_sessions_.clear();
  pending_queues_.clear();
  pending_budgets_.clear();
  pending_audit_.clear();
  pending_lands_.clear();
  task_journal_.clear();
  cursor_journal_.clear();
  counter_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
  land_journal_.clear();
  return {};
}

bool SqliteTaskStore::HasPendingWrites() const {
  return !pending_tasks_.empty() || !pending_counters_.empty() ||
         !pending_cursors_.empty() || !pending_sessions_.empty() ||
         !pending_queues_.empty() || !pending_budgets_.empty() ||
         !pending_audit_.empty() || !pending_lands_.empty();
}

Status SqliteTaskStore::WritePending() {
  auto txn = Transaction::Begin(db_);
  if (!txn)
    return std::unexpected(std::move(txn.error()));

  // Each statement is fetched once and reset between rows; a loop of
  // Prepare() calls would hash the SQL text per row.
  auto run_all = [&](const std::string& sql, const auto& items,
                     const auto& bind) -> Status {
    if (items.empty())
      return {};
    auto stmt = db_.Prepare(sql);
    if (!stmt)
      return std::unexpected(std::move(stmt.error()));
    for (const auto& item : items) {
      bind(**stmt, item);
      if (auto done = (*stmt)->Run(); !done)
        return done;
      (*stmt)->Reset();
    }
    return {};
  };
  // Tasks first: cursors reference them.
  Status written = run_all(UpsertTaskSql(), pending_tasks_,
                           [](Statement& s, const auto& entry) {
                             BindTask(s, entry.second.seq, entry.second.record);
                           });
  if (written) {
    // max(): a counter never goes back, whatever the caller did.
    written = run_all(
        "INSERT INTO counters (kind, last_number) VALUES (?1, ?2) "
        "ON CONFLICT (kind) DO UPDATE SET "
        "last_number = max(last_number, excluded.last_number)",
        pending_counters_, [](Statement& s, const auto& entry) {
          s.BindText(1, TaskKindName(entry.first));
          s.BindInt(2, entry.second);
        });
  }
  if (written) {
    written = run_all(
        "INSERT INTO sessions (name, leased) VALUES (?1, 1) "
        "ON CONFLICT (name) DO UPDATE SET leased = 1",
        pending_sessions_,
        [](Statement& s, const std::string& name) { s.BindText(1, name); });
  }
  if (written) {
    written = run_all(
        "INSERT INTO queues (name, max_running, paused, limits) "
        "VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (name) DO UPDATE SET max_running = "
        "excluded.max_running, paused = excluded.paused, "
        "limits = excluded.limits",
        pending_queues_, [](Statement& s, const auto& entry) {
          s.BindText(1, entry.first);
          if (entry.second.max_running) {
            s.BindInt(2, *entry.second.max_running);
          } else {
            s.BindNull(2);
          }
          s.BindInt(3, entry.second.paused ? 1 : 0);
          s.BindText(4, EncodeObject(entry.second.limits));
        });
  }
  if (written) {
    // An empty budget removes the session's row: the upsert skips it (its
    // WHERE also keeps SQLite from reading ON as a join's), the delete
    // takes it.
    written = run_all(
        "INSERT INTO session_budgets (session, budget) "
        "SELECT ?1, ?2 WHERE ?2 <> '{}' "
        "ON CONFLICT (session) DO UPDATE SET budget = excluded.budget",
        pending_budgets_, [](Statement& s, const auto& entry) {
          s.BindText(1, entry.first);
          s.BindText(2, EncodeObject(entry.second));
        });
  }
  if (written) {
    written =
        run_all("DELETE FROM session_budgets WHERE session = ?1 AND ?2 = '{}'",
                pending_budgets_, [](Statement& s, const auto& entry) {
                  s.BindText(1, entry.first);
                  s.BindText(2, EncodeObject(entry.second));
                });
  }
  if (written) {
    written = run_all(
        "INSERT INTO cursors (task_id, reader, byte_offset) "
        "VALUES (?1, ?2, ?3) "
        "ON CONFLICT (task_id, reader) DO UPDATE SET "
        "byte_offset = excluded.byte_offset",
        pending_cursors_, [](Statement& s, const auto& entry) {
          s.BindText(1, entry.first.first.ToString());
          s.BindText(2, entry.first.second);
          s.BindInt(3, static_cast<int64_t>(entry.second));
        });
  }
  if (written)
    written = WriteAudit();
  if (written)
    written = WriteLands();
  if (!written)
    return written;  // ~Transaction rolls back.
  return txn->Commit();
}

Status SqliteTaskStore::DeleteTasks(const std::vector<TaskId>& ids) {
  Json listed = Json::array();
  for (const TaskId& id : ids) {
    bool cursor_pending = std::any_of(
        pending_cursors_.begin(), pending_cursors_.end(),
        [&](const auto& cursor) { return cursor.first.first == id; });
    if (pending_tasks_.contains(id) || cursor_pending) {
      return MakeError(ErrorCode::kInternal,
                       fmt::format("{} has a write not saved yet; try again",
                                   id.ToString()));
    }
    listed.push_back(id.ToString());
  }
  auto txn = Transaction::Begin(db_);
  if (!txn)
    return std::unexpected(Describe(std::move(txn.error()), "removing tasks"));
  std::string json = listed.dump();
  for (const char* sql :
       {"DELETE FROM cursors WHERE task_id IN (SELECT value FROM "
        "json_each(?1))",
        "DELETE FROM tasks WHERE id IN (SELECT value FROM json_each(?1))"}) {
    auto stmt = db_.Prepare(sql);
    if (!stmt)
      return std::unexpected(
          Describe(std::move(stmt.error()), "removing tasks"));
    (*stmt)->BindText(1, json);
    if (auto done = (*stmt)->Run(); !done)
      return std::unexpected(
          Describe(std::move(done.error()), "removing tasks"));
  }
  if (auto committed = txn->Commit(); !committed)
    return std::unexpected(
        Describe(std::move(committed.error()), "removing tasks"));
  for (const TaskId& id : ids)
    live_seqs_.erase(id);
  return {};
}

Result<std::optional<int64_t>> SqliteTaskStore::StoredSeq(const TaskId& id) {
  std::optional<int64_t> seq;
  auto read = ForEachRow(
      "SELECT seq FROM tasks WHERE id = ?1",
      [&](Statement& s) { s.BindText(1, id.ToString()); },
      [&](const Statement& s) -> Status {
        seq = s.ColumnInt(0);
        return {};
      },
      "looking up " + id.ToString());
  if (!read)
    return std::unexpected(std::move(read.error()));
  return seq;
}

Status SqliteTaskStore::ForEachRow(const std::string& sql, const Binder& bind,
                                   const RowReader& read,
                                   std::string_view doing) {
  auto stmt = db_.Prepare(sql);
  if (!stmt)
    return std::unexpected(Describe(std::move(stmt.error()), doing));
  bind(**stmt);
  for (;;) {
    auto more = (*stmt)->Step();
    if (!more || !*more)
      read_work_ += (*stmt)->TakeWork();
    if (!more)
      return std::unexpected(Describe(std::move(more.error()), doing));
    if (!*more)
      return {};
    if (auto done = read(**stmt); !done) {
      read_work_ += (*stmt)->TakeWork();
      return done;
    }
  }
}

Result<size_t> SqliteTaskStore::CountRows(const std::string& sql,
                                          const Binder& bind,
                                          std::string_view doing) {
  size_t count = 0;
  auto read = ForEachRow(
      sql, bind,
      [&](const Statement& s) -> Status {
        count = static_cast<size_t>(s.ColumnInt(0));
        return {};
      },
      doing);
  if (!read)
    return std::unexpected(std::move(read.error()));
  return count;
}

Result<std::vector<SqliteTaskStore::Row>> SqliteTaskStore::QueryRows(
    const std::string& sql, const Binder& bind) {
  std::vector<Row> rows;
  auto read = ForEachRow(
      sql, bind,
      [&](const Statement& s) -> Status {
        auto row = ReadRow(s, db_.path());
        if (!row)
          return std::unexpected(std::move(row.error()));
        rows.push_back(Row{row->first, std::move(row->second)});
        return {};
      },
      "reading tasks");
  if (!read)
    return std::unexpected(std::move(read.error()));
  return rows;
}

std::vector<TaskRecord> SqliteTaskStore::Merge(std::vector<Row> rows,
                                               const ListQuery& query,
                                               RowFilter keep,
                                               bool newest_first,
                                               size_t limit) const {
  for (const auto& [id, pending] : pending_tasks_) {
    if (keep(pending.record, query))
      rows.push_back(pending);
  }
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return newest_first ? a.seq > b.seq : a.seq < b.seq;
  });
  if (limit != 0 && rows.size() > limit)
    rows.resize(limit);
  std::vector<TaskRecord> tasks;
  tasks.reserve(rows.size());
  for (Row& row : rows)
    tasks.push_back(std::move(row.record));
  return tasks;
}

std::string SqliteTaskStore::PendingSeqsJson() const {
  nlohmann::json seqs = nlohmann::json::array();
  for (const auto& [id, pending] : pending_tasks_)
    seqs.push_back(pending.seq);
  return ToJson(seqs);
}

Error SqliteTaskStore::Describe(Error error, std::string_view doing) const {
  return DescribeError(std::move(error), db_.path(), doing);
}

}  // namespace baton
