// The task row: what the store writes of a task and how it reads it back
// (task_rows.h).
#include "baton/store/task_rows.h"

#include <fmt/format.h>

#include "baton/core/task_extra.h"
#include "baton/util/json_fields.h"

namespace baton {
namespace {

std::optional<int> OptionalInt(const Statement& s, int column) {
  auto value = s.ColumnOptionalInt(column);
  if (!value)
    return std::nullopt;
  return static_cast<int>(*value);
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

}  // namespace

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

Error CorruptError(const std::string& path, std::string_view what) {
  return Error{ErrorCode::kCorrupt,
               fmt::format("database {} is corrupt ({}); move it aside (baton "
                           "keeps it untouched) and start again",
                           path, what)};
}

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

}  // namespace baton
