// The `task_status` tool: a non-consuming look at one task (status, detail,
// label, cwd, times, output size, the last lines of its output).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "baton/mcp/agent_events.h"
#include "baton/mcp/output_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/unique_fd.h"

namespace baton::mcp {
namespace {

constexpr size_t kLastLines = 10;
constexpr uint64_t kTailBytes = 4096;

// The last lines of the log, read straight from its file (the daemon's
// task object names it and its size); "" when unreadable.
std::string TailOfLog(const std::string& path, uint64_t size) {
  if (path.empty() || size == 0)
    return "";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return "";
  uint64_t from = size > kTailBytes ? size - kTailBytes : 0;
  std::string data(size - from, '\0');
  ssize_t n =
      ::pread(fd.get(), data.data(), data.size(), static_cast<off_t>(from));
  if (n <= 0)
    return "";
  data.resize(static_cast<size_t>(n));
  if (from > 0) {
    // Drop the partial first line.
    size_t nl = data.find('\n');
    data.erase(0, nl == std::string::npos ? 0 : nl + 1);
  }
  return LastLines(data, kLastLines);
}

Json OrNull(const Json& task, const char* key) {
  auto it = task.find(key);
  return it == task.end() ? Json(nullptr) : *it;
}

// An agent task's last text, tools used and pending questions, in `text`
// and `structured`.
void AddAgentFacts(const std::string& id, const Json& events, std::string& text,
                   Json& structured) {
  std::string said = LastAgentText(events);
  std::vector<std::string> tools = ToolNamesUsed(events);
  Json pending = PendingQuestions(events);
  if (!said.empty()) {
    text += "last text:\n" + said;
    if (text.back() != '\n')
      text += '\n';
  }
  std::string names;
  for (const auto& name : tools)
    names += (names.empty() ? "" : ", ") + name;
  text += fmt::format("tools used: {}\n", names.empty() ? "none" : names);
  text += PendingQuestionsText(id, pending);
  structured["last_text"] = said;
  structured["tools_used"] = tools;
  structured["pending_questions"] = std::move(pending);
}

void HandleTaskStatus(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(args, {"task_id"}); !known)
    return call->Finish(ToolResult::Error(known.error().message));
  auto id = RequiredString(args, "task_id", "\"shell-1\"");
  if (!id)
    return call->Finish(ToolResult::Error(id.error().message));
  call->Daemon("get", {{"task", *id}}, [call](Result<Json> reply) {
    if (!reply)
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
    Json task = reply->value("task", Json::object());
    uint64_t size = static_cast<uint64_t>(IntField(task, "output_bytes"));
    std::string last = TailOfLog(StringField(task, "output_path"), size);
    Json structured = TaskSummary(task);
    for (const char* key : {"signal", "created_at", "started_at", "ended_at",
                            "duration_ms", "timeout_ms", "kill_reason"}) {
      structured[key] = OrNull(task, key);
    }
    structured["cwd"] = StringField(task, "cwd");
    structured["output_bytes"] = size;
    structured["last_lines"] = last;
    std::string text = fmt::format(
        "{}: {}\ncommand: {}\ncwd: {}\n", TaskName(task), StatusLine(task),
        StringField(task, "command"), StringField(task, "cwd"));
    text += fmt::format("created: {}", StringField(task, "created_at"));
    if (auto started = StringField(task, "started_at"); !started.empty())
      text += ", started: " + started;
    if (auto ended = StringField(task, "ended_at"); !ended.empty())
      text += ", ended: " + ended;
    if (auto ms = IntField(task, "duration_ms", -1); ms >= 0)
      text += fmt::format(" ({:.1f}s)", static_cast<double>(ms) / 1000.0);
    text += fmt::format(
        "\noutput: {} bytes (this look consumes nothing; task_output reads "
        "it)\n",
        size);
    if (!last.empty()) {
      text += "last lines:\n" + last;
      if (text.back() != '\n')
        text += '\n';
    }
    if (StringField(task, "kind") != "agent")
      return call->Finish({std::move(text), std::move(structured), false});
    // An agent task: what it said last, the tools it used, its questions.
    std::string id = StringField(task, "id");
    call->Daemon(
        "events", {{"task", id}, {"after", 0}},
        [call, id, text = std::move(text),
         structured = std::move(structured)](Result<Json> events) mutable {
          if (!events) {
            text += "events: " + DaemonErrorText(events.error()) + "\n";
            return call->Finish(
                {std::move(text), std::move(structured), false});
          }
          AddAgentFacts(id, events->value("events", Json::array()), text,
                        structured);
          call->Finish({std::move(text), std::move(structured), false});
        });
  });
}

}  // namespace

ToolDefinition TaskStatusToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_status";
  tool.title = "Look at one task";
  tool.description =
      "A quick, non-consuming look at one task: status, how it ended, "
      "label, command, cwd, times, output size and the last lines of its "
      "output; for an agent task also its last text, the tools it used and "
      "its pending questions. Does not move your read position (task_output "
      "does).";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {{"task_id",
         {{"type", "string"}, {"description", "The task id, e.g. shell-1"}}}}},
      {"required", {"task_id"}},
      {"additionalProperties", false},
  };
  Json output = TaskSummarySchema();
  auto& props = output["properties"];
  props["signal"] = NullableString("the signal that ended it, e.g. SIGKILL");
  props["created_at"] = NullableString("ISO 8601 UTC");
  props["started_at"] = NullableString("ISO 8601 UTC");
  props["ended_at"] = NullableString("ISO 8601 UTC");
  props["duration_ms"] = NullableInteger("ended - started");
  props["timeout_ms"] = NullableInteger("its time limit");
  props["kill_reason"] = NullableString("why it was killed");
  props["cwd"] = {{"type", "string"}};
  props["output_bytes"] = {{"type", "integer"}};
  props["last_lines"] = {
      {"type", "string"},
      {"description", "the last lines of its output (up to 10)"}};
  props["last_text"] = {
      {"type", "string"},
      {"description", "agent tasks: the last text the agent wrote"}};
  props["tools_used"] = {
      {"type", "array"},
      {"items", {{"type", "string"}}},
      {"description", "agent tasks: the tools it used, in order of first use"}};
  props["pending_questions"] = PendingQuestionsSchema();
  output["required"] = {"task_id", "status", "output_bytes", "last_lines"};
  tool.output_schema = std::move(output);
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskStatus;
  return tool;
}

}  // namespace baton::mcp
