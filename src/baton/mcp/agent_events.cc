#include "baton/mcp/agent_events.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/ipc/event_text.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

using Json = nlohmann::json;

// The fields of an event these helpers read. An event whose fields have
// other types than these is skipped (DecodeObject checks them).
struct EventType {
  std::string type;
  template <class V>
  void Fields(V& v) {
    v("type", type);
  }
};
struct TextEvent {
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("text", text);
  }
};
struct ToolEvent {
  std::string name;
  template <class V>
  void Fields(V& v) {
    v("name", name);
  }
};

bool IsType(const Json& event, std::string_view type) {
  auto head = DecodeObject<EventType>(event, "event", false);
  return head && head->type == type;
}

}  // namespace

std::string LastAgentText(const std::vector<Json>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (!IsType(*it, "text"))
      continue;
    auto text = DecodeObject<TextEvent>(*it, "text event", false);
    return text ? text->text : "";
  }
  return "";
}

std::vector<std::string> ToolNamesUsed(const std::vector<Json>& events) {
  std::vector<std::string> names;
  for (const auto& event : events) {
    if (!IsType(event, "tool"))
      continue;
    auto tool = DecodeObject<ToolEvent>(event, "tool event", false);
    if (!tool || tool->name.empty())
      continue;
    if (std::find(names.begin(), names.end(), tool->name) == names.end())
      names.push_back(std::move(tool->name));
  }
  return names;
}

Json QuestionsJson(const std::vector<OpenQuestion>& questions) {
  Json out = Json::array();
  for (const auto& question : questions) {
    Json items = Json::array();
    for (const auto& item : question.items) {
      Json options = Json::array();
      for (const auto& option : item.options) {
        options.push_back(
            {{"label", option.label}, {"description", option.description}});
      }
      items.push_back({{"prompt", item.prompt},
                       {"header", item.header},
                       {"options", std::move(options)},
                       {"multi_select", item.multi_select}});
    }
    out.push_back({{"seq", question.seq}, {"items", std::move(items)}});
  }
  return out;
}

std::string PendingQuestionsText(std::string_view task_id,
                                 const std::vector<OpenQuestion>& questions) {
  if (questions.empty())
    return "";
  std::string text;
  for (const auto& question : questions)
    text += AskedItemsText(task_id, question.items);
  // An answer goes to the first open question, one string per item.
  size_t items = questions[0].items.size();
  std::string example;
  for (size_t i = 0; i < std::max<size_t>(items, 1); ++i)
    example += fmt::format("{}\"{}\"", i ? ", " : "", i ? "skip" : "1");
  text += fmt::format(
      "Answer with task_answer {{\"task_id\": \"{}\", \"answers\": [{}]}}: "
      "one string per item ({}), each an option number, a label, free text, "
      "or \"skip\".{}\n",
      task_id, example, std::max<size_t>(items, 1),
      questions.size() > 1 ? " An answer goes to the first open question."
                           : "");
  return text;
}

}  // namespace baton::mcp
