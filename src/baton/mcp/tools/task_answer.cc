// The `task_answer` tool: answers an agent task's open question, one string
// per item (option number, label, free text, or "skip"); the first answer
// wins.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

// An item's recorded answer as text: "Postgres", "A, B", "skip", or text.
std::string AnswerText(const Json& answer) {
  if (const auto* text = answer.get_ptr<const std::string*>())
    return *text;
  std::string text;
  if (answer.is_array()) {
    for (const auto& label : answer) {
      const auto* name = label.get_ptr<const std::string*>();
      text += (text.empty() ? "" : ", ") + (name ? *name : label.dump());
    }
  }
  return text;
}

void HandleTaskAnswer(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(args, {"task_id", "answers"}); !known)
    return call->Finish(ToolResult::Error(known.error().message));
  auto id = RequiredString(args, "task_id", "\"agent-1\"");
  if (!id)
    return call->Finish(ToolResult::Error(id.error().message));
  const Json* given = FindArgument(args, "answers");
  auto answers = given ? NonEmptyStrings(*given) : std::nullopt;
  if (!answers || answers->empty()) {
    return call->Finish(ToolResult::Error(fmt::format(
        "argument 'answers' must be a list with one non-empty string per "
        "question item: an option number, its label, free text, or \"skip\", "
        "e.g. {{\"answers\": [\"2\"]}} (got {})",
        given ? given->dump() : "nothing")));
  }
  AnswerRequest request{.task = *id, .answers = std::move(*answers)};
  call->Daemon(request, [call, id = *id](Result<AnswerReply> reply) {
    if (!reply) {
      return call->Finish(
          ToolResult::Error(DaemonErrorText(reply.error()) +
                            " (task_status shows its pending questions)"));
    }
    const Answered& answered = reply->answered;
    Json texts = Json::array();
    std::string text = fmt::format("{}: answered", id);
    for (size_t i = 0; i < answered.answers.size(); ++i) {
      std::string answer = AnswerText(answered.answers[i]);
      text += fmt::format("{} {}", i ? ";" : "", answer);
      texts.push_back(std::move(answer));
    }
    text +=
        "\nIt goes on working; task_output with wait: true returns when it "
        "ends or asks again.\n";
    call->Finish({std::move(text),
                  {{"task_id", id},
                   {"question_seq", answered.question},
                   {"answered", std::move(texts)}},
                  false});
  });
}

}  // namespace

ToolDefinition TaskAnswerToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_answer";
  tool.title = "Answer an agent task's question";
  tool.description =
      "Answer the open question of a waiting agent task (task_output and "
      "task_status show it): one string per question item, each an option "
      "number (\"2\"), an option label, free text, or \"skip\"; several "
      "options of a multi-select item separated by commas. The first answer "
      "wins: a late one is refused with \"no open question\".";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id",
            {{"type", "string"},
             {"description", "The agent task id, e.g. agent-1"}}},
           {"answers",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"minItems", 1},
             {"description",
              "One per question item, e.g. [\"2\"] or [\"Postgres\", "
              "\"skip\"]"}}},
       }},
      {"required", {"task_id", "answers"}},
      {"additionalProperties", false},
  };
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id", {{"type", "string"}}},
           {"question_seq",
            {{"type", "integer"},
             {"description", "the seq of the question event answered"}}},
           {"answered",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description",
              "per item, what was answered: the chosen labels (comma "
              "separated), the free text, or \"skip\""}}},
       }},
      {"required", {"task_id", "answered"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", false},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskAnswer;
  return tool;
}

}  // namespace baton::mcp
