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

struct TaskAnswerArguments {
  TaskIdArgument task;
  std::vector<std::string> answers;
  template <class V>
  void Fields(V& v) {
    task.Fields(v);
    v("answers", answers,
      {.required = true,
       .non_empty = true,
       .max_bytes = kMaxTextBytes,
       .max_items = kMaxAnswers,
       .doc = "One answer per item of the question, in order: an option's "
              "number (\"2\"), several for a multi-select (\"1,3\"), an "
              "option's label, free text, or \"skip\"",
       .example = "[\"2\"]"});
  }
};

void HandleTaskAnswer(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskAnswerArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  std::string id = args->task.task_id;
  AnswerRequest request{.task = id, .answers = std::move(args->answers)};
  call->Daemon(request, [call, id](Result<AnswerReply> reply) {
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
  tool.input_schema = ArgumentSchema<TaskAnswerArguments>();
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
