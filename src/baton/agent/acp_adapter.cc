#include "baton/agent/acp_adapter.h"

#include <fmt/format.h>

#include <filesystem>
#include <random>

#include "baton/agent/json_rpc_util.h"
#include "baton/core/model_spec.h"
#include "baton/util/version.h"

namespace baton {
namespace {

// For responses to ids we did not make: the method, guessed from the result.
std::string MethodOfAcpResult(const Json& result) {
  if (!result.is_object())
    return "";
  if (result.contains("agentCapabilities") ||
      result.contains("protocolVersion")) {
    return "initialize";
  }
  if (result.contains("stopReason"))
    return "session/prompt";
  if (result.contains("sessionId"))
    return "session/new";
  return "";
}

std::string AcpErrorText(const Json& error) {
  std::string message = StringAt(error, "message");
  if (message.empty())
    return error.dump();
  // Agents put the useful part (e.g. "Session not found") in data.
  if (auto data = error.find("data"); data != error.end() && !data->is_null())
    message +=
        ": " + (data->is_string() ? data->get<std::string>() : data->dump());
  return message;
}

std::string OptionDescription(const std::string& kind) {
  if (kind == "allow_once")
    return "allow this time";
  if (kind == "allow_always")
    return "allow from now on";
  if (kind == "reject_once")
    return "refuse this time";
  if (kind == "reject_always")
    return "refuse from now on";
  return kind;
}

// The tool event for a tool_call or its first tool_call_update.
Json ToolEvent(const Json& call) {
  std::string name = StringAt(call, "kind");
  std::string input = StringAt(call, "title");
  if (input.empty() && call.contains("rawInput"))
    input = ShortToolInput(call["rawInput"]);
  if (input.empty()) {
    for (const auto& location : ArrayAt(call, "locations")) {
      input = StringAt(location, "path");
      break;
    }
  }
  return {{"type", "tool"},
          {"name", name.empty() ? "tool" : name},
          {"input", ShortToolInput(input)}};
}

Json Notification(std::string_view method, Json params) {
  return {
      {"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

Json Response(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

}  // namespace

AcpAdapter::AcpAdapter() {
  std::random_device random;
  prefix_ = RequestIdPrefix();
}

std::vector<std::string> AcpAdapter::Argv(
    const std::vector<std::string>& command, const AgentSpec& spec) const {
  std::vector<std::string> argv = command;
  // ACP v1 has no standard way to pick a model; Gemini CLI takes `-m` next
  // to --acp (observed), as does its fork Qwen Code. Others keep their own
  // default; effort has no flag.
  if (!spec.model.empty() && !command.empty()) {
    std::string program = std::filesystem::path(command[0]).filename();
    if (program == "gemini" || program == "qwen") {
      if (auto model = ParseModelSpec(spec.model)) {
        argv.push_back("-m");
        argv.push_back(model->model);
      }
    }
  }
  return argv;
}

void AcpAdapter::Request(std::string_view method, Json params,
                         AdapterSink& sink) {
  std::string id = fmt::format("{}#{}.{}", method, prefix_, next_request_++);
  sink.WriteLine(ToLine(Json{{"jsonrpc", "2.0"},
                             {"id", id},
                             {"method", method},
                             {"params", std::move(params)}}));
}

void AcpAdapter::Begin(const AgentSpec& spec, const std::string& cwd,
                       AdapterSink& sink) {
  brief_ = spec.brief;
  cwd_ = cwd;
  resume_session_ = spec.resume_session;
  Request("initialize",
          {{"protocolVersion", 1},
           {"clientCapabilities",
            {{"fs", {{"readTextFile", false}, {"writeTextFile", false}}},
             {"terminal", false}}},
           {"clientInfo", {{"name", "baton"}, {"version", kBatonVersion}}}},
          sink);
}

void AcpAdapter::OnLine(std::string_view line, AdapterSink& sink) {
  auto parsed = ParseStreamLine(line, "the agent", sink);
  if (!parsed)
    return;
  Json& message = *parsed;
  bool has_id = message.contains("id") && !message["id"].is_null();
  if (message.contains("method") && message["method"].is_string()) {
    if (has_id) {
      OnServerRequest(message, sink);
    } else if (message["method"] == "session/update") {
      OnUpdate(ObjectAt(ObjectAt(message, "params"), "update"), sink);
    }
    // Other notifications (extensions) are ignored.
  } else if (has_id &&
             (message.contains("result") || message.contains("error"))) {
    OnResponse(message, sink);
  }
}

void AcpAdapter::SetSession(const std::string& session_id, AdapterSink& sink) {
  if (session_id.empty() || session_id == session_id_)
    return;
  session_id_ = session_id;
  sink.Emit({{"type", "session"}, {"session_id", session_id_}});
}

void AcpAdapter::Prompt(std::string_view text, AdapterSink& sink) {
  prompt_running_ = true;
  Request("session/prompt",
          {{"sessionId", session_id_},
           {"prompt", Json::array({{{"type", "text"}, {"text", text}}})}},
          sink);
}

void AcpAdapter::OnResponse(const Json& message, AdapterSink& sink) {
  std::string method = MethodOfId(message["id"]);
  const Json& result = MemberAt(message, "result");
  if (method.empty()) {
    method = MethodOfAcpResult(result);
    if (load_phase_ == LoadPhase::kLoading &&
        (method.empty() || method == "session/new")) {
      method = "session/load";  // Its result may be null, {} or like new's.
    }
  }
  if (message.contains("error")) {
    std::string error = AcpErrorText(message["error"]);
    if (method == "session/prompt") {
      FlushText(sink);
      WithdrawAsked("the prompt failed", sink);
      sink.Emit({{"type", "error"}, {"message", error}});
      sink.Emit({{"type", "result"},
                 {"ok", false},
                 {"text", last_text_},
                 {"detail", error}});
      verdict_ = {TaskStatus::kFailed, error};
      prompt_running_ = false;
      last_text_.clear();
      sink.TurnEnded();
    } else if (method == "session/load") {
      Fail(fmt::format("resume of {} failed: {}", resume_session_, error),
           sink);
    } else if (session_id_.empty()) {
      // initialize or session/new: nothing can run without a session.
      Fail(error, sink);
    } else {
      sink.Emit({{"type", "error"}, {"message", error}});
    }
    return;
  }
  if (method == "initialize") {
    if (session_requested_)
      return;
    session_requested_ = true;
    if (resume_session_.empty()) {
      Request("session/new", {{"cwd", cwd_}, {"mcpServers", Json::array()}},
              sink);
      return;
    }
    const Json& capabilities = ObjectAt(result, "agentCapabilities");
    if (!BoolAt(capabilities, "loadSession")) {
      Fail("resume not supported by this agent", sink);
      return;
    }
    load_phase_ = LoadPhase::kLoading;
    Request("session/load",
            {{"sessionId", resume_session_},
             {"cwd", cwd_},
             {"mcpServers", Json::array()}},
            sink);
  } else if (method == "session/new" || method == "session/load") {
    if (method == "session/load") {
      load_phase_ = LoadPhase::kAnswered;
      SetSession(resume_session_, sink);
    } else {
      SetSession(StringAt(result, "sessionId"), sink);
    }
    if (!session_id_.empty() && !first_prompt_sent_) {
      first_prompt_sent_ = true;
      Prompt(brief_, sink);
    }
  } else if (method == "session/prompt") {
    OnPromptResult(result, sink);
  }
}

void AcpAdapter::OnServerRequest(const Json& message, AdapterSink& sink) {
  std::string method = message["method"];
  const Json& id = message["id"];
  if (method != "session/request_permission") {
    // This client offers no fs/* or terminal/* (it said so in initialize);
    // answer anything we do not serve so the agent never waits on us.
    sink.WriteLine(
        ToLine(Json{{"jsonrpc", "2.0"},
                    {"id", id},
                    {"error",
                     {{"code", -32601},
                      {"message", fmt::format("Method not found: {} is not "
                                              "offered by baton",
                                              method)}}}}));
    return;
  }
  // A request belongs to the running prompt: any replay is over.
  load_phase_ = LoadPhase::kNone;
  FlushText(sink);
  const Json& params = ObjectAt(message, "params");
  const Json& call = ObjectAt(params, "toolCall");
  std::string what = StringAt(call, "title");
  if (what.empty())
    what = StringAt(ToolEvent(call), "input");
  Json options = Json::array();
  Json ids = Json::array();
  Json kinds = Json::array();
  for (const auto& option : ArrayAt(params, "options")) {
    std::string kind = StringAt(option, "kind");
    options.push_back({{"label", StringAt(option, "name")},
                       {"description", OptionDescription(kind)}});
    ids.push_back(MemberAt(option, "optionId"));
    kinds.push_back(kind);
  }
  std::string kind = StringAt(call, "kind");
  Json question = {
      {"type", "question"},
      {"ref", id},
      {"kind", "permission"},
      {"items",
       Json::array({{{"prompt",
                      what.empty()
                          ? std::string("Allow the tool call?")
                          : fmt::format("Allow {}{}?",
                                        kind.empty() ? "" : kind + ": ", what)},
                     {"header", "Permission"},
                     {"options", options},
                     {"multi_select", false}}})},
      {"option_ids", ids},
      {"option_kinds", kinds}};
  pending_permissions_[id.dump()] = {
      {"id", id}, {"tool_call_id", StringAt(call, "toolCallId")}};
  asked_[id.dump()] = pending_permissions_[id.dump()];
  sink.Emit(std::move(question));
}

void AcpAdapter::OnUpdate(const Json& update, AdapterSink& sink) {
  std::string kind = StringAt(update, "sessionUpdate");
  switch (load_phase_) {
    case LoadPhase::kLoading:
      return;  // The replay of a loaded session's history.
    case LoadPhase::kAnswered:
      // A replay starts with a user message; the new turn does not, unless
      // the agent echoes our own prompt.
      if (kind == "user_message_chunk" &&
          StringAt(ObjectAt(update, "content"), "text") != brief_) {
        load_phase_ = LoadPhase::kLateReplay;
        return;
      }
      load_phase_ = LoadPhase::kNone;
      break;
    case LoadPhase::kLateReplay:
      // Gemini CLI announces its commands as it takes up a prompt; an echo
      // of our prompt marks the same point.
      if (kind == "available_commands_update" ||
          (kind == "user_message_chunk" &&
           StringAt(ObjectAt(update, "content"), "text") == brief_)) {
        load_phase_ = LoadPhase::kNone;
      }
      return;
    case LoadPhase::kNone:
      break;
  }
  if (kind == "agent_message_chunk") {
    const Json& content = ObjectAt(update, "content");
    std::string id = StringAt(update, "messageId");
    if (!id.empty() && id != message_id_) {
      FlushText(sink);
      message_id_ = id;
    }
    if (StringAt(content, "type") == "text")
      text_ += StringAt(content, "text");
  } else if (kind == "tool_call" || kind == "tool_call_update") {
    FlushText(sink);
    std::string id = StringAt(update, "toolCallId");
    // An asked-about tool may show up first as its final update.
    if (tools_seen_.insert(id).second)
      sink.Emit(ToolEvent(update));
    std::string status = StringAt(update, "status");
    if (status == "completed" || status == "failed") {
      auto of_this_call = [&](const auto& entry) {
        return StringAt(entry.second, "tool_call_id") == id;
      };
      std::erase_if(pending_permissions_, of_this_call);
      std::erase_if(asked_, of_this_call);
    }
  } else if (kind == "plan" || kind == "user_message_chunk") {
    FlushText(sink);
  }
  // Thoughts, commands, modes, usage and kinds added later: nothing to show.
}

void AcpAdapter::FlushText(AdapterSink& sink) {
  if (text_.empty())
    return;
  last_text_ = text_;
  sink.Emit({{"type", "text"}, {"text", text_}});
  text_.clear();
}

void AcpAdapter::OnPromptResult(const Json& result, AdapterSink& sink) {
  FlushText(sink);
  std::string stop = StringAt(result, "stopReason");
  bool ok = stop == "end_turn";
  std::string detail = stop;
  if (stop == "max_turn_requests")
    detail = "max-turns";
  else if (stop == "max_tokens")
    detail = "max-tokens";
  else if (stop.empty())
    detail = "no stop reason";
  WithdrawAsked(fmt::format("the turn ended ({})", detail), sink);
  Json event = {
      {"type", "result"}, {"ok", ok}, {"text", last_text_}, {"detail", detail}};
  // This prompt turn's usage, where the agent reports it.
  if (result.contains("usage")) {
    const Json& usage = ObjectAt(result, "usage");  // claude-agent-acp
    event["usage"] = result["usage"];
    tally_.Add(UsageTally::CountAt(usage, "inputTokens"),
               UsageTally::CountAt(usage, "outputTokens"));
    tally_.Add(UsageTally::CountAt(usage, "cachedReadTokens"), 0);
    tally_.Add(UsageTally::CountAt(usage, "cachedWriteTokens"), 0);
  } else if (const Json& quota = ObjectAt(ObjectAt(result, "_meta"), "quota");
             quota.contains("token_count")) {
    const Json& count = ObjectAt(quota, "token_count");  // Gemini CLI
    event["usage"] = quota["token_count"];
    tally_.Add(UsageTally::CountAt(count, "input_tokens"),
               UsageTally::CountAt(count, "output_tokens"));
  }
  ++tally_.totals().turns;
  tally_.Report(sink);
  sink.Emit(std::move(event));
  verdict_ = {ok ? TaskStatus::kCompleted : TaskStatus::kFailed, detail};
  prompt_running_ = false;
  load_phase_ = LoadPhase::kNone;
  last_text_.clear();
  message_id_.clear();
  pending_permissions_.clear();  // The turn is over; they are moot.
  sink.TurnEnded();
}

void AcpAdapter::WithdrawAsked(const std::string& why, AdapterSink& sink) {
  for (const auto& [key, asked] : asked_) {
    sink.Emit({{"type", "question_withdrawn"},
               {"ref", asked["id"]},
               {"reason", why}});
  }
  asked_.clear();
}

void AcpAdapter::Fail(const std::string& detail, AdapterSink& sink) {
  sink.Emit({{"type", "error"}, {"message", detail}});
  verdict_ = {TaskStatus::kFailed, detail};
  prompt_running_ = false;
  // Nothing will follow: let the runtime close stdin so the agent exits.
  sink.TurnEnded();
}

Status AcpAdapter::Send(std::string_view message, SendMode mode,
                        AdapterSink& sink) {
  if (mode == SendMode::kSteer) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "ACP agents cannot take a message into a running turn; "
                     "send it as a follow-up");
  }
  if (session_id_.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the agent has no session to continue");
  }
  verdict_.reset();
  Prompt(message, sink);
  return {};
}

Status AcpAdapter::Answer(const Json& question,
                          const std::vector<ItemAnswer>& answers,
                          AdapterSink& sink) {
  if (!question.contains("ref")) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the question has no request id");
  }
  const Json& ref = question["ref"];
  const Json& ids = ArrayAt(question, "option_ids");
  const Json& kinds = ArrayAt(question, "option_kinds");
  Json options = Json::array();
  if (const Json items = ArrayAt(question, "items");
      items.is_array() && !items.empty()) {
    options = ArrayAt(items[0], "options");
  }
  Json chosen;
  if (!answers.empty() && !answers[0].skipped) {
    if (!answers[0].labels.empty()) {
      for (size_t i = 0; i < options.size() && i < ids.size(); ++i) {
        if (StringAt(options[i], "label") == answers[0].labels[0])
          chosen = ids[i];
      }
    } else if (!answers[0].text.empty()) {
      // ACP cannot carry free text: a written answer refuses once.
      for (size_t i = 0; i < kinds.size() && i < ids.size(); ++i) {
        if (kinds[i] == "reject_once" && chosen.is_null())
          chosen = ids[i];
      }
    }
  }
  Json outcome = chosen.is_null()
                     ? Json{{"outcome", "cancelled"}}
                     : Json{{"outcome", "selected"}, {"optionId", chosen}};
  sink.WriteLine(ToLine(Response(ref, {{"outcome", outcome}})));
  pending_permissions_.erase(ref.dump());
  return {};
}

void AcpAdapter::Interrupt(AdapterSink& sink) {
  if (!prompt_running_ || session_id_.empty())
    return;
  sink.WriteLine(
      ToLine(Notification("session/cancel", {{"sessionId", session_id_}})));
  // The spec: the client answers its pending permission requests with
  // "cancelled" once it has sent session/cancel.
  for (const auto& [key, pending] : pending_permissions_) {
    sink.WriteLine(ToLine(
        Response(pending["id"], {{"outcome", {{"outcome", "cancelled"}}}})));
  }
  pending_permissions_.clear();
}

}  // namespace baton
