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

void HandleTaskEvents(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(args, {"task_id", "after", "limit"});
      !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  auto id = RequiredString(args, "task_id", "\"agent-1\"");
  if (!id)
    return call->Finish(ToolResult::Error(id.error().message));
  auto after = OptionalCount(args, "after", 0);
  if (!after)
    return call->Finish(ToolResult::Error(after.error().message));
  auto limit = OptionalCount(args, "limit", 1);
  if (!limit)
    return call->Finish(ToolResult::Error(limit.error().message));
  if (limit->value_or(kDefaultLimit) > kMaxLimit) {
    return call->Finish(ToolResult::Error(fmt::format(
        "argument 'limit' must be at most {} (events a page); page on with "
        "after",
        kMaxLimit)));
  }
  EventsRequest request{.task = *id, .after = after->value_or(0)};
  size_t page = static_cast<size_t>(limit->value_or(kDefaultLimit));
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
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {{"task_id",
         {{"type", "string"},
          {"description", "An agent task's id, e.g. agent-1"}}},
        {"after",
         {{"type", "integer"},
          {"minimum", 0},
          {"default", 0},
          {"description",
           "Only events after this seq: the next_after of the last page"}}},
        {"limit",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", kMaxLimit},
          {"default", kDefaultLimit},
          {"description", "Events a page"}}}}},
      {"required", {"task_id"}},
      {"additionalProperties", false},
  };
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
