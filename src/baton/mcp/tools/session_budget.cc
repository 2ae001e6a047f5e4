// The `session_budget` tool: this session's budget over all its agent
// tasks, and what they spent (doc/agents.md, "Session budgets"). With a
// limit it sets that one first (0 removes it); `clear` removes them all.
#include "baton/ipc/task_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

void HandleSessionBudget(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(
          args, {"max_turns", "max_tokens", "max_cost_usd", "clear"});
      !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  BudgetRequest request;
  for (auto [name, field] : {std::pair{"max_turns", &request.max_turns},
                             std::pair{"max_tokens", &request.max_tokens}}) {
    auto count = OptionalCount(args, name, 0);
    if (!count)
      return call->Finish(ToolResult::Error(count.error().message));
    *field = *count;
  }
  auto cost = OptionalNumber(args, "max_cost_usd", 0);
  if (!cost)
    return call->Finish(ToolResult::Error(cost.error().message));
  request.max_cost_usd = *cost;
  auto clear = OptionalBool(args, "clear", false);
  if (!clear)
    return call->Finish(ToolResult::Error(clear.error().message));
  request.clear = *clear;
  call->Daemon(request, [call](Result<BudgetReply> reply) {
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
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"max_turns",
            {{"type", "integer"},
             {"minimum", 0},
             {"description",
              "Model turns of its agent tasks together; 0: no limit"}}},
           {"max_tokens",
            {{"type", "integer"},
             {"minimum", 0},
             {"description",
              "Tokens (input, cached input included, plus output) of its "
              "agent tasks together; 0: no limit"}}},
           {"max_cost_usd",
            {{"type", "number"},
             {"minimum", 0},
             {"description",
              "US dollars its agent tasks may cost together (Claude Code "
              "reports a cost; the others only tokens); 0: no limit"}}},
           {"clear",
            {{"type", "boolean"},
             {"description", "Remove the whole budget (give it alone)"}}},
       }},
      {"additionalProperties", false},
  };
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
