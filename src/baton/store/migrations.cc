#include "baton/store/migrations.h"

#include <fmt/format.h>

namespace baton {
namespace {

// Schema 1. Statuses are stored by name (TaskStatusName), so the file reads
// well in the sqlite3 shell. The partial index conditions repeat
// kLiveStatuses and kTerminalStatuses. tasks_by_owner carries status so that
// filtering and counting a session's history never reads the table rows.
constexpr std::string_view kSchema1 = R"sql(
CREATE TABLE tasks (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  number INTEGER NOT NULL,
  owner TEXT NOT NULL,
  label TEXT NOT NULL,
  shell_command TEXT,
  argv TEXT NOT NULL,
  cwd TEXT NOT NULL,
  env_overrides TEXT NOT NULL,
  timeout_ms INTEGER,
  status TEXT NOT NULL,
  detail TEXT NOT NULL,
  exit_code INTEGER,
  signal INTEGER,
  pid INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL,
  ended_ms INTEGER NOT NULL,
  kill_reason TEXT NOT NULL,
  end_seen INTEGER NOT NULL,
  notice_delivered INTEGER NOT NULL,
  output_path TEXT NOT NULL
);
CREATE INDEX tasks_by_owner ON tasks (owner, seq, status);
CREATE INDEX tasks_live ON tasks (seq)
  WHERE status IN ('queued', 'running', 'waiting', 'stopping');
CREATE INDEX tasks_unnoticed ON tasks (seq)
  WHERE owner <> '' AND end_seen = 0 AND notice_delivered = 0
    AND status IN ('completed', 'failed', 'killed', 'interrupted');
CREATE TABLE counters (
  kind TEXT PRIMARY KEY,
  last_number INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE cursors (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  reader TEXT NOT NULL,
  byte_offset INTEGER NOT NULL,
  PRIMARY KEY (task_id, reader)
) WITHOUT ROWID;
CREATE TABLE sessions (
  name TEXT PRIMARY KEY,
  leased INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Schema 2: what only some tasks have (agent spec, checks, the agent CLI's
// session id, evidence) in one JSON column (core/task_extra.h).
constexpr std::string_view kSchema2 = R"sql(
ALTER TABLE tasks ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';
)sql";

// Schema 3: named queues (doc/scheduling.md). A task's queue, priority
// and dependencies live in its extra column.
constexpr std::string_view kSchema3 = R"sql(
CREATE TABLE queues (
  name TEXT PRIMARY KEY,
  max_running INTEGER,
  paused INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Schema 4: a queue's default limits for its tasks (doc/limits.md), as
// JSON: {"memory_bytes":..,"cpu_millis":..,"pids":..}.
constexpr std::string_view kSchema4 = R"sql(
ALTER TABLE queues ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';
)sql";

// Schema 5: sessions' budgets over their agent tasks (doc/agents.md,
// "Session budgets"), as JSON: {"max_turns":..,"max_tokens":..,
// "max_cost_usd":..}. A session without one has no row.
constexpr std::string_view kSchema5 = R"sql(
CREATE TABLE session_budgets (
  session TEXT PRIMARY KEY,
  budget TEXT NOT NULL
) WITHOUT ROWID;
)sql";

// Schema 6: the audit trail (doc/audit.md), one row per control action.
// `task` is "" for an action on batond or a queue; the index serves
// `baton audit --task`.
constexpr std::string_view kSchema6 = R"sql(
CREATE TABLE audit (
  seq INTEGER PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  action TEXT NOT NULL,
  task TEXT NOT NULL,
  session TEXT NOT NULL,
  client TEXT NOT NULL,
  uid INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  detail TEXT NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX audit_by_task ON audit (task, seq);
)sql";

// Schema 7: pages of ended tasks for a person's view (the board;
// doc/schema.md, "Pages of ended tasks"). tasks_ended is in the order of a
// page, the most recent end first, and holds status and owner, so that a
// page without filters, its total and the counts of the day read no table
// row but the page's. tasks_labels lists a session's labels without reading
// its history.
constexpr std::string_view kSchema7 = R"sql(
CREATE INDEX tasks_ended ON tasks (ended_ms, status, owner)
  WHERE status IN ('completed', 'failed', 'killed', 'interrupted');
CREATE INDEX tasks_labels ON tasks (owner, label);
)sql";

// Schema 8: the same ended tasks by owner and status, then end. The
// total of a page without filters, and the counts of the day, are ranges
// of it: SQLite counts a range without a sort or a test per row, which
// over tasks_ended (GROUP BY status over every row since the day began)
// took 30 ms in 100,000 tasks, and takes 4 here.
constexpr std::string_view kSchema8 = R"sql(
CREATE INDEX tasks_ended_by_owner ON tasks (owner, status, ended_ms)
  WHERE status IN ('completed', 'failed', 'killed', 'interrupted');
)sql";

// Schema 9: a task on another executor says which, in its extra column
// (core/task.h, RemoteRequest and Placement): the Slurm request that was
// `slurm` becomes `remote` {executor: "slurm", options: ...}, and the job
// that was `slurm_job` becomes `placement`, with its executor.
constexpr std::string_view kSchema9 = R"sql(
UPDATE tasks SET extra = json_remove(json_set(extra, '$.remote',
    json_object('executor', 'slurm', 'options', json_extract(extra, '$.slurm'))),
  '$.slurm')
  WHERE json_type(extra, '$.slurm') = 'object';
UPDATE tasks SET extra = json_remove(json_set(extra, '$.placement',
    json_set(json_extract(extra, '$.slurm_job'), '$.executor', 'slurm')),
  '$.slurm_job')
  WHERE json_type(extra, '$.slurm_job') = 'object';
)sql";

