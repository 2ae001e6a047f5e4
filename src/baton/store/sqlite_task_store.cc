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
#include "baton/util/json_fields.h"

namespace baton {
namespace {

// Long enough to ride out a checkpoint or a sqlite3 shell reading the file,
// short enough not to stall the event loop: a failed Flush is retried.
constexpr int kBusyTimeoutMs = 2000;

// The columns of a task row, in the order BindTask binds and ReadRow reads.
constexpr std::string_view kTaskColumns =
    "seq, id, kind, number, owner, label, shell_command, argv, cwd, "
    "env_overrides, timeout_ms, status, detail, exit_code, signal, pid, "
    "created_ms, started_ms, ended_ms, kill_reason, end_seen, "
    "notice_delivered, output_path, extra";

// Excludes pending tasks from a query: they are merged from memory. By seq,
// the rowid, which every index holds, so the check needs no table lookup.
constexpr std::string_view kNotPending =
    "seq NOT IN (SELECT value FROM json_each(?2))";

// Inserts a task, or updates every column but seq and id of an existing one.
// An upsert rather than INSERT OR REPLACE, whose delete would cascade to the
// task's cursors.
const std::string& UpsertTaskSql() {
  static const std::string sql = [] {
    std::string columns(kTaskColumns);
    std::string values, updates;
    int index = 0;
    for (size_t start = 0; start < columns.size();) {
      size_t end = std::min(columns.find(", ", start), columns.size());
      std::string column = columns.substr(start, end - start);
      ++index;
      values += fmt::format("{}?{}", index == 1 ? "" : ", ", index);
      if (column != "seq" && column != "id") {
        updates += fmt::format("{}{} = excluded.{}",
                               updates.empty() ? "" : ", ", column, column);
      }
      start = end + 2;
    }
    return fmt::format(
        "INSERT INTO tasks ({}) VALUES ({}) ON CONFLICT (id) DO UPDATE SET {}",
        kTaskColumns, values, updates);
  }();
  return sql;
}

// Error handler "replace": our own strings must not make dump() throw. The
// protocol is JSON, so text that is not UTF-8 cannot reach us anyway.
std::string ToJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool ParseArgv(const std::string& text, std::vector<std::string>& argv) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array())
    return false;  // Also when it did not parse.
  for (const auto& arg : json) {
    if (!arg.is_string())
      return false;
    argv.push_back(arg.get_ref<const std::string&>());
  }
  return true;
}

bool ParseEnv(const std::string& text,
              std::map<std::string, std::string>& env) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object())
    return false;
  for (const auto& [name, value] : json.items()) {
    if (!value.is_string())
      return false;
    env.emplace(name, value.get_ref<const std::string&>());
  }
  return true;
}

void BindTask(Statement& s, int64_t seq, const TaskRecord& task) {
  const TaskSpec& spec = task.spec;
  int i = 0;
  s.BindInt(++i, seq);
  s.BindText(++i, task.id.ToString());
  s.BindText(++i, TaskKindName(task.id.kind));
  s.BindInt(++i, task.id.number);
  s.BindText(++i, spec.owner);
  s.BindText(++i, spec.label);
  if (spec.shell_command) {
    s.BindText(++i, *spec.shell_command);
  } else {
    s.BindNull(++i);
  }
  s.BindText(++i, ToJson(spec.argv));
  s.BindText(++i, spec.cwd);
  s.BindText(++i, ToJson(spec.env_overrides));
  s.BindOptionalInt(
      ++i, spec.timeout ? std::optional(spec.timeout->count()) : std::nullopt);
  s.BindText(++i, TaskStatusName(task.status));
  s.BindText(++i, task.detail);
  s.BindOptionalInt(++i, task.exit_code);
  s.BindOptionalInt(++i, task.signal);
  s.BindInt(++i, task.pid);
  s.BindInt(++i, task.created_ms);
  s.BindInt(++i, task.started_ms);
  s.BindInt(++i, task.ended_ms);
  s.BindText(++i, task.kill_reason);
  s.BindInt(++i, task.end_seen ? 1 : 0);
  s.BindInt(++i, task.notice_delivered ? 1 : 0);
  s.BindText(++i, task.output_path);
  s.BindText(++i, EncodeTaskExtra(task));
}

std::optional<int> OptionalInt(const Statement& s, int column) {
  auto value = s.ColumnOptionalInt(column);
  if (!value)
    return std::nullopt;
  return static_cast<int>(*value);
}

