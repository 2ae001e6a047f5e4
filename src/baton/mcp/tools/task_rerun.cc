// The `task_rerun` tool: an ended task started again as a new task
// (doc/tasks.md, "Run again"), with the environment the client gave the
// server.
#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"

namespace baton::mcp {
namespace {

void HandleTaskRerun(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskIdArgument>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  RerunRequest request{.task = args->task_id, .base_env = ProcessEnvironment()};
  call->Daemon(request,
               [call](Result<TaskReply> reply) { FinishStarted(call, reply); });
}

}  // namespace

ToolDefinition TaskRerunToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_rerun";
  tool.title = "Run an ended task again";
  tool.description =
      "Start an ended task again as a new task with a new id: the same "
      "command (or an agent's brief, agent and model), folder, env, label, "
      "checks, queue, limits and budget; not what it waited for (after), "
      "and an agent starts a new session (to go on where it stopped, "
      "delegate with resume_from). A task still running is refused.";
  tool.input_schema = ArgumentSchema<TaskIdArgument>();
  tool.output_schema = StartedSchema();
  tool.annotations = StartAnnotations(tool.title);
  tool.handler = HandleTaskRerun;
  return tool;
}

}  // namespace baton::mcp
