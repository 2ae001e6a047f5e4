#include "baton/agent/codex_exec_adapter.h"

#include <fmt/format.h>

#include "baton/agent/codex_config.h"
#include "baton/agent/json_rpc_util.h"

namespace baton {
namespace {

// codex puts the model API's raw response body in its error messages
// ({"error":{"message":...}}); the message inside reads better.
std::string ErrorMessage(const std::string& raw) {
  Json body = Json::parse(raw, nullptr, false);
  if (body.is_object()) {
    const Json& error = ObjectAt(body, "error");
    if (std::string message = StringAt(error, "message"); !message.empty())
      return message;
    if (std::string message = StringAt(body, "message"); !message.empty())
      return message;
  }
  return raw.empty() ? std::string("codex reported an error") : raw;
}

// "/bin/bash -lc 'echo hi'" -> "echo hi".
std::string UnwrapShell(std::string command) {
  for (const char* prefix : {"/bin/bash -lc '", "bash -lc '", "/bin/sh -c '"}) {
    std::string_view p(prefix);
    if (command.starts_with(p) && command.size() > p.size() &&
        command.back() == '\'') {
      return command.substr(p.size(), command.size() - p.size() - 1);
    }
  }
  return command;
}

}  // namespace

std::vector<std::string> CodexExecAdapter::Argv(
    const std::vector<std::string>& command, const AgentSpec& spec) const {
  std::vector<std::string> argv = command;
  for (std::string& arg : CodexModelOverrides(spec.model))
    argv.push_back(std::move(arg));
  argv.push_back("exec");
  if (!spec.resume_session.empty()) {
    argv.push_back("resume");
    argv.push_back(spec.resume_session);
  }
  for (const char* arg : {"--json", "--skip-git-repo-check", "-"})
    argv.push_back(arg);
  return argv;
}

void CodexExecAdapter::Begin(const AgentSpec&, const std::string& cwd,
                             AdapterSink&) {
  cwd_ = cwd;  // The brief is on stdin already: nothing to write.
}

void CodexExecAdapter::OnLine(std::string_view line, AdapterSink& sink) {
  auto parsed = ParseStreamLine(line, "codex exec", sink);
  if (!parsed)
    return;
  Json& message = *parsed;
  std::string type = StringAt(message, "type");
  if (type == "thread.started") {
    std::string id = StringAt(message, "thread_id");
    if (!id.empty() && id != thread_id_) {
      thread_id_ = id;
      sink.Emit({{"type", "session"}, {"session_id", id}});
    }
  } else if (type == "item.started" || type == "item.updated" ||
             type == "item.completed") {
    OnItem(ObjectAt(message, "item"), type == "item.completed", sink);
  } else if (type == "turn.completed") {
    Json result = {{"type", "result"},
                   {"ok", true},
                   {"text", last_text_},
                   {"detail", "turn completed"}};
    if (message.contains("usage"))
      result["usage"] = message["usage"];
    // One turn's usage; input_tokens counts cached input too.
    const Json& usage = ObjectAt(message, "usage");
    tally_.Add(UsageTally::CountAt(usage, "input_tokens"),
               UsageTally::CountAt(usage, "output_tokens"));
    ++tally_.totals().turns;
    tally_.Report(sink);
    sink.Emit(std::move(result));
    verdict_ = {TaskStatus::kCompleted, "turn completed"};
    sink.TurnEnded();
  } else if (type == "turn.failed") {
    std::string detail =
        ErrorMessage(StringAt(ObjectAt(message, "error"), "message"));
    ++tally_.totals().turns;
    tally_.Report(sink);
    sink.Emit({{"type", "result"},
               {"ok", false},
               {"text", last_text_},
               {"detail", detail}});
    verdict_ = {TaskStatus::kFailed, detail};
    sink.TurnEnded();
  } else if (type == "error") {
    sink.Emit({{"type", "error"},
               {"message", ErrorMessage(StringAt(message, "message"))}});
  }
  // turn.started and types added later carry nothing a director needs.
}

void CodexExecAdapter::OnItem(const Json& item, bool completed,
                              AdapterSink& sink) {
  std::string type = StringAt(item, "type");
  std::string id = StringAt(item, "id");
  if (type == "agent_message") {
    std::string text = StringAt(item, "text");
    if (completed && !text.empty()) {
      last_text_ = text;
      sink.Emit({{"type", "text"}, {"text", text}});
    }
    return;
  }
  if (type == "error") {
    if (completed)
      sink.Emit({{"type", "error"}, {"message", StringAt(item, "message")}});
    return;
  }
  std::string name;
  std::string input;
  if (type == "command_execution") {
    name = "shell";
    input = UnwrapShell(StringAt(item, "command"));
  } else if (type == "file_change") {
    name = "edit";
    for (const auto& change : ArrayAt(item, "changes")) {
      input += (input.empty() ? "" : ", ") +
               StripCwd(StringAt(change, "path"), cwd_);
    }
  } else if (type == "mcp_tool_call") {
    name =
        fmt::format("{}/{}", StringAt(item, "server"), StringAt(item, "tool"));
    input = ShortToolInput(MemberAt(item, "arguments"));
  } else if (type == "web_search") {
    name = "web_search";
    input = StringAt(item, "query");
  } else {
    return;  // reasoning, todo_list, and item types added later.
  }
  if (tools_seen_.insert(id).second) {
    sink.Emit(
        {{"type", "tool"}, {"name", name}, {"input", ShortToolInput(input)}});
  }
}

Status CodexExecAdapter::Send(std::string_view, SendMode, AdapterSink&) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "codex exec runs one prompt per process and takes no "
                   "messages; when this task ends, continue its thread in a "
                   "new task that resumes it (delegate with resume_from; "
                   "CLI: baton delegate --resume <this task> <message>)");
}

Status CodexExecAdapter::Answer(const Json&, const std::vector<ItemAnswer>&,
                                AdapterSink&) {
  return MakeError(ErrorCode::kInvalidArgument, "codex exec asks no questions");
}

}  // namespace baton