// The remedy for a damaged database; `what` says what is wrong with it.
Error CorruptError(const std::string& path, std::string_view what) {
  return Error{ErrorCode::kCorrupt,
               fmt::format("database {} is corrupt ({}); move it aside (baton "
                           "keeps it untouched) and start again",
                           path, what)};
}

// The row under `s`, which selects kTaskColumns.
Result<std::pair<int64_t, TaskRecord>> ReadRow(const Statement& s,
                                               const std::string& path) {
  TaskRecord task;
  TaskSpec& spec = task.spec;
  int c = 0;
  int64_t seq = s.ColumnInt(c++);
  std::string id = s.ColumnText(c++);
  auto corrupt = [&](std::string_view what) {
    return std::unexpected(
        CorruptError(path, fmt::format("task {}: {}", id, what)));
  };
  auto kind = ParseTaskKind(s.ColumnText(c++));
  if (!kind)
    return corrupt("unknown kind");
  task.id = TaskId{*kind, s.ColumnInt(c++)};
  spec.kind = *kind;
  spec.owner = s.ColumnText(c++);
  spec.label = s.ColumnText(c++);
  if (!s.ColumnIsNull(c))
    spec.shell_command = s.ColumnText(c);
  ++c;
  if (!ParseArgv(s.ColumnText(c++), spec.argv)) {
    return corrupt("argv is not a JSON array of strings");
  }
  spec.cwd = s.ColumnText(c++);
  if (!ParseEnv(s.ColumnText(c++), spec.env_overrides)) {
    return corrupt("env_overrides is not a JSON object of strings");
  }
  if (auto timeout = s.ColumnOptionalInt(c++)) {
    spec.timeout = std::chrono::milliseconds(*timeout);
  }
  auto status = ParseTaskStatus(s.ColumnText(c++));
  if (!status)
    return corrupt("unknown status");
  task.status = *status;
  task.detail = s.ColumnText(c++);
  task.exit_code = OptionalInt(s, c++);
  task.signal = OptionalInt(s, c++);
  task.pid = s.ColumnInt(c++);
  task.created_ms = s.ColumnInt(c++);
  task.started_ms = s.ColumnInt(c++);
  task.ended_ms = s.ColumnInt(c++);
  task.kill_reason = s.ColumnText(c++);
  task.end_seen = s.ColumnInt(c++) != 0;
  task.notice_delivered = s.ColumnInt(c++) != 0;
  task.output_path = s.ColumnText(c++);
  if (!DecodeTaskExtra(s.ColumnText(c++), task)) {
    return corrupt("extra is not a JSON object");
  }
  return std::pair(seq, std::move(task));
}

bool IsVisible(const TaskRecord& task, const ListQuery& query) {
  if (!SeesOwner(query.owner, task.spec.owner))
    return false;
  return IsTerminal(task.status) ? query.include_terminal : query.include_live;
}

bool IsLive(const TaskRecord& task, const ListQuery&) {
  return !IsTerminal(task.status);
}

bool IsUnnoticed(const TaskRecord& task, const ListQuery&) {
  return IsTerminal(task.status) && !task.spec.owner.empty() &&
         !task.end_seen && !task.notice_delivered;
}

// The SQL condition for a query's live/terminal flags ("" for both).
std::string StatusFilter(const ListQuery& query) {
  if (query.include_live && query.include_terminal)
    return "";
  return fmt::format(" AND status IN {}",
                     query.include_live ? kLiveStatuses : kTerminalStatuses);
}

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

Result<std::vector<TaskRecord>> SqliteTaskStore::LoadLiveTasks() {
  auto rows =
      QueryRows(fmt::format("SELECT {} FROM tasks WHERE status IN {} AND {} "
                            "ORDER BY seq",
                            kTaskColumns, kLiveStatuses, kNotPending),
                [&](Statement& s) { s.BindText(2, PendingSeqsJson()); });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  return Merge(std::move(*rows), {}, IsLive, /*newest_first=*/false, 0);
}

Result<std::vector<TaskRecord>> SqliteTaskStore::LoadUnnoticedTasks() {
  auto rows = QueryRows(
      fmt::format("SELECT {} FROM tasks WHERE owner <> '' AND end_seen = 0 "
                  "AND notice_delivered = 0 AND status IN {} AND {} "
                  "ORDER BY seq",
                  kTaskColumns, kTerminalStatuses, kNotPending),
      [&](Statement& s) { s.BindText(2, PendingSeqsJson()); });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  return Merge(std::move(*rows), {}, IsUnnoticed, /*newest_first=*/false, 0);
}

