// The `task_kill` tool: stops tasks (SIGTERM to the process group, SIGKILL
// after a grace period) and says per task whether a kill was requested or
// it had already ended.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

void HandleTaskKill(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(args, {"task_id", "task_ids", "reason"});
      !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  auto ids = TaskIdsArgument(args);
  if (!ids)
    return call->Finish(ToolResult::Error(ids.error().message));
  auto reason = OptionalString(args, "reason");
  if (!reason)
    return call->Finish(ToolResult::Error(reason.error().message));
  KillRequest request{.tasks = std::move(*ids), .reason = std::move(*reason)};
  call->Daemon(request, [call](Result<KillReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error()) +
                                            " (nothing was killed)"));
    }
    Json results = Json::array();
    std::string text;
    for (const auto& item : reply->results) {
      std::string_view outcome = WireName(item.outcome);
      results.push_back({{"task_id", item.id}, {"outcome", outcome}});
      text += fmt::format("{}: {}\n", item.id, outcome);
    }
    call->Finish({std::move(text), {{"results", std::move(results)}}, false});
  });
}

}  // namespace

ToolDefinition TaskKillToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_kill";
  tool.title = "Stop tasks";
  tool.description =
      "Stop tasks that stopped mattering: SIGTERM to the task's whole "
      "process group, SIGKILL after a grace period. Answers per task "
      "'requested' or 'already-terminal'. An unknown id refuses the whole "
      "call (nothing is killed).";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id",
            {{"type", "string"}, {"description", "A task id, e.g. shell-1"}}},
           {"task_ids",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description", "Several task ids"}}},
           {"reason",
            {{"type", "string"},
             {"description", "Why (shown in the task's detail)"}}},
       }},
      {"additionalProperties", false},
  };
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"results",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"task_id", {{"type", "string"}}},
              {"outcome",
               {{"type", "string"},
                {"enum", {"requested", "already-terminal"}}}}}},
            {"required", {"task_id", "outcome"}}}}}}}},
      {"required", {"results"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskKill;
  return tool;
}

}  // namespace baton::mcp
