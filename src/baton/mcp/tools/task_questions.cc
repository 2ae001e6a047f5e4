// The `task_questions` tool: every open question of this session's agent
// tasks and of the workers they started (their sub-workers, at any depth),
// oldest first, each with the chain of tasks that asked it
// (doc/agents.md, "Questions of a tree of agents").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "baton/mcp/agent_events.h"
#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

void HandleTaskQuestions(const ToolCallPtr& call) {
  if (auto none = ParseArguments<NoArguments>(call->arguments()); !none)
    return call->Finish(ToolResult::Error(none.error().message));
  call->Daemon(QuestionsRequest{}, [call](Result<QuestionsReply> reply) {
    if (!reply)
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
    Json questions = Json::array();
    std::string text;
    for (const TreeQuestion& asked : reply->questions) {
      Json question = QuestionsJson({asked.question});
      Json entry = {{"task_id", asked.task},
                    {"label", asked.label},
                    {"agent", asked.agent},
                    {"chain", asked.chain},
                    {"asked_at", asked.question.at},
                    {"question", question.empty() ? Json(nullptr)
                                                  : std::move(question[0])}};
      questions.push_back(std::move(entry));
      text +=
          fmt::format("{} asked ({}{}), at {}:\n", asked.task,
                      fmt::join(asked.chain, " > "),
                      asked.chain.size() > 1 ? ": a worker's sub-worker" : "",
                      asked.question.at);
      text += PendingQuestionsText(asked.task, {asked.question});
    }
    if (questions.empty())
      text = "no open questions\n";
    call->Finish(
        {std::move(text), {{"questions", std::move(questions)}}, false});
  });
}

}  // namespace

ToolDefinition TaskQuestionsToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_questions";
  tool.title = "List every open question";
  tool.description =
      "Every open question of your agent tasks and of the workers they "
      "started themselves (sub-workers, at any depth), oldest first, each "
      "with its chain of tasks (agent-1 > agent-4: agent-4 was started by "
      "your agent-1) and its numbered options. Answer any of them with "
      "task_answer, a sub-worker's too.";
  tool.input_schema = ArgumentSchema<NoArguments>();
  Json entry = {
      {"type", "object"},
      {"properties",
       {{"task_id", {{"type", "string"}, {"description", "the asking task"}}},
        {"label", {{"type", "string"}}},
        {"agent", {{"type", "string"}}},
        {"chain",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"description",
           "from your own task down to the asking one, each started by the "
           "one before"}}},
        {"asked_at", {{"type", "string"}, {"description", "ISO 8601 UTC"}}},
        {"question",
         {{"type", "object"},
          {"description", "seq and items, as task_output's questions"}}}}},
      {"required", {"task_id", "chain", "question"}}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"questions",
         {{"type", "array"},
          {"items", std::move(entry)},
          {"description", "oldest first"}}}}},
      {"required", {"questions"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskQuestions;
  return tool;
}

}  // namespace baton::mcp