Result<std::vector<TaskRecord>> SqliteTaskStore::ListTasks(
    const ListQuery& query) {
  if (!query.include_live && !query.include_terminal)
    return {};
  // Two branches, each walking an index backwards in seq order, which SQLite
  // merges and stops after the limit ("owner IN (?1, '')" would sort every
  // visible task first). The second branch is empty for an unowned query.
  // Live tasks are few, so a live-only list walks tasks_live rather than a
  // session's whole history. A person's session sees every owner: one walk.
  std::string sql =
      IsPersonSession(query.owner)
          ? fmt::format(
                "SELECT {0} FROM tasks {1} WHERE ?1 <> ''{2} AND {3} "
                "ORDER BY seq DESC LIMIT ?3",
                kTaskColumns,
                query.include_terminal ? "" : "INDEXED BY tasks_live",
                StatusFilter(query), kNotPending)
          : fmt::format(
                "SELECT {0} FROM tasks {1} WHERE owner = ?1{2} AND {3} "
                "UNION ALL "
                "SELECT {0} FROM tasks {1} WHERE owner = '' AND ?1 <> ''{2} "
                "AND {3} ORDER BY seq DESC LIMIT ?3",
                kTaskColumns,
                query.include_terminal ? "" : "INDEXED BY tasks_live",
                StatusFilter(query), kNotPending);
  auto rows = QueryRows(sql, [&](Statement& s) {
    s.BindText(1, query.owner);
    s.BindText(2, PendingSeqsJson());
    s.BindInt(3, query.limit == 0 ? -1 : static_cast<int64_t>(query.limit));
  });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  return Merge(std::move(*rows), query, IsVisible, /*newest_first=*/true,
               query.limit);
}

Result<size_t> SqliteTaskStore::CountTasks(const ListQuery& query) {
  if (!query.include_live && !query.include_terminal)
    return 0;
  // tasks_by_owner holds owner, seq and status: counting reads no table row.
  std::string sql = fmt::format(
      "SELECT count(*) FROM tasks {} WHERE {}{} AND {}",
      query.include_terminal ? "" : "INDEXED BY tasks_live",
      IsPersonSession(query.owner) ? "?1 <> ''" : "owner IN (?1, '')",
      StatusFilter(query), kNotPending);
  auto counted = CountRows(
      sql,
      [&](Statement& s) {
        s.BindText(1, query.owner);
        s.BindText(2, PendingSeqsJson());
      },
      "counting tasks");
  if (!counted)
    return std::unexpected(std::move(counted.error()));
  size_t count = *counted;
  for (const auto& [id, pending] : pending_tasks_) {
    if (IsVisible(pending.record, query))
      ++count;
  }
  return count;
}

namespace {

// The ended tasks of the owners ?1 (a JSON list: those the caller sees,
// narrowed by the filter's owner) that `filter` lets through, the pending
// ones left out (?2, when `pending` says there are any), in tasks_ended:
// the SQL twin of TaskFilter::Matches and IsVisible. Only the filters that
// are set are in the text (bound as ?5 to ?8), so that without any the
// query reads the index alone.
std::string EndedMatching(const TaskFilter& filter, bool pending) {
  std::string sql =
      "FROM tasks INDEXED BY tasks_ended "
      "WHERE status IN ('completed', 'failed', 'killed', 'interrupted') "
      "AND owner IN (SELECT value FROM json_each(?1))";
  if (pending)
    sql += " AND seq NOT IN (SELECT value FROM json_each(?2))";
  if (!filter.kind.empty())
    sql += " AND kind = ?5";
  if (!filter.status.empty())
    sql += " AND status = ?6";
  if (!filter.label.empty())
    sql += " AND label = ?7";
  if (!filter.search.empty()) {
    sql +=
        " AND (instr(lower(id), ?8) OR instr(lower(label), ?8) "
        "OR instr(lower(coalesce(shell_command, '')), ?8) "
        "OR EXISTS (SELECT 1 FROM json_each(argv) "
        "WHERE instr(lower(value), ?8)) "
        "OR instr(lower(coalesce(json_extract(extra, '$.agent.brief'), '')), "
        "?8))";
  }
  return sql;
}

// How many ended tasks of the owners ?1 have status ?6 and ended at or
// after ?3, pending ones left out as above: a range of tasks_ended_by_owner
// per owner, counted without reading a row.
std::string EndedCounting(bool pending) {
  std::string sql =
      "SELECT count(*) FROM tasks INDEXED BY tasks_ended_by_owner "
      "WHERE owner IN (SELECT value FROM json_each(?1)) "
      "AND status IN ('completed', 'failed', 'killed', 'interrupted') "
      "AND status = ?6 AND ended_ms >= ?3";
  if (pending)
    sql += " AND seq NOT IN (SELECT value FROM json_each(?2))";
  return sql;
}

// The order of tasks_ended, descending; seq last makes it total.
bool EndsLater(int64_t a_seq, const TaskRecord& a, int64_t b_seq,
               const TaskRecord& b) {
  auto key = [](int64_t seq, const TaskRecord& t) {
    return std::make_tuple(t.ended_ms, TaskStatusName(t.status),
                           std::string_view(t.spec.owner), seq);
  };
  return key(b_seq, b) < key(a_seq, a);
}

}  // namespace

