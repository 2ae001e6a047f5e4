#include "baton/ipc/event_text.h"

#include <fmt/format.h>

#include <cstdint>

#include "baton/util/json_fields.h"

namespace baton {
namespace {

// An item's options, one line each, numbered from 1.
void AppendOptionLines(const Json& item, std::string& text) {
  size_t n = 0;
  for (const auto& option : ArrayAt(item, "options")) {
    std::string description = StringAt(option, "description");
    text += fmt::format("  [{}] {}{}\n", ++n, StringAt(option, "label"),
                        description.empty() ? "" : " — " + description);
  }
}

// What an event says, for EventLine.
std::string EventBody(const Json& event, const std::string& type) {
  if (type == "text" || type == "note")
    return StringAt(event, "text");
  if (type == "tool")
    return StringAt(event, "name") + ": " + StringAt(event, "input");
  if (type == "session")
    return StringAt(event, "session_id");
  if (type == "result") {
    std::string text = StringAt(event, "text");
    return (BoolAt(event, "ok") ? "ok: " : "failed: ") +
           StringAt(event, "detail") + (text.empty() ? "" : " — " + text);
  }
  if (type == "error")
    return StringAt(event, "message");
  if (type == "question_withdrawn") {
    return fmt::format("question {}: {}", IntAt(event, "question"),
                       StringAt(event, "reason"));
  }
  if (type == "question") {
    std::string body;
    for (const auto& item : ArrayAt(event, "items")) {
      body += StringAt(item, "prompt");
      size_t n = 0;
      for (const auto& option : ArrayAt(item, "options"))
        body += fmt::format(" [{}] {}", ++n, StringAt(option, "label"));
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
  std::string type = StringAt(event, "type");
  return fmt::format("{:>4} {:<9} {}", IntAt(event, "seq"), type,
                     EventBody(event, type));
}

std::string AnswersText(const Json& answers) {
  // A string as it is, anything else as JSON (never a throw).
  auto word = [](const Json& value) -> std::string {
    if (const auto* text = value.get_ptr<const std::string*>())
      return *text;
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  auto one = [&](const Json& answer) -> std::string {
    if (answer == "skip")
      return "skipped";
    if (!answer.is_array())
      return word(answer);
    std::string chosen;
    for (const Json& label : answer)
      chosen += (chosen.empty() ? "" : ", ") + word(label);
    return chosen;
  };
  if (!answers.is_array())
    return answers.is_null() ? "" : one(answers);
  std::string text;
  for (const Json& answer : answers)
    text += (text.empty() ? "" : "; ") + one(answer);
  return text;
}

std::string TranscriptText(const Json& event) {
  std::string type = StringAt(event, "type");
  if (type == "text")
    return StringAt(event, "text") + "\n";
  if (type == "tool") {
    std::string name = StringAt(event, "name");
    return fmt::format("> {}: {}\n", name.empty() ? "?" : name,
                       StringAt(event, "input"));
  }
  if (type == "question") {
    std::string text;
    for (const auto& item : ArrayAt(event, "items")) {
      text += fmt::format("? {}\n", StringAt(item, "prompt"));
      AppendOptionLines(item, text);
    }
    return text;
  }
  if (type == "answer")
    return "= answered: " + AnswersText(MemberAt(event, "answers")) + "\n";
  if (type == "question_withdrawn")
    return fmt::format("= withdrawn: {}\n", StringAt(event, "reason"));
  if (type == "delivered")
    return fmt::format("< followup (delivered): {}\n", StringAt(event, "text"));
  if (type == "message_replaced") {
    return fmt::format("< followup {} (replaced, queued): {}\n",
                       StringAt(event, "id"), StringAt(event, "text"));
  }
  if (type == "message_withdrawn")
    return fmt::format("< followup {} (withdrawn)\n", StringAt(event, "id"));
  if (type == "message") {
    return fmt::format("< {} ({}): {}\n", StringAt(event, "mode"),
                       StringAt(event, "delivery"), StringAt(event, "text"));
  }
  if (type == "result") {
    return BoolAt(event, "ok")
               ? fmt::format("[result] {}\n", StringAt(event, "text"))
               : fmt::format("[failed] {}\n", StringAt(event, "detail"));
  }
  if (type == "error")
    return fmt::format("[error] {}\n", StringAt(event, "message"));
  if (type == "note")
    return fmt::format("[note] {}\n", StringAt(event, "text"));
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
