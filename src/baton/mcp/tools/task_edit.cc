// The `task_edit` tool: changes a task that is still queued (held: it has
// not started) before it starts (doc/tasks.md, "Editing a queued task"),
// as pueue's `edit`: each argument given replaces the task's.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

// The arguments, each described once (mcp/arguments.h).
struct TaskEditArguments {
  TaskIdArgument id;
  std::optional<std::string> label;
  std::optional<int64_t> priority;
  std::optional<std::string> queue;
  std::optional<std::vector<std::string>> after;
  bool after_any = false;
  std::optional<Seconds> timeout_s;
  std::map<std::string, std::string> env;
  std::optional<std::string> cwd;
  std::optional<std::string> command;
  template <class V>
  void Fields(V& v) {
    id.Fields(v);
    v("label", label,
      {.max_bytes = kMaxLabelBytes,
       .doc = "A new label (\"\": none)",
       .example = "\"nightly build\""});
    v("priority", priority,
      {.min = -1000000,
       .max = 1000000,
       .doc = "A new priority: higher starts first within its queue",
       .example = "5"});
    v("queue", queue,
      {.max_bytes = kMaxNameBytes,
       .doc = "Another queue (\"default\": the default one)",
       .example = "\"gpu\""});
    v("after", after,
      {.max_bytes = kMaxNameBytes,
       .max_items = 64,
       .doc = "Replaces the task ids it starts after ([]: none)",
       .example = "[\"shell-1\"]"});
    v("after_any", after_any,
      {.doc = "With after: start at the first end of any of them"});
    v("timeout_s", timeout_s,
      {.doc = "A new timeout in seconds", .example = "600"});
    v("env", env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "Variables set over its own (a shell task's)",
       .example = "{\"MODE\": \"fast\"}"});
    v("cwd", cwd,
      {.max_bytes = kMaxPathBytes,
       .doc = "A new absolute working directory (a shell task's)",
       .example = "\"/home/me/project\""});
    v("command", command,
      {.non_empty = true,
       .max_bytes = kMaxArgBytes,
       .doc = "A new shell command line (a shell task's)",
       .example = "\"make -j4\""});
  }
};

void HandleTaskEdit(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskEditArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  EditRequest request{.task = args->id.task_id};
  request.label = args->label;
  request.priority = args->priority;
  request.queue = args->queue;
  request.after = args->after;
  if (args->after_any)
    request.after_any = true;
  if (args->timeout_s)
    request.timeout = args->timeout_s->Milliseconds();
  request.env = args->env;
  request.cwd = args->cwd;
  request.command = args->command;
  call->Daemon(request, [call](Result<TaskReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error()) +
                                            " (nothing was changed)"));
    }
    const TaskRecord& task = reply->task.task;
    std::string text = fmt::format(
        "Edited {} [status: {}{}]: {}\n", TaskName(task),
        TaskStatusName(task.status),
        task.detail.empty() ? "" : ", " + task.detail, CommandText(task.spec));
    call->Finish({std::move(text), TaskSummary(task), false});
  });
}

}  // namespace

ToolDefinition TaskEditToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_edit";
  tool.title = "Change a queued task before it starts";
  tool.description =
      "Change a task that is still queued (waiting for a slot in its queue, "
      "or for the tasks it runs after) before it starts: its label, "
      "priority, queue, after, timeout; for a shell task also its env, cwd "
      "and command. Only what is given changes. A task that started or "
      "ended is refused (task_rerun starts an ended task again).";
  tool.input_schema = ArgumentSchema<TaskEditArguments>();
  tool.output_schema = TaskSummarySchema();
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", true}};
  tool.handler = HandleTaskEdit;
  return tool;
}

}  // namespace baton::mcp