Result<std::vector<std::string>> SqliteTaskStore::VisibleOwners(
    const std::string& session) {
  std::set<std::string> owners;
  for (const auto& [id, row] : pending_tasks_) {
    const std::string& owner = row.record.spec.owner;
    if (!owner.empty() && SeesOwner(session, owner))
      owners.insert(owner);
  }
  // The first owner in tasks_by_owner that `condition` (on ?1 = `bound`)
  // lets through, if any: one seek.
  auto first_owner =
      [&](std::string_view condition,
          const std::string& bound) -> Result<std::optional<std::string>> {
    std::optional<std::string> owner;
    auto found = ForEachRow(
        fmt::format("SELECT owner FROM tasks INDEXED BY tasks_by_owner "
                    "WHERE {} ORDER BY owner LIMIT 1",
                    condition),
        [&](Statement& s) { s.BindText(1, bound); },
        [&](const Statement& s) -> Status {
          owner = s.ColumnText(0);
          return {};
        },
        "listing sessions");
    if (!found)
      return std::unexpected(std::move(found.error()));
    return owner;
  };
  if (!IsPersonSession(session)) {
    // A client's session sees one session's tasks: its own, if it has any.
    if (!session.empty()) {
      auto own = first_owner("owner = ?1", session);
      if (!own)
        return std::unexpected(std::move(own.error()));
      if (*own)
        owners.insert(std::move(**own));
    }
    return std::vector<std::string>(owners.begin(), owners.end());
  }
  // A person sees every session: one seek per session, to the next owner
  // after the last, rather than a walk of the history.
  for (std::string after;;) {
    auto next = first_owner("owner > ?1", after);
    if (!next)
      return std::unexpected(std::move(next.error()));
    if (!*next)
      break;
    after = std::move(**next);
    owners.insert(after);
  }
  return std::vector<std::string>(owners.begin(), owners.end());
}

