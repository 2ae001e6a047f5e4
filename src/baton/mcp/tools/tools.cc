#include "baton/mcp/tools/tools.h"

#include <fmt/format.h>

namespace baton::mcp {

namespace {

// Quotes a word for a POSIX shell only when it needs it.
std::string ShellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                           "VWXYZ0123456789-_./=:,+@%") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

}  // namespace

std::string WaitCommand(const ServerFacts& facts, const std::string& id) {
  std::string line;
  if (!facts.baton_home.empty())
    line = "BATON_HOME=" + ShellWord(facts.baton_home) + " ";
  line += fmt::format("{} --session {} wait {}", ShellWord(facts.baton_binary),
                      ShellWord(facts.session), ShellWord(id));
  return line;
}

const std::vector<ToolDefinition>& AllTools() {
  static const std::vector<ToolDefinition> tools = {
      RunToolDefinition(),        DelegateToolDefinition(),
      TaskOutputToolDefinition(), TaskStatusToolDefinition(),
      TaskListToolDefinition(),   TaskSendToolDefinition(),
      TaskAnswerToolDefinition(), TaskKillToolDefinition(),
  };
  return tools;
}

Json NullableString(std::string_view description) {
  return {{"type", {"string", "null"}}, {"description", description}};
}

Json NullableInteger(std::string_view description) {
  return {{"type", {"integer", "null"}}, {"description", description}};
}

Json TaskSummary(const TaskRecord& task) {
  return {
      {"task_id", task.id.ToString()},
      {"kind", TaskKindName(task.id.kind)},
      {"status", TaskStatusName(task.status)},
      {"detail", task.detail},
      {"exit_code", task.exit_code ? Json(*task.exit_code) : Json(nullptr)},
      {"label", task.spec.label},
      {"command", CommandText(task.spec)},
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

Json PendingQuestionsSchema() {
  Json option = {{"type", "object"},
                 {"properties",
                  {{"label", {{"type", "string"}}},
                   {"description", {{"type", "string"}}}}},
                 {"required", {"label"}}};
  Json item = {
      {"type", "object"},
      {"properties",
       {{"prompt", {{"type", "string"}}},
        {"header", {{"type", "string"}}},
        {"options",
         {{"type", "array"},
          {"items", std::move(option)},
          {"description", "answer with an option's number (from 1) or label"}}},
        {"multi_select", {{"type", "boolean"}}}}},
      {"required", {"prompt", "options"}}};
  return {
      {"type", "array"},
      {"description",
       "open questions of a waiting agent task, oldest first; "
       "task_answer answers the first, one string per item"},
      {"items",
       {{"type", "object"},
        {"properties",
         {{"seq",
           {{"type", "integer"}, {"description", "the question event's seq"}}},
          {"items", {{"type", "array"}, {"items", std::move(item)}}}}},
        {"required", {"seq", "items"}}}}};
}

std::string TaskName(const TaskRecord& task) {
  std::string id = task.id.ToString();
  const std::string& label = task.spec.label;
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
