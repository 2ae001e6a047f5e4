// What the files of SqliteTaskStore share about the tasks table. The store
// is split by what it does: sqlite_task_store.cc opens the database, writes
// (the batch, cursors, queues, budgets) and reads one task;
// sqlite_task_store_lists.cc lists, counts and pages tasks;
// sqlite_task_store_batch.cc and sqlite_task_store_audit.cc hold the
// journal of a batch and the audit trail.
#ifndef BATON_STORE_TASK_ROWS_H_
#define BATON_STORE_TASK_ROWS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "baton/core/task.h"
#include "baton/store/sqlite_handle.h"
#include "baton/util/result.h"

namespace baton {

// The columns of a task row, in the order BindTask binds and ReadRow reads.
inline constexpr std::string_view kTaskColumns =
    "seq, id, kind, number, owner, label, shell_command, argv, cwd, "
    "env_overrides, timeout_ms, status, detail, exit_code, signal, pid, "
    "created_ms, started_ms, ended_ms, kill_reason, end_seen, "
    "notice_delivered, output_path, extra";

// Excludes pending tasks from a query: they are merged from memory. By seq,
// the rowid, which every index holds, so the check needs no table lookup.
inline constexpr std::string_view kNotPending =
    "seq NOT IN (SELECT value FROM json_each(?2))";

// Error handler "replace": our own strings must not make dump() throw. The
// protocol is JSON, so text that is not UTF-8 cannot reach us anyway.
inline std::string ToJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Inserts a task, or updates every column but seq and id of an existing
// one (binds ?1.. as BindTask does).
const std::string& UpsertTaskSql();

// Binds `task` as row `seq`, in the order of kTaskColumns.
void BindTask(Statement& s, int64_t seq, const TaskRecord& task);

// The row under `s`, which selects kTaskColumns: its seq and task, or
// kCorrupt naming the database at `path` and what is wrong with the row.
Result<std::pair<int64_t, TaskRecord>> ReadRow(const Statement& s,
                                               const std::string& path);

// The remedy for a damaged database; `what` says what is wrong with it.
Error CorruptError(const std::string& path, std::string_view what);

}  // namespace baton

#endif  // BATON_STORE_TASK_ROWS_H_