Result<EndedPage> SqliteTaskStore::PageEnded(const EndedQuery& query) {
  EndedPage page;
  const TaskFilter& filter = query.filter;
  // The same pending set for the page, its total and the counts; without
  // any (the usual case), no row is tested against it.
  const bool has_pending = !pending_tasks_.empty();
  const std::string pending_seqs = has_pending ? PendingSeqsJson() : "";
  const std::string matching = EndedMatching(filter, has_pending);
  // The sessions whose tasks the caller sees ("" too), and those the
  // filter lets through.
  auto owners = VisibleOwners(query.owner);
  if (!owners)
    return std::unexpected(std::move(owners.error()));
  page.owners = *owners;
  nlohmann::json visible_owners(*owners);
  visible_owners.push_back("");
  nlohmann::json filtered_owners = nlohmann::json::array();
  if (!filter.owner)
    filtered_owners = visible_owners;
  else if (SeesOwner(query.owner, *filter.owner))
    filtered_owners.push_back(*filter.owner);
  const std::string visible_json = ToJson(visible_owners);
  const std::string filtered_json = ToJson(filtered_owners);
  auto bind_filter = [&](Statement& s) {
    s.BindText(1, filtered_json);
    if (has_pending)
      s.BindText(2, pending_seqs);
    const std::pair<int, const std::string*> filters[] = {{5, &filter.kind},
                                                          {6, &filter.status},
                                                          {7, &filter.label},
                                                          {8, &filter.search}};
    for (const auto& [index, value] : filters) {
      if (!value->empty())
        s.BindText(index, *value);
    }
  };
  // Pending tasks are merged from memory. They are few (one loop
  // iteration's writes), so with any of them on the page the page is read
  // from the start and cut after the merge; else SQLite skips to it.
  std::vector<Row> pending;
  ListQuery visible{.owner = query.owner};
  for (const auto& [id, row] : pending_tasks_) {
    const TaskRecord& task = row.record;
    if (!IsTerminal(task.status) || !IsVisible(task, visible))
      continue;
    if (task.ended_ms >= query.counted_since_ms)
      ++page.ended_since[std::string(TaskStatusName(task.status))];
    if (filter.Matches(task))
      pending.push_back(row);
  }
  size_t skip = pending.empty() ? query.offset : 0;
  auto rows = QueryRows(
      fmt::format("SELECT {} {} ORDER BY ended_ms DESC, status DESC, "
                  "owner DESC, seq DESC LIMIT ?3 OFFSET ?4",
                  kTaskColumns, matching),
      [&](Statement& s) {
        bind_filter(s);
        s.BindInt(3, static_cast<int64_t>(query.offset - skip + query.limit));
        s.BindInt(4, static_cast<int64_t>(skip));
      });
  if (!rows)
    return std::unexpected(std::move(rows.error()));
  if (!pending.empty()) {
    rows->insert(rows->end(), pending.begin(), pending.end());
    std::sort(rows->begin(), rows->end(), [](const Row& a, const Row& b) {
      return EndsLater(a.seq, a.record, b.seq, b.record);
    });
    rows->erase(rows->begin(),
                rows->begin() + std::min(query.offset, rows->size()));
    if (rows->size() > query.limit)
      rows->resize(query.limit);
  }
  page.tasks.reserve(rows->size());
  for (Row& row : *rows)
    page.tasks.push_back(std::move(row.record));

  // The counts of the day, per status; without kind, label or search, the
  // total is the sum of the same counts over every end.
  const bool narrowed =
      !filter.kind.empty() || !filter.label.empty() || !filter.search.empty();
  const std::string counting = EndedCounting(has_pending);
  page.total = pending.size();
  auto count_since = [&](const std::string& owners_json,
                         const std::string& name, int64_t since_ms) {
    return CountRows(
        counting,
        [&](Statement& s) {
          s.BindText(1, owners_json);
          if (has_pending)
            s.BindText(2, pending_seqs);
          s.BindInt(3, since_ms);
          s.BindText(6, name);
        },
        "counting ended tasks");
  };
  for (TaskStatus status : {TaskStatus::kCompleted, TaskStatus::kFailed,
                            TaskStatus::kKilled, TaskStatus::kInterrupted}) {
    const std::string name(TaskStatusName(status));
    auto since = count_since(visible_json, name, query.counted_since_ms);
    if (!since)
      return std::unexpected(std::move(since.error()));
    if (*since > 0)
      page.ended_since[name] += *since;
    if (narrowed || (!filter.status.empty() && filter.status != name))
      continue;
    auto ever =
        count_since(filtered_json, name, std::numeric_limits<int64_t>::min());
    if (!ever)
      return std::unexpected(std::move(ever.error()));
    page.total += *ever;
  }
  if (narrowed) {
    auto counted = CountRows(fmt::format("SELECT count(*) {}", matching),
                             bind_filter, "counting ended tasks");
    if (!counted)
      return std::unexpected(std::move(counted.error()));
    page.total += *counted;
  }
  // A task's label never changes: the stored labels and the pending ones
  // together are every label.
  std::set<std::string> labels;
  auto counted = ForEachRow(
      "SELECT DISTINCT label FROM tasks INDEXED BY tasks_labels "
      "WHERE owner IN (SELECT value FROM json_each(?1)) AND label > ''",
      [&](Statement& s) { s.BindText(1, visible_json); },
      [&](const Statement& s) -> Status {
        labels.insert(s.ColumnText(0));
        return {};
      },
      "listing labels");
  if (!counted)
    return std::unexpected(std::move(counted.error()));
  for (const auto& [id, row] : pending_tasks_) {
    if (!row.record.spec.label.empty() && IsVisible(row.record, visible))
      labels.insert(row.record.spec.label);
  }
  page.labels.assign(labels.begin(), labels.end());
  return page;
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
  pending_sessions_.insert(session);
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
  task_journal_.clear();
  cursor_journal_.clear();
  counter_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
  return {};
}

bool SqliteTaskStore::HasPendingWrites() const {
  return !pending_tasks_.empty() || !pending_counters_.empty() ||
         !pending_cursors_.empty() || !pending_sessions_.empty() ||
         !pending_queues_.empty() || !pending_budgets_.empty() ||
         !pending_audit_.empty();
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
  if (!written)
    return written;  // ~Transaction rolls back.
  return txn->Commit();
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
