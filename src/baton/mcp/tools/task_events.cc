// The `task_events` tool: an agent worker's events (the tools it ran, its
// replies, questions and answers, messages, results), a page at a time from
// a cursor, as `baton events` prints them.
#include <fmt/format.h>

#include <algorithm>

#include "baton/ipc/event_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

// A page: enough to follow a worker's turn, small enough for a context.
constexpr int64_t kDefaultLimit = 50;
constexpr int64_t kMaxLimit = 500;

struct TaskEventsArguments {
  TaskIdArgument task;
  int64_t after = 0;
  int64_t limit = kDefaultLimit;
  template <class V>
  void Fields(V& v) {
    task.Fields(v);
    v("after", after,
      {.min = 0,
       .doc = "Only events after this seq: the next_after of the last page; "
              "default 0",
       .example = "40"});
    v("limit", limit,
      {.min = 1,
       .max = kMaxLimit,
       .doc = "Events a page; default 50",
       .example = "100"});
  }
};

void HandleTaskEvents(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskEventsArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  EventsRequest request{.task = args->task.task_id, .after = args->after};
  size_t page = static_cast<size_t>(args->limit);
  call->Daemon(request, [call, page,
                         from = request.after](Result<EventsReply> reply) {
    if (!reply)
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
    const TaskRecord& task = reply->task.task;
    std::vector<Json>& events = reply->events;
    bool more = events.size() > page;
    if (more)
      events.resize(page);
    int64_t next = from;  // Where the next page starts.
    std::string text;
    for (const Json& event : events) {
      next = std::max(next, IntAt(event, "seq"));
      text += EventLine(event) + "\n";
    }
    std::string id = task.id.ToString();
    if (events.empty())
      text += fmt::format("no events after {}\n", next);
    text += fmt::format("{}: {}", id, TaskStatusName(task.status));
    if (more) {
      text += fmt::format("; more: task_events with after: {}\n", next);
    } else if (!IsTerminal(task.status)) {
      text += fmt::format(
          "; no more yet: task_events with after: {} later, or task_output "
          "wait: true until it needs you or ends\n",
          next);
    } else {
      text += "; that was its last event\n";
    }
    Json summary = TaskSummary(task);
    call->Finish({std::move(text),
                  {{"task", std::move(summary)},
                   {"events", Json(events)},
                   {"next_after", next},
                   {"more", more}},
                  false});
  });
}

}  // namespace

ToolDefinition TaskEventsToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_events";
  tool.title = "Read an agent worker's events";
  tool.description =
      "What an agent task did, event by event, oldest first: the tools it "
      "ran, its replies, the questions it asked and their answers, the "
      "messages it was sent, each turn's result. A page at a time: pass "
      "next_after back as after for the next page (more: true says there "
      "is one). Reading consumes nothing.";
  tool.input_schema = ArgumentSchema<TaskEventsArguments>();
  Json event = {
      {"type", "object"},
      {"description",
       "seq, at (ms since the epoch), type (text, tool, session, question, "
       "answer, question_withdrawn, message, delivered, result, error, "
       "note) and the type's fields (doc/agents.md)"},
      {"properties",
       {{"seq", {{"type", "integer"}}},
        {"at", {{"type", "integer"}}},
        {"type", {{"type", "string"}}}}},
      {"required", {"seq", "type"}}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"task", TaskSummarySchema()},
        {"events", {{"type", "array"}, {"items", std::move(event)}}},
        {"next_after",
         {{"type", "integer"},
          {"description", "the after of the next call: the last seq read"}}},
        {"more",
         {{"type", "boolean"},
          {"description", "more events wait past this page"}}}}},
      {"required", {"task", "events", "next_after", "more"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskEvents;
  return tool;
}

}  // namespace baton::mcp
