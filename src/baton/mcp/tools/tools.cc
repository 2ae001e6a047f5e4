#include "baton/mcp/tools/tools.h"

#include <fmt/format.h>

namespace baton::mcp {

const std::vector<ToolDefinition>& AllTools() {
  static const std::vector<ToolDefinition> tools = {
      RunToolDefinition(),        TaskOutputToolDefinition(),
      TaskStatusToolDefinition(), TaskListToolDefinition(),
      TaskKillToolDefinition(),
  };
  return tools;
}

Json NullableString(std::string_view description) {
  return {{"type", {"string", "null"}}, {"description", description}};
}

Json NullableInteger(std::string_view description) {
  return {{"type", {"integer", "null"}}, {"description", description}};
}

Json TaskSummary(const Json& task) {
  auto exit_code = task.find("exit_code");
  return {
      {"task_id", StringField(task, "id")},
      {"kind", StringField(task, "kind")},
      {"status", StringField(task, "status")},
      {"detail", StringField(task, "detail")},
      {"exit_code", exit_code != task.end() && exit_code->is_number_integer()
                        ? *exit_code
                        : Json(nullptr)},
      {"label", StringField(task, "label")},
      {"command", StringField(task, "command")},
  };
}

Json TaskSummarySchema() {
  return {
      {"type", "object"},
      {"properties",
       {
           {"task_id", {{"type", "string"}, {"description", "e.g. shell-1"}}},
           {"kind", {{"type", "string"}, {"description", "shell or agent"}}},
           {"status",
            {{"type", "string"},
             {"description",
              "queued, running, waiting, stopping, or the terminal "
              "completed, failed, killed, interrupted"}}},
           {"detail",
            {{"type", "string"},
             {"description",
              "how it ended: 'exit code: 3', 'signal: SIGSEGV', 'killed: "
              "<reason>', 'timed out after 30s'; empty while running"}}},
           {"exit_code", NullableInteger("the exit code once it exited")},
           {"label", {{"type", "string"}}},
           {"command", {{"type", "string"}}},
       }},
      {"required", {"task_id", "status"}},
  };
}

std::string TaskName(const Json& task) {
  std::string id = StringField(task, "id");
  std::string label = StringField(task, "label");
  return label.empty() ? id : fmt::format("{} ({})", id, label);
}

std::string DaemonErrorText(const Error& error) {
  std::string text =
      fmt::format("{}: {}", ErrorCodeName(error.code), error.message);
  // The daemon's messages name CLI verbs; say what to do here too.
  if (error.code == ErrorCode::kNotFound ||
      error.code == ErrorCode::kPermissionDenied) {
    text += " (task_list shows the tasks of this session)";
  }
  return text;
}

}  // namespace baton::mcp
