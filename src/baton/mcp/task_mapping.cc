#include "baton/mcp/task_mapping.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/mcp/json_rpc.h"
#include "baton/mcp/output_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/clock.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

std::string ItemField(size_t index) {
  return fmt::format("answer_{}", index + 1);
}

// The option number (from 1) of `label`, or 0.
size_t OptionNumber(const QuestionItem& item, std::string_view label) {
  for (size_t i = 0; i < item.options.size(); ++i) {
    if (item.options[i].label == label)
      return i + 1;
  }
  return 0;
}

Result<std::string> ItemAnswer(const QuestionItem& item, const Json& value,
                               const std::string& field) {
  auto bad_label = [&](std::string_view label) {
    std::string labels;
    for (const auto& option : item.options)
      labels += (labels.empty() ? "" : ", ") + option.label;
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}': \"{}\" is not one of the options ({})",
                                 field, label, labels));
  };
  if (const auto* text = value.get_ptr<const std::string*>()) {
    if (text->empty())
      return std::string("skip");
    if (item.options.empty())
      return *text;
    size_t number = OptionNumber(item, *text);
    if (number == 0)
      return bad_label(*text);
    return std::to_string(number);
  }
  if (value.is_array() && !item.options.empty()) {
    std::string numbers;
    for (const auto& label : value) {
      const auto* text = label.get_ptr<const std::string*>();
      if (!text)
        return bad_label(label.dump());
      size_t number = OptionNumber(item, *text);
      if (number == 0)
        return bad_label(*text);
      numbers += (numbers.empty() ? "" : ",") + std::to_string(number);
    }
    return numbers.empty() ? std::string("skip") : numbers;
  }
  return MakeError(
      ErrorCode::kInvalidArgument,
      fmt::format("'{}' must be {} (got {})", field,
                  item.multi_select ? "a list of option labels" : "a string",
                  value.dump()));
}

}  // namespace

std::string_view McpTaskStatus(TaskStatus status) {
  switch (status) {
    case TaskStatus::kQueued:
    case TaskStatus::kRunning:
    case TaskStatus::kStopping:
      return "working";
    case TaskStatus::kWaiting:
      return "input_required";
    case TaskStatus::kCompleted:
    case TaskStatus::kFailed:
      return "completed";
    case TaskStatus::kKilled:
      return "cancelled";
    case TaskStatus::kInterrupted:
      return "failed";
  }
  return "failed";
}

Json McpTask(const TaskRecord& task) {
  int64_t updated = std::max({task.created_ms, task.started_ms, task.ended_ms});
  std::string message = std::string(TaskStatusName(task.status));
  if (!task.detail.empty())
    message += ": " + task.detail;
  return {{"taskId", task.id.ToString()},
          {"status", McpTaskStatus(task.status)},
          {"statusMessage", std::move(message)},
          {"createdAt", FormatIsoTime(task.created_ms)},
          {"lastUpdatedAt", FormatIsoTime(updated)},
          {"ttlMs", nullptr},
          {"pollIntervalMs", kTaskPollIntervalMs}};
}

std::string QuestionKey(int64_t seq) {
  return fmt::format("q{}", seq);
}

Json QuestionForm(const TaskRecord& task, const OpenQuestion& question) {
  Json properties = Json::object();
  std::string message = fmt::format("{} asks:", TaskName(task));
  for (size_t i = 0; i < question.items.size(); ++i) {
    const QuestionItem& item = question.items[i];
    Json field = {
        {"title",
         item.header.empty() ? fmt::format("Question {}", i + 1) : item.header},
        {"description", item.prompt}};
    Json labels = Json::array();
    for (const auto& option : item.options)
      labels.push_back(option.label);
    if (item.options.empty()) {
      field["type"] = "string";
    } else if (item.multi_select) {
      field["type"] = "array";
      field["items"] = {{"type", "string"}, {"enum", labels}};
    } else {
      field["type"] = "string";
      field["enum"] = labels;
    }
    properties[ItemField(i)] = std::move(field);
    message += "\n" + item.prompt;
    for (size_t k = 0; k < item.options.size(); ++k) {
      const QuestionOption& option = item.options[k];
      message += fmt::format("\n  {}. {}", k + 1, option.label);
      if (!option.description.empty())
        message += " - " + option.description;
    }
  }
  return {{"method", "elicitation/create"},
          {"params",
           {{"mode", "form"},
            {"message", std::move(message)},
            {"requestedSchema",
             {{"type", "object"}, {"properties", std::move(properties)}}}}}};
}

Json InputRequests(const TaskView& view) {
  Json requests = Json::object();
  for (const auto& question : view.questions)
    requests[QuestionKey(question.seq)] = QuestionForm(view.task, question);
  return requests;
}

Result<std::vector<std::string>> AnswersFromElicitation(
    const OpenQuestion& question, const Json& response) {
  std::vector<std::string> answers(question.items.size(), "skip");
  const Json* action = Member(response, "action");
  const auto* action_text =
      action ? action->get_ptr<const std::string*>() : nullptr;
  if (!action_text) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "an elicitation result needs 'action' (\"accept\", "
                     "\"decline\" or \"cancel\")");
  }
  if (*action_text != "accept")
    return answers;  // The person chose not to answer: skip every item.
  const Json* content = Member(response, "content");
  for (size_t i = 0; i < question.items.size(); ++i) {
    std::string field = ItemField(i);
    const Json* value = content ? Member(*content, field) : nullptr;
    if (!value || value->is_null())
      continue;
    auto answer = ItemAnswer(question.items[i], *value, field);
    if (!answer)
      return std::unexpected(answer.error());
    answers[i] = std::move(*answer);
  }
  return answers;
}

Json EndedToolResult(const TaskView& view, std::string_view output_tail,
                     Json structured) {
  const TaskRecord& task = view.task;
  std::string text = fmt::format("{} {}\n", TaskName(task), StatusLine(task));
  if (!output_tail.empty()) {
    text += "Last lines of its output:\n";
    text += output_tail;
    if (text.back() != '\n')
      text += '\n';
  }
  if (!structured.is_object())
    structured = Json::object();
  structured["output_tail"] = output_tail;
  if (task.evidence) {
    text += EndEvidenceText(task);
    structured["evidence"] = EvidenceJson(*task.evidence);
  }
  return {{"content", Json::array({{{"type", "text"}, {"text", text}}})},
          {"structuredContent", std::move(structured)},
          {"isError", task.status != TaskStatus::kCompleted}};
}

Json DetailedTask(const TaskView& view, const Json& tool_result) {
  Json task = McpTask(view.task);
  switch (view.task.status) {
    case TaskStatus::kWaiting:
      task["inputRequests"] = InputRequests(view);
      break;
    case TaskStatus::kCompleted:
    case TaskStatus::kFailed:
      task["result"] = tool_result;
      break;
    case TaskStatus::kInterrupted:
      task["error"] = {
          {"code", kInternalError},
          {"message",
           fmt::format("baton lost the task and cannot tell how it ended: {}",
                       view.task.detail)}};
      break;
    default:
      break;
  }
  return task;
}

}  // namespace baton::mcp
