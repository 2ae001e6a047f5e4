// The `task_list` tool: this session's tasks, one line each.
#include <fmt/format.h>

#include "baton/ipc/task_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/clock.h"
#include "baton/util/duration.h"

namespace baton::mcp {
namespace {

// What `baton ls` shows beside the label: an agent's profile and model,
// the start, the time it ran (so far), an agent's usage.
//   " · claude, model opus · started 2026-12-05T11:02:03Z, ran 1m2s · 3
//   turns, 12345 tokens (10000 in, 2345 out), $0.0123"
std::string RowFacts(const TaskRecord& task) {
  std::string out;
  if (const auto& agent = task.spec.agent) {
    out += " · " + agent->profile + ", model " + ModelText(*agent);
  }
  if (auto elapsed = ElapsedMs(task)) {
    out += " · started " + FormatIsoTime(task.started_ms) + ", ran " +
           FormatDuration(std::chrono::seconds(*elapsed / 1000));
  }
  if (task.usage)
    out += " · " + UsageText(*task.usage);
  return out;
}

struct TaskListArguments {
  bool all = false;
  template <class V>
  void Fields(V& v) {
    v("all", all, {.doc = "Include every ended task; default false"});
  }
};

void HandleTaskList(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskListArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  call->Daemon(ListRequest{.all = args->all}, [call](Result<ListReply> reply) {
    if (!reply)
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
    Json tasks = Json::array();
    std::string text;
    for (const auto& view : reply->tasks) {
      const TaskRecord& task = view.task;
      bool uncollected = IsTerminal(task.status) && !task.end_seen;
      Json summary = TaskSummary(task);
      summary["uncollected"] = uncollected;
      tasks.push_back(std::move(summary));
      std::string label = task.spec.label;
      if (label.empty())
        label = CommandText(task.spec);
      std::string line = fmt::format("{} [{}] {} — {}", task.id.ToString(),
                                     TaskKindName(task.id.kind),
                                     TaskStatusName(task.status), label);
      if (!task.detail.empty())
        line += " (" + task.detail + ")";
      line += RowFacts(task);
      if (uncollected)
        line += " [not collected: task_output or task_status tells its end]";
      text += line + "\n";
    }
    if (tasks.empty())
      text = "no tasks in this session\n";
    int64_t hidden = reply->hidden;
    if (hidden > 0) {
      text += fmt::format(
          "... and {} older ended tasks (task_list with all: true)\n", hidden);
    }
    call->Finish({std::move(text),
                  {{"tasks", std::move(tasks)}, {"hidden", hidden}},
                  false});
  });
}

}  // namespace

ToolDefinition TaskListToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_list";
  tool.title = "List this session's tasks";
  tool.description =
      "This session's tasks, one line each: <id> [<kind>] <status> — "
      "<label>, then an agent's profile and model, the start and the time "
      "it ran, an agent's turns, tokens and cost. Live tasks and the 20 most "
      "recent ended ones (all: true for "
      "every one). Ended tasks whose end you have not collected are marked "
      "[not collected] (uncollected: true): after losing track (a "
      "compacted context, a restart), call task_list and collect those.";
  tool.input_schema = ArgumentSchema<TaskListArguments>();
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"tasks", {{"type", "array"}, {"items", TaskSummarySchema()}}},
        {"hidden",
         {{"type", "integer"},
          {"description", "Ended tasks left out (see all)"}}}}},
      {"required", {"tasks", "hidden"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskList;
  return tool;
}

}  // namespace baton::mcp
