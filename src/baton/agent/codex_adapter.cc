#include "baton/agent/codex_adapter.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "baton/agent/codex_config.h"
#include "baton/agent/json_rpc_util.h"
#include "baton/util/version.h"

namespace baton {
namespace {

Json TextInput(std::string_view text) {
  return Json::array(
      {{{"type", "text"}, {"text", text}, {"text_elements", Json::array()}}});
}

// For responses to ids we did not make (another client's transcript, or a
// future codex that rewrites ids): the method, guessed from the result.
std::string MethodOfCodexResult(const Json& result) {
  if (!result.is_object())
    return "";
  if (result.contains("userAgent"))
    return "initialize";
  if (result.contains("thread"))
    return "thread/start";
  if (result.contains("turn"))
    return "turn/start";
  if (result.contains("turnId"))
    return "turn/steer";
  return "";
}

std::string CodexErrorText(const Json& error) {
  std::string message = StringAt(error, "message");
  return message.empty() ? error.dump() : message;
}

// A tool event for an item, or null for items that are not tools.
Json CodexToolEvent(const Json& item, const std::string& cwd) {
  std::string type = StringAt(item, "type");
  std::string name;
  std::string input;
  if (type == "commandExecution") {
    name = "shell";
    // commandActions hold the command without the `/bin/bash -lc` wrapper.
    for (const auto& action : ArrayAt(item, "commandActions")) {
      std::string command = StringAt(action, "command");
      if (command.empty()) {
        input.clear();
        break;
      }
      input += (input.empty() ? "" : " && ") + command;
    }
    if (input.empty())
      input = StringAt(item, "command");
  } else if (type == "fileChange") {
    name = "edit";
    for (const auto& change : ArrayAt(item, "changes")) {
      input +=
          (input.empty() ? "" : ", ") + StripCwd(StringAt(change, "path"), cwd);
    }
  } else if (type == "mcpToolCall") {
    name =
        fmt::format("{}/{}", StringAt(item, "server"), StringAt(item, "tool"));
    input = ShortToolInput(MemberAt(item, "arguments"));
  } else if (type == "dynamicToolCall") {
    name = StringAt(item, "tool");
    input = ShortToolInput(MemberAt(item, "arguments"));
  } else if (type == "webSearch") {
    name = "web_search";
    input = StringAt(item, "query");
  } else {
    return nullptr;
  }
  return {{"type", "tool"},
          {"name", name.empty() ? type : name},
          {"input", ShortToolInput(input)}};
}

Json PermissionItem(std::string prompt) {
  return {{"prompt", std::move(prompt)},
          {"header", "Permission"},
          {"options",
           Json::array({{{"label", "Allow"}, {"description", "let it run"}},
                        {{"label", "Deny"}, {"description", "refuse it"}}})},
          {"multi_select", false}};
}

}  // namespace

CodexAdapter::CodexAdapter() {
  std::random_device random;
  prefix_ = RequestIdPrefix();
}

std::vector<std::string> CodexAdapter::Argv(
    const std::vector<std::string>& command, const AgentSpec& spec) const {
  std::vector<std::string> argv = command;
  for (std::string& arg : CodexModelOverrides(spec.model))
    argv.push_back(std::move(arg));
  // Lets codex ask the director (request_user_input, a question in baton)
  // outside plan mode; without it the tool answers "request_user_input is
  // unavailable in Default mode" (seen with codex 0.171.0).
  argv.push_back("-c");
  argv.push_back("features.default_mode_request_user_input=true");
  argv.push_back("app-server");
  return argv;
}

std::string CodexAdapter::Request(std::string_view method, Json params,
                                  AdapterSink& sink) {
  std::string id = fmt::format("{}#{}.{}", method, prefix_, next_request_++);
  sink.WriteLine(ToLine(
      Json{{"id", id}, {"method", method}, {"params", std::move(params)}}));
  return id;
}

void CodexAdapter::Begin(const AgentSpec& spec, const std::string& cwd,
                         AdapterSink& sink) {
  brief_ = spec.brief;
  cwd_ = cwd;
  resume_thread_ = spec.resume_session;
  // experimentalApi: turn/steer and item/tool/requestUserInput need it.
  Request(
      "initialize",
      {{"clientInfo",
        {{"name", "baton"}, {"title", "baton"}, {"version", kBatonVersion}}},
       {"capabilities",
        {{"experimentalApi", true}, {"requestAttestation", false}}}},
      sink);
}

void CodexAdapter::OnLine(std::string_view line, AdapterSink& sink) {
  auto parsed = ParseStreamLine(line, "codex", sink);
  if (!parsed)
    return;
  Json& message = *parsed;
  bool has_id = message.contains("id") && !message["id"].is_null();
  if (message.contains("method") && message["method"].is_string()) {
    if (has_id) {
      OnServerRequest(message, sink);
    } else {
      OnNotification(message, sink);
    }
  } else if (has_id &&
             (message.contains("result") || message.contains("error"))) {
    OnResponse(message, sink);
  }
}

void CodexAdapter::SetThread(const std::string& thread_id, AdapterSink& sink) {
  if (thread_id.empty() || thread_id == thread_id_)
    return;
  thread_id_ = thread_id;
  sink.Emit({{"type", "session"}, {"session_id", thread_id_}});
}

void CodexAdapter::SetTurn(const std::string& turn_id, AdapterSink& sink) {
  // A late turn/start response must not revive a turn that already ended.
  if (turn_id.empty() || turn_id == turn_id_ || done_turns_.contains(turn_id))
    return;
  turn_id_ = turn_id;
  turn_running_ = true;
  for (const auto& text : pending_steers_) {
    Request("turn/steer",
            {{"threadId", thread_id_},
             {"expectedTurnId", turn_id_},
             {"input", TextInput(text)}},
            sink);
  }
  pending_steers_.clear();
  if (interrupt_pending_) {
    interrupt_pending_ = false;
    Interrupt(sink);
  }
}

void CodexAdapter::StartTurn(std::string_view text, AdapterSink& sink) {
  turn_running_ = true;
  turn_id_.clear();
  Request("turn/start", {{"threadId", thread_id_}, {"input", TextInput(text)}},
          sink);
}

void CodexAdapter::OnResponse(const Json& message, AdapterSink& sink) {
  std::string method = MethodOfId(message["id"]);
  const Json& result = MemberAt(message, "result");
  if (method.empty())
    method = MethodOfCodexResult(result);
  if (message.contains("error")) {
    std::string error = CodexErrorText(message["error"]);
    if (method == "turn/start") {
      sink.Emit({{"type", "error"}, {"message", error}});
      sink.Emit(
          {{"type", "result"}, {"ok", false}, {"text", ""}, {"detail", error}});
      verdict_ = {TaskStatus::kFailed, error};
      turn_running_ = false;
      sink.TurnEnded();
    } else if (method == "turn/steer") {
      sink.Emit({{"type", "error"},
                 {"message", fmt::format("steer not delivered: {}", error)}});
    } else if (method == "thread/resume") {
      Fail(fmt::format("resume of {} failed: {}", resume_thread_, error), sink);
    } else if (thread_id_.empty()) {
      // initialize or thread/start: nothing can run without a thread.
      Fail(error, sink);
    } else {
      sink.Emit({{"type", "error"}, {"message", error}});
    }
    return;
  }
  if (method == "initialize") {
    if (thread_requested_)
      return;
    thread_requested_ = true;
    sink.WriteLine(ToLine(Json{{"method", "initialized"}}));
    Json params = {{"cwd", cwd_},
                   {"approvalPolicy", "on-request"},
                   {"sandbox", "workspace-write"}};
    if (resume_thread_.empty()) {
      Request("thread/start", std::move(params), sink);
    } else {
      params["threadId"] = resume_thread_;
      Request("thread/resume", std::move(params), sink);
    }
  } else if (method == "thread/start" || method == "thread/resume") {
    SetThread(StringAt(ObjectAt(result, "thread"), "id"), sink);
    if (!thread_id_.empty() && !first_turn_sent_) {
      first_turn_sent_ = true;
      StartTurn(brief_, sink);
    }
  } else if (method == "turn/start") {
    SetTurn(StringAt(ObjectAt(result, "turn"), "id"), sink);
  }
  // turn/steer ({turnId}) and turn/interrupt ({}) need nothing.
}

void CodexAdapter::OnServerRequest(const Json& message, AdapterSink& sink) {
  std::string method = message["method"];
  const Json& params = ObjectAt(message, "params");
  Json question = {
      {"type", "question"}, {"ref", message["id"]}, {"method", method}};
  if (method == "item/commandExecution/requestApproval") {
    std::string command = StringAt(params, "command");
    if (command.empty()) {
      auto it = items_.find(StringAt(params, "itemId"));
      if (it != items_.end())
        command = StringAt(it->second, "command");
    }
    std::string prompt = fmt::format("Allow command: {}?", command);
    if (std::string reason = StringAt(params, "reason"); !reason.empty())
      prompt += fmt::format(" ({})", reason);
    question["kind"] = "permission";
    question["items"] = Json::array({PermissionItem(prompt)});
    if (params.contains("availableDecisions"))
      question["available_decisions"] = params["availableDecisions"];
  } else if (method == "item/fileChange/requestApproval") {
    // The request names only the item; the paths came with item/started.
    std::string paths;
    auto it = items_.find(StringAt(params, "itemId"));
    if (it != items_.end()) {
      Json tool = CodexToolEvent(it->second, cwd_);
      if (tool.is_object())
        paths = StringAt(tool, "input");
    }
    std::string prompt = paths.empty() ? std::string("Allow a file change?")
                                       : fmt::format("Allow edit: {}?", paths);
    if (std::string reason = StringAt(params, "reason"); !reason.empty())
      prompt += fmt::format(" ({})", reason);
    question["kind"] = "permission";
    question["items"] = Json::array({PermissionItem(prompt)});
  } else if (method == "item/tool/requestUserInput") {
    Json items = Json::array();
    Json ids = Json::array();
    for (const auto& q : ArrayAt(params, "questions")) {
      items.push_back(AskItem(q, false));
      ids.push_back(StringAt(q, "id"));
    }
    question["kind"] = "ask";
    question["items"] = items;
    question["question_ids"] = ids;
  } else {
    // Never leave codex waiting on a request we cannot serve.
    sink.WriteLine(ToLine(Json{
        {"id", message["id"]},
        {"error",
         {{"code", -32601},
          {"message", fmt::format("baton does not handle {}", method)}}}}));
    return;
  }
  unresolved_[message["id"].dump()] = message["id"];
  sink.Emit(std::move(question));
}

void CodexAdapter::OnNotification(const Json& message, AdapterSink& sink) {
  std::string method = message["method"];
  const Json& params = ObjectAt(message, "params");
  if (method == "thread/started") {
    SetThread(StringAt(ObjectAt(params, "thread"), "id"), sink);
  } else if (method == "turn/started") {
    SetTurn(StringAt(ObjectAt(params, "turn"), "id"), sink);
  } else if (method == "item/started" || method == "item/completed") {
    OnItem(ObjectAt(params, "item"), method == "item/completed", sink);
  } else if (method == "turn/completed") {
    OnTurnCompleted(ObjectAt(params, "turn"), sink);
  } else if (method == "thread/tokenUsage/updated") {
    // The thread's totals so far; inputTokens counts cached input too.
    const Json& total = ObjectAt(ObjectAt(params, "tokenUsage"), "total");
    if (!total.empty()) {
      usage_ = total;
      tally_.totals().input_tokens = UsageTally::CountAt(total, "inputTokens");
      tally_.totals().output_tokens =
          UsageTally::CountAt(total, "outputTokens");
      tally_.Report(sink);
    }
  } else if (method == "serverRequest/resolved") {
    // Follows our answer, and also comes when codex drops a request nobody
    // answered (after an interrupt): then the question is withdrawn.
    if (auto it = params.find("requestId"); it != params.end()) {
      if (unresolved_.erase(it->dump()) > 0) {
        sink.Emit({{"type", "question_withdrawn"},
                   {"ref", *it},
                   {"reason", "codex resolved the request"}});
      }
    }
  } else if (method == "error") {
    std::string error = CodexErrorText(ObjectAt(params, "error"));
    if (BoolAt(params, "willRetry"))
      error += " (codex will retry)";
    sink.Emit({{"type", "error"}, {"message", error}});
  }
  // Deltas, status, rate limits, diffs, warnings and notifications added
  // later carry nothing a director needs.
}

void CodexAdapter::OnItem(const Json& item, bool completed, AdapterSink& sink) {
  std::string type = StringAt(item, "type");
  std::string id = StringAt(item, "id");
  if (type == "agentMessage") {
    // Deltas are not shown: the completed item carries the whole text.
    std::string text = StringAt(item, "text");
    if (completed && !text.empty()) {
      last_text_ = text;
      sink.Emit({{"type", "text"}, {"text", text}});
    }
    return;
  }
  Json tool = CodexToolEvent(item, cwd_);
  if (!tool.is_object())
    return;
  items_[id] = item;
  if (tools_seen_.insert(id).second)
    sink.Emit(std::move(tool));
}

void CodexAdapter::OnTurnCompleted(const Json& turn, AdapterSink& sink) {
  std::string id = StringAt(turn, "id");
  if (!id.empty())
    done_turns_.insert(id);
  std::string status = StringAt(turn, "status");
  std::string text = last_text_;
  for (const auto& item : ArrayAt(turn, "items")) {
    if (StringAt(item, "type") == "agentMessage" &&
        !StringAt(item, "text").empty()) {
      text = StringAt(item, "text");
    }
  }
  bool ok = status == "completed";
  std::string detail = "turn completed";
  if (status == "interrupted") {
    detail = "interrupted";
  } else if (!ok) {
    detail = CodexErrorText(ObjectAt(turn, "error"));
    if (detail == "{}")
      detail = status.empty() ? "turn failed" : status;
  }
  // Requests still open when the turn ends are moot (codex resolves them
  // only after turn/completed, transcript codex-app-interrupt-asking).
  for (const auto& [key, ref] : unresolved_) {
    sink.Emit({{"type", "question_withdrawn"},
               {"ref", ref},
               {"reason", fmt::format("the turn ended ({})", detail)}});
  }
  unresolved_.clear();
  Json result = {
      {"type", "result"}, {"ok", ok}, {"text", text}, {"detail", detail}};
  if (!usage_.is_null())
    result["usage"] = usage_;
  ++tally_.totals().turns;
  tally_.Report(sink);
  sink.Emit(std::move(result));
  verdict_ = {ok ? TaskStatus::kCompleted : TaskStatus::kFailed, detail};
  turn_running_ = false;
  turn_id_.clear();
  items_.clear();
  last_text_.clear();
  interrupt_pending_ = false;
  if (!pending_steers_.empty()) {
    sink.Emit({{"type", "error"},
               {"message", fmt::format("{} steer message(s) not delivered: "
                                       "the turn ended first",
                                       pending_steers_.size())}});
    pending_steers_.clear();
  }
  sink.TurnEnded();
}

void CodexAdapter::Fail(const std::string& detail, AdapterSink& sink) {
  sink.Emit({{"type", "error"}, {"message", detail}});
  verdict_ = {TaskStatus::kFailed, detail};
  turn_running_ = false;
  // Nothing will follow: let the runtime close stdin so codex exits.
  sink.TurnEnded();
}

Status CodexAdapter::Send(std::string_view message, SendMode mode,
                          AdapterSink& sink) {
  if (mode == SendMode::kSteer) {
    if (!turn_running_) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "codex is between turns: send it as a follow-up");
    }
    if (turn_id_.empty()) {
      // turn/start is not answered yet; steer as soon as the id is known.
      pending_steers_.emplace_back(message);
      return {};
    }
    Request("turn/steer",
            {{"threadId", thread_id_},
             {"expectedTurnId", turn_id_},
             {"input", TextInput(message)}},
            sink);
    return {};
  }
  if (thread_id_.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "codex has no thread to continue");
  }
  verdict_.reset();
  StartTurn(message, sink);
  return {};
}

