#include "baton/agent/adapter.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "baton/agent/acp_adapter.h"
#include "baton/agent/claude_adapter.h"
#include "baton/agent/codex_adapter.h"
#include "baton/agent/codex_exec_adapter.h"
#include "baton/agent/command_adapter.h"
#include "baton/util/json_fields.h"

namespace baton {

std::optional<Json> ParseStreamLine(std::string_view line, std::string_view who,
                                    AdapterSink& sink) {
  auto parsed = ParseJson(line, {.max_depth = kMaxStreamLineDepth});
  if (!parsed || !parsed->value.is_object()) {
    sink.Emit({{"type", "error"},
               {"message", fmt::format("unreadable line from {}: {}: {}", who,
                                       parsed ? "not a JSON object"
                                              : parsed.error().message,
                                       line.substr(0, 200))}});
    return std::nullopt;
  }
  Json message = std::move(parsed->value);
  return message;
}

std::unique_ptr<AgentAdapter> MakeAdapter(AdapterKind kind) {
  switch (kind) {
    case AdapterKind::kClaude:
      return std::make_unique<ClaudeAdapter>();
    case AdapterKind::kCodex:
      return std::make_unique<CodexAdapter>();
    case AdapterKind::kCodexExec:
      return std::make_unique<CodexExecAdapter>();
    case AdapterKind::kAcp:
      return std::make_unique<AcpAdapter>();
    case AdapterKind::kCommand:
      return std::make_unique<CommandAdapter>();
  }
  return std::make_unique<CommandAdapter>();  // Not reached.
}

std::string ToLine(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace);
}

int64_t UsageTally::CountAt(const Json& object, std::string_view key) {
  return std::clamp<int64_t>(IntAt(object, key), 0, kMaxUsageCount);
}

int64_t UsageTally::AddCounts(int64_t a, int64_t b) {
  return std::min(kMaxUsageCount, a + b);  // Both are in [0, kMaxUsageCount].
}

void UsageTally::Report(AdapterSink& sink) {
  if (totals_ == reported_)
    return;
  reported_ = totals_;
  Json event = {{"type", "usage"},
                {"input_tokens", totals_.input_tokens},
                {"output_tokens", totals_.output_tokens},
                {"turns", totals_.turns}};
  if (totals_.cost_usd)
    event["cost_usd"] = *totals_.cost_usd;
  sink.Emit(std::move(event));
}

std::string ShortToolInput(const Json& input, size_t max) {
  std::string text;
  if (input.is_object()) {
    for (const char* key : {"command", "file_path", "path", "pattern", "url",
                            "query", "description"}) {
      if (auto it = input.find(key); it != input.end() && it->is_string()) {
        text = it->get<std::string>();
        break;
      }
    }
  }
  if (text.empty()) {
    text = input.is_string()
               ? input.get<std::string>()
               : input.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  }
  if (text.size() > max)
    text = text.substr(0, max - 3) + "...";
  return text;
}

Json AskItem(const Json& question, bool multi_select) {
  Json options = Json::array();
  for (const auto& option : ArrayAt(question, "options")) {
    options.push_back({{"label", StringAt(option, "label")},
                       {"description", StringAt(option, "description")}});
  }
  return {{"prompt", StringAt(question, "question")},
          {"header", StringAt(question, "header")},
          {"options", std::move(options)},
          {"multi_select", multi_select}};
}

}  // namespace baton
