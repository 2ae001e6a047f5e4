#include "baton/agent/claude_adapter.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/core/model_spec.h"
#include "baton/util/json_fields.h"

namespace baton {
namespace {

Json UserLine(std::string_view text) {
  return {{"type", "user"},
          {"message", {{"role", "user"}, {"content", text}}},
          {"parent_tool_use_id", nullptr},
          {"session_id", ""}};
}

// Claude's --effort takes these; off and minimal have no flag.
bool ClaudeEffort(const std::string& effort) {
  return effort == "low" || effort == "medium" || effort == "high" ||
         effort == "xhigh" || effort == "max";
}

}  // namespace

std::vector<std::string> ClaudeAdapter::Argv(
    const std::vector<std::string>& command, const AgentSpec& spec) const {
  std::vector<std::string> argv = command;
  for (const char* flag :
       {"-p", "--output-format", "stream-json", "--input-format", "stream-json",
        "--verbose", "--permission-prompt-tool", "stdio"}) {
    argv.push_back(flag);
  }
  if (!spec.model.empty()) {
    if (auto model = ParseModelSpec(spec.model)) {
      argv.push_back("--model");
      argv.push_back(model->model);
      if (model->effort && ClaudeEffort(*model->effort)) {
        argv.push_back("--effort");
        argv.push_back(*model->effort);
      }
    }
  }
  if (!spec.resume_session.empty()) {
    argv.push_back("--resume");
    argv.push_back(spec.resume_session);
  }
  return argv;
}

void ClaudeAdapter::Begin(const AgentSpec& spec, const std::string&,
                          AdapterSink& sink) {
  sink.WriteLine(ToLine(UserLine(spec.brief)));
}

void ClaudeAdapter::OnLine(std::string_view line, AdapterSink& sink) {
  auto parsed = ParseStreamLine(line, "claude", sink);
  if (!parsed)
    return;
  Json& message = *parsed;
  std::string type = StringAt(message, "type");
  if (auto sid = message.find("session_id");
      sid != message.end() && sid->is_string() && !sid->empty() &&
      *sid != session_id_) {
    session_id_ = sid->get<std::string>();
    sink.Emit({{"type", "session"}, {"session_id", session_id_}});
  }
  if (type == "assistant") {
    OnAssistantUsage(message, sink);
    const Json& content = ArrayAt(ObjectAt(message, "message"), "content");
    for (const auto& block : content) {
      std::string kind = StringAt(block, "type");
      if (kind == "text" && !StringAt(block, "text").empty()) {
        sink.Emit({{"type", "text"}, {"text", block["text"]}});
      } else if (kind == "tool_use") {
        sink.Emit({{"type", "tool"},
                   {"name", StringAt(block, "name", "?")},
                   {"input", ShortToolInput(MemberAt(block, "input"))}});
      }
    }
  } else if (type == "control_request") {
    OnControlRequest(message, sink);
  } else if (type == "control_cancel_request") {
    // Claude withdrew its own can_use_tool request (an interrupt while it
    // asked): the question is moot.
    if (auto id = message.find("request_id");
        id != message.end() && id->is_string() && !id->empty()) {
      sink.Emit({{"type", "question_withdrawn"},
                 {"ref", *id},
                 {"reason", "claude withdrew its request"}});
    }
  } else if (type == "result") {
    OnResult(message, sink);
  }
  // Everything else (system, user echoes, control_response, stream_event,
  // types added later) carries nothing a director needs.
}

void ClaudeAdapter::OnControlRequest(const Json& message, AdapterSink& sink) {
  const Json& request = ObjectAt(message, "request");
  if (StringAt(request, "subtype") != "can_use_tool")
    return;
  std::string tool = StringAt(request, "tool_name", "?");
  Json input = ObjectAt(request, "input");
  Json question = {{"type", "question"},
                   {"ref", StringAt(message, "request_id")},
                   {"tool", tool},
                   {"input", input}};
  Json items = Json::array();
  if (tool == "AskUserQuestion") {
    question["kind"] = "ask";
    for (const auto& q : ArrayAt(input, "questions"))
      items.push_back(AskItem(q, BoolAt(q, "multiSelect")));
  } else {
    question["kind"] = "permission";
    items.push_back(
        {{"prompt", fmt::format("Allow {}: {}?", tool, ShortToolInput(input))},
         {"header", "Permission"},
         {"options",
          Json::array({{{"label", "Allow"}, {"description", "run it"}},
                       {{"label", "Deny"}, {"description", "refuse it"}}})},
         {"multi_select", false}});
  }
  question["items"] = items;
  sink.Emit(std::move(question));
}

namespace {

// Input tokens of every kind: fresh, written to the cache, read from it.
int64_t AllInput(const Json& usage) {
  return UsageTally::AddCounts(
      UsageTally::CountAt(usage, "input_tokens"),
      UsageTally::AddCounts(
          UsageTally::CountAt(usage, "cache_creation_input_tokens"),
          UsageTally::CountAt(usage, "cache_read_input_tokens")));
}

}  // namespace

// Each model reply's usage, live: the CLI writes a reply's content blocks
// as lines of their own with the same message id, and a later line may
// carry larger counts.
void ClaudeAdapter::OnAssistantUsage(const Json& message, AdapterSink& sink) {
  const Json& reply = ObjectAt(message, "message");
  std::string id = StringAt(reply, "id");
  if (id.empty())
    return;
  const Json& usage = ObjectAt(reply, "usage");
  auto& [input, output] = replies_[id];
  input = std::max(input, AllInput(usage));
  output = std::max(output, UsageTally::CountAt(usage, "output_tokens"));
  AgentUsage& totals = usage_.totals();
  totals = settled_;
  for (const auto& [_, counts] : replies_)
    usage_.Add(counts.first, counts.second);
  totals.turns = UsageTally::AddCounts(totals.turns,
                                       static_cast<int64_t>(replies_.size()));
  usage_.Report(sink);
}

void ClaudeAdapter::OnResult(const Json& message, AdapterSink& sink) {
  std::string subtype = StringAt(message, "subtype");
  bool ok = subtype == "success" && !BoolAt(message, "is_error");
  std::string detail;
  if (ok) {
    detail = fmt::format("turn ended ({} turns)", IntAt(message, "num_turns"));
  } else if (subtype == "error_max_turns") {
    detail = "max-turns";
  } else if (subtype == "error_max_budget_usd") {
    detail = "max-budget";
  } else {
    std::string errors;
    for (const auto& e : ArrayAt(message, "errors")) {
      if (e.is_string())
        errors += (errors.empty() ? "" : "; ") + e.get<std::string>();
    }
    detail = errors.empty() ? subtype : errors;
  }
  Json result = {{"type", "result"},
                 {"ok", ok},
                 {"text", StringAt(message, "result")},
                 {"detail", detail}};
  if (message.contains("total_cost_usd")) {
    result["cost_usd"] = message["total_cost_usd"];
  }
  if (message.contains("usage"))
    result["usage"] = message["usage"];
  // The settled figures: `modelUsage` and `total_cost_usd` count the whole
  // process (every turn so far), `usage` and `num_turns` this turn only
  // (transcript claude-followup).
  AgentUsage& totals = usage_.totals();
  totals = settled_;
  if (const Json& models = ObjectAt(message, "modelUsage"); !models.empty()) {
    totals.input_tokens = totals.output_tokens = 0;
    for (const auto& [_, model] : models.items()) {
      usage_.Add(UsageTally::CountAt(model, "inputTokens"),
                 UsageTally::CountAt(model, "outputTokens"));
      usage_.Add(UsageTally::CountAt(model, "cacheReadInputTokens"), 0);
      usage_.Add(UsageTally::CountAt(model, "cacheCreationInputTokens"), 0);
    }
  } else {
    const Json& usage = ObjectAt(message, "usage");
    usage_.Add(AllInput(usage), UsageTally::CountAt(usage, "output_tokens"));
  }
  totals.turns = UsageTally::AddCounts(
      totals.turns, message.contains("num_turns")
                        ? UsageTally::CountAt(message, "num_turns")
                        : static_cast<int64_t>(replies_.size()));
  if (auto cost = message.find("total_cost_usd"); cost != message.end()) {
    double dollars = 0;
    if (DecodeValue(*cost, dollars, {}, "total_cost_usd"))
      totals.cost_usd = std::max(0.0, dollars);
  }
  settled_ = totals;
  replies_.clear();
  usage_.Report(sink);
  sink.Emit(std::move(result));
  verdict_ = {ok ? TaskStatus::kCompleted : TaskStatus::kFailed, detail};
  sink.TurnEnded();
}

Status ClaudeAdapter::Send(std::string_view message, SendMode,
                           AdapterSink& sink) {
  // A user line mid-turn is folded into the running turn (a steer); between
  // turns it starts the next one (a follow-up). The runtime decides when.
  verdict_.reset();
  sink.WriteLine(ToLine(UserLine(message)));
  return {};
}

Status ClaudeAdapter::Answer(const Json& question,
                             const std::vector<ItemAnswer>& answers,
                             AdapterSink& sink) {
  Json input = ObjectAt(question, "input");
  Json decision;
  if (StringAt(question, "kind") == "permission") {
    bool allow = !answers.empty() && !answers[0].skipped &&
                 !answers[0].labels.empty() && answers[0].labels[0] == "Allow";
    decision =
        allow
            ? Json{{"behavior", "allow"}, {"updatedInput", input}}
            : Json{{"behavior", "deny"},
                   {"message", answers.empty() || answers[0].skipped
                                   ? "The user skipped the request."
                               : answers[0].text.empty() ? "The user denied it."
                                                         : answers[0].text},
                   {"interrupt", false}};
  } else {
    Json chosen = Json::object();
    const Json& items = ArrayAt(question, "items");
    for (size_t i = 0; i < items.size() && i < answers.size(); ++i) {
      if (answers[i].skipped)
        continue;
      std::string value = answers[i].text;
      if (!answers[i].labels.empty()) {
        value.clear();
        for (const auto& label : answers[i].labels) {
          value += (value.empty() ? "" : ", ") + label;
        }
      }
      chosen[StringAt(items[i], "prompt")] = value;
    }
    if (chosen.empty()) {
      decision = {{"behavior", "deny"},
                  {"message", "The user skipped the question."},
                  {"interrupt", false}};
    } else {
      input["answers"] = chosen;
      decision = {{"behavior", "allow"}, {"updatedInput", input}};
    }
  }
  sink.WriteLine(ToLine(Json{{"type", "control_response"},
                             {"response",
                              {{"subtype", "success"},
                               {"request_id", StringAt(question, "ref")},
                               {"response", decision}}}}));
  return {};
}

void ClaudeAdapter::Interrupt(AdapterSink& sink) {
  sink.WriteLine(
      ToLine(Json{{"type", "control_request"},
                  {"request_id", fmt::format("baton_int_{}", next_request_++)},
                  {"request", {{"subtype", "interrupt"}}}}));
}

}  // namespace baton