Status CodexAdapter::Answer(const Json& question,
                            const std::vector<ItemAnswer>& answers,
                            AdapterSink& sink) {
  if (!question.contains("ref")) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the question has no request id");
  }
  std::string method = StringAt(question, "method");
  Json result;
  if (method == "item/tool/requestUserInput") {
    Json chosen = Json::object();
    const Json& ids = ArrayAt(question, "question_ids");
    for (size_t i = 0; i < ids.size() && i < answers.size(); ++i) {
      if (answers[i].skipped)
        continue;
      Json values = Json::array();
      for (const auto& label : answers[i].labels)
        values.push_back(label);
      if (values.empty() && !answers[i].text.empty())
        values.push_back(answers[i].text);  // isOther: free text.
      if (!values.empty())
        chosen[ids[i].get<std::string>()] = {{"answers", values}};
    }
    result = {{"answers", chosen}};
  } else {
    bool allow = !answers.empty() && !answers[0].skipped &&
                 !answers[0].labels.empty() && answers[0].labels[0] == "Allow";
    std::string decision = allow ? "accept" : "decline";
    // Codex does not always offer "decline" for commands (observed:
    // ["accept", {acceptWithExecpolicyAmendment}, "cancel"]); then a refusal
    // is "cancel", which also ends the turn.
    const Json offered = MemberAt(question, "available_decisions");
    auto offers = [&](const char* name) {
      return std::find(offered.begin(), offered.end(), Json(name)) !=
             offered.end();
    };
    if (!allow && offered.is_array() && !offers("decline") && offers("cancel"))
      decision = "cancel";
    result = {{"decision", decision}};
  }
  sink.WriteLine(ToLine(Json{{"id", question["ref"]}, {"result", result}}));
  return {};
}

void CodexAdapter::Interrupt(AdapterSink& sink) {
  if (!turn_running_)
    return;
  if (turn_id_.empty()) {
    interrupt_pending_ = true;  // Sent once turn/start tells the id.
    return;
  }
  Request("turn/interrupt", {{"threadId", thread_id_}, {"turnId", turn_id_}},
          sink);
}

std::string CodexAdapter::ExplainExit(std::string_view stderr_text) const {
  // A codex without app-server (too old, or a build without it) exits at
  // once with clap's usage error, before answering initialize.
  if (thread_id_.empty() &&
      stderr_text.find("unrecognized subcommand 'app-server'") !=
          std::string_view::npos) {
    return "this codex has no app-server (\"unrecognized subcommand "
           "'app-server'\"); run it through codex exec instead: baton "
           "delegate --agent codex-exec ...";
  }
  return "";
}

}  // namespace baton
