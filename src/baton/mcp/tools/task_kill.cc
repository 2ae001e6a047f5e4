// The `task_kill` tool: stops tasks (SIGTERM to the process group, SIGKILL
// after a grace period) and says per task whether a kill was requested or
// it had already ended.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

struct TaskKillArguments {
  TaskIdsArguments ids;
  std::string reason;
  template <class V>
  void Fields(V& v) {
    ids.Fields(v);
    v("reason", reason,
      {.max_bytes = kMaxReasonBytes,
       .doc = "Why (shown in the task's detail)"});
  }
};

void HandleTaskKill(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskKillArguments>(call->arguments());
  Result<std::vector<std::string>> ids =
      args ? args->ids.Ids() : std::unexpected(args.error());
  if (!ids)
    return call->Finish(ToolResult::Error(ids.error().message));
  KillRequest request{.tasks = std::move(*ids), .reason = args->reason};
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
  tool.input_schema = ArgumentSchema<TaskKillArguments>();
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
