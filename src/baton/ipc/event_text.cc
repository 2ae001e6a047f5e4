#include "baton/ipc/event_text.h"

#include <fmt/format.h>

#include <cstdint>

namespace baton {
namespace {

using Json = nlohmann::json;

// The field `key` of `object` if it has that type, else empty.
std::string Str(const Json& object, std::string_view key) {
  if (!object.is_object())
    return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t Int(const Json& object, std::string_view key) {
  if (!object.is_object())
    return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

bool Bool(const Json& object, std::string_view key) {
  if (!object.is_object())
    return false;
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

const Json& Array(const Json& object, std::string_view key) {
  static const Json kEmpty = Json::array();
  if (!object.is_object())
    return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

// An item's options, one line each, numbered from 1.
void AppendOptionLines(const Json& item, std::string& text) {
  size_t n = 0;
  for (const auto& option : Array(item, "options")) {
    std::string description = Str(option, "description");
    text += fmt::format("  [{}] {}{}\n", ++n, Str(option, "label"),
                        description.empty() ? "" : " — " + description);
  }
}

// What an event says, for EventLine.
std::string EventBody(const Json& event, const std::string& type) {
  if (type == "text" || type == "note")
    return Str(event, "text");
  if (type == "tool")
    return Str(event, "name") + ": " + Str(event, "input");
  if (type == "session")
    return Str(event, "session_id");
  if (type == "result") {
    std::string text = Str(event, "text");
    return (Bool(event, "ok") ? "ok: " : "failed: ") + Str(event, "detail") +
           (text.empty() ? "" : " — " + text);
  }
  if (type == "error")
    return Str(event, "message");
  if (type == "question_withdrawn") {
    return fmt::format("question {}: {}", Int(event, "question"),
                       Str(event, "reason"));
  }
  if (type == "question") {
    std::string body;
    for (const auto& item : Array(event, "items")) {
      body += Str(item, "prompt");
      size_t n = 0;
      for (const auto& option : Array(item, "options"))
        body += fmt::format(" [{}] {}", ++n, Str(option, "label"));
    }
    return body;
  }
  Json rest = event.is_object() ? event : Json::object();
  rest.erase("seq");
  rest.erase("at");
  rest.erase("type");
  return rest.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string EventLine(const Json& event) {
  std::string type = Str(event, "type");
  return fmt::format("{:>4} {:<9} {}", Int(event, "seq"), type,
                     EventBody(event, type));
}

std::string TranscriptText(const Json& event) {
  std::string type = Str(event, "type");
  if (type == "text")
    return Str(event, "text") + "\n";
  if (type == "tool") {
    std::string name = Str(event, "name");
    return fmt::format("> {}: {}\n", name.empty() ? "?" : name,
                       Str(event, "input"));
  }
  if (type == "question") {
    std::string text;
    for (const auto& item : Array(event, "items")) {
      text += fmt::format("? {}\n", Str(item, "prompt"));
      AppendOptionLines(item, text);
    }
    return text;
  }
  if (type == "answer") {
    auto answers = event.find("answers");
    return fmt::format(
        "= answered: {}\n",
        answers == event.end()
            ? "null"
            : answers->dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  if (type == "question_withdrawn")
    return fmt::format("= withdrawn: {}\n", Str(event, "reason"));
  if (type == "delivered")
    return fmt::format("< followup (delivered): {}\n", Str(event, "text"));
  if (type == "message") {
    return fmt::format("< {} ({}): {}\n", Str(event, "mode"),
                       Str(event, "delivery"), Str(event, "text"));
  }
  if (type == "result") {
    return Bool(event, "ok")
               ? fmt::format("[result] {}\n", Str(event, "text"))
               : fmt::format("[failed] {}\n", Str(event, "detail"));
  }
  if (type == "error")
    return fmt::format("[error] {}\n", Str(event, "message"));
  if (type == "note")
    return fmt::format("[note] {}\n", Str(event, "text"));
  return "";
}

std::string AskedItemsText(std::string_view asker,
                           const std::vector<QuestionItem>& items) {
  std::string text;
  for (const QuestionItem& item : items) {
    text += fmt::format("{} asks{}: {}\n", asker,
                        item.header.empty() ? "" : " (" + item.header + ")",
                        item.prompt);
    size_t n = 0;
    for (const QuestionOption& option : item.options) {
      text += fmt::format(
          "  [{}] {}{}\n", ++n, option.label,
          option.description.empty() ? "" : " — " + option.description);
    }
    if (item.multi_select)
      text += "  (several may be chosen: separate them with commas)\n";
  }
  return text;
}

}  // namespace baton
