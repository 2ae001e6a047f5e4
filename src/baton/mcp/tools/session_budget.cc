// The `session_budget` tool: this session's budget over all its agent
// tasks, and what they spent (doc/agents.md, "Session budgets"). With a
// limit it sets that one first (0 removes it); `clear` removes them all.
#include "baton/ipc/task_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

void HandleSessionBudget(const ToolCallPtr& call) {
  // The protocol's own request: its fields are the tool's arguments.
  auto request = ParseArguments<BudgetRequest>(call->arguments());
  if (!request)
    return call->Finish(ToolResult::Error(request.error().message));
  call->Daemon(*request, [call](Result<BudgetReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error()) +
                                            " (the budget is unchanged)"));
    }
    std::string text = SessionBudgetText(*reply);
    // The fields as BudgetReply lists them, read back as a value.
    Json structured = Json::object();
    if (auto parsed = ParseJson(EncodeObject(*reply)))
      structured = std::move(parsed->value);
    call->Finish({std::move(text), std::move(structured), false});
  });
}

}  // namespace

ToolDefinition SessionBudgetToolDefinition() {
  ToolDefinition tool;
  tool.name = "session_budget";
  tool.title = "Session budget";
  tool.description =
      "This session's budget over all its agent tasks together (delegate), "
      "and what they spent: tokens, turns, cost where the CLI reports one. "
      "Without arguments it only reads. A limit given sets it (0 removes "
      "it); once the session's usage reaches one, its working agents are "
      "stopped (killed, detail 'budget: session NAME's max-tokens N "
      "reached') and a new delegate is refused with budget_spent.";
  tool.input_schema = ArgumentSchema<BudgetRequest>();
  Json limit = {{"type", "object"},
                {"properties",
                 {{"max_turns", {{"type", "integer"}}},
                  {"max_tokens", {{"type", "integer"}}},
                  {"max_cost_usd", {{"type", "number"}}}}}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"session", {{"type", "string"}}},
        {"budget", limit},
        {"usage",
         {{"type", "object"},
          {"properties",
           {{"input_tokens", {{"type", "integer"}}},
            {"output_tokens", {{"type", "integer"}}},
            {"turns", {{"type", "integer"}}},
            {"cost_usd", {{"type", "number"}}}}}}},
        {"agent_tasks", {{"type", "integer"}}},
        {"reached",
         {{"type", "string"},
          {"description", "the budget reached, or \"\" while none is"}}}}},
      {"required", {"session", "budget", "usage", "agent_tasks", "reached"}},
  };
  // Lowering it may stop working agents: destructive, as task_kill is.
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleSessionBudget;
  return tool;
}

}  // namespace baton::mcp