// Schema 10: the merge queue (doc/land.md): one row per entry, by its
// number, with the entry itself as JSON (core/land.h) and its state apart,
// so that a restarted batond reads the unfinished ones without the rest.
constexpr std::string_view kSchema10 = R"sql(
CREATE TABLE lands (
  id INTEGER PRIMARY KEY,
  state TEXT NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX lands_unfinished ON lands (id) WHERE state IN ('queued', 'testing');
)sql";

constexpr Migration kMigrations[] = {
    {1, kSchema1}, {2, kSchema2}, {3, kSchema3}, {4, kSchema4}, {5, kSchema5},
    {6, kSchema6}, {7, kSchema7}, {8, kSchema8}, {9, kSchema9}, {10, kSchema10},
};

}  // namespace

std::span<const Migration> Migrations() {
  return kMigrations;
}

Result<int> CheckSchemaVersion(Db& db) {
  // Reading the header is the first access to the file: a file of random
  // bytes fails here with SQLITE_NOTADB, before anything is written.
  auto app_id = db.QueryInt("PRAGMA application_id");
  if (!app_id)
    return std::unexpected(std::move(app_id.error()));
  auto version = db.QueryInt("PRAGMA user_version");
  if (!version)
    return std::unexpected(std::move(version.error()));
  auto objects = db.QueryInt("SELECT count(*) FROM sqlite_schema");
  if (!objects)
    return std::unexpected(std::move(objects.error()));

  // A version-0 file with tables, or another application's id, belongs to
  // someone else: creating our tables in it would be writing over it.
  if ((*app_id != 0 && *app_id != kApplicationId) ||
      (*version == 0 && *objects > 0)) {
    return MakeError(ErrorCode::kIncompatible,
                     fmt::format("{} is a SQLite database but not baton's; "
                                 "move it aside or set BATON_HOME to another "
                                 "directory",
                                 db.path()));
  }
  if (*version > kSchemaVersion) {
    return MakeError(
        ErrorCode::kIncompatible,
        fmt::format("database {} was written by a newer baton (schema {}, "
                    "this baton knows {}); upgrade baton or set BATON_HOME "
                    "to another directory",
                    db.path(), *version, kSchemaVersion));
  }
  return static_cast<int>(*version);
}

Status Migrate(Db& db, int from) {
  for (const Migration& migration : kMigrations) {
    if (migration.version <= from)
      continue;
    std::string context =
        fmt::format("migrating to schema {}", migration.version);
    auto txn = Transaction::Begin(db);
    if (!txn)
      return std::unexpected(std::move(txn.error()));
    // application_id and user_version live in the file header and are
    // written by the same transaction as the schema change.
    std::string sql = fmt::format(
        "{}\nPRAGMA application_id = {};\nPRAGMA user_version = {};",
        migration.sql, kApplicationId, migration.version);
    if (auto done = db.Exec(sql, context); !done)
      return done;
    if (auto done = txn->Commit(); !done)
      return done;
  }
  return {};
}

}  // namespace baton
