#include "baton/mcp/agent_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "baton/ipc/event_text.h"

namespace baton::mcp {
namespace {

using Json = nlohmann::json;

std::string Str(const Json& object, std::string_view key) {
  if (!object.is_object())
    return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

bool IsType(const Json& event, std::string_view type) {
  return Str(event, "type") == type;
}

// A question's items, normalized to the documented shape.
Json Items(const Json& question) {
  Json items = Json::array();
  auto it = question.find("items");
  if (it == question.end() || !it->is_array())
    return items;
  for (const auto& item : *it) {
    Json options = Json::array();
    if (auto opts = item.find("options");
        item.is_object() && opts != item.end() && opts->is_array()) {
      for (const auto& option : *opts) {
        options.push_back({{"label", Str(option, "label")},
                           {"description", Str(option, "description")}});
      }
    }
    bool multi = false;
    if (item.is_object()) {
      auto m = item.find("multi_select");
      multi = m != item.end() && m->is_boolean() && m->get<bool>();
    }
    items.push_back({{"prompt", Str(item, "prompt")},
                     {"header", Str(item, "header")},
                     {"options", std::move(options)},
                     {"multi_select", multi}});
  }
  return items;
}

}  // namespace

Json PendingQuestions(const Json& events) {
  std::vector<const Json*> open;
  if (!events.is_array())
    return Json::array();
  for (const auto& event : events) {
    if (IsType(event, "question")) {
      open.push_back(&event);
    } else if (IsType(event, "answer")) {
      auto q = event.find("question");
      if (q != event.end() && q->is_number_integer()) {
        int64_t seq = q->get<int64_t>();
        std::erase_if(open, [seq](const Json* question) {
          auto s = question->find("seq");
          return s != question->end() && s->is_number_integer() &&
                 s->get<int64_t>() == seq;
        });
      } else {
        open.clear();
      }
    }
  }
  Json pending = Json::array();
  for (const Json* question : open) {
    auto seq = question->find("seq");
    pending.push_back(
        {{"seq",
          seq != question->end() && seq->is_number_integer() ? *seq : Json(0)},
         {"items", Items(*question)}});
  }
  return pending;
}

std::string LastAgentText(const Json& events) {
  if (!events.is_array())
    return "";
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (IsType(*it, "text"))
      return Str(*it, "text");
  }
  return "";
}

std::vector<std::string> ToolNamesUsed(const Json& events) {
  std::vector<std::string> names;
  if (!events.is_array())
    return names;
  for (const auto& event : events) {
    if (!IsType(event, "tool"))
      continue;
    std::string name = Str(event, "name");
    if (!name.empty() &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(std::move(name));
    }
  }
  return names;
}

std::string PendingQuestionsText(std::string_view task_id,
                                 const Json& pending) {
  if (!pending.is_array() || pending.empty())
    return "";
  std::string text;
  for (const auto& question : pending) {
    if (auto items = question.find("items"); items != question.end())
      text += AskedItemsText(task_id, *items);
  }
  // An answer goes to the first open question, one string per item.
  size_t items = pending[0].value("items", Json::array()).size();
  std::string example;
  for (size_t i = 0; i < std::max<size_t>(items, 1); ++i)
    example += fmt::format("{}\"{}\"", i ? ", " : "", i ? "skip" : "1");
  text += fmt::format(
      "Answer with task_answer {{\"task_id\": \"{}\", \"answers\": [{}]}}: "
      "one string per item ({}), each an option number, a label, free text, "
      "or \"skip\".{}\n",
      task_id, example, std::max<size_t>(items, 1),
      pending.size() > 1 ? " An answer goes to the first open question." : "");
  return text;
}

}  // namespace baton::mcp
