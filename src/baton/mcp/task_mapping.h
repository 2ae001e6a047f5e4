// baton tasks as tasks of MCP's Tasks extension (io.modelcontextprotocol/
// tasks, doc/mcp.md "Tasks"): the status mapping, the Task and DetailedTask
// objects, an agent's open question as an elicitation form and the form's
// answer as batond's answers. Pure: no I/O, never throws on any input.
#ifndef BATON_MCP_TASK_MAPPING_H_
#define BATON_MCP_TASK_MAPPING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/messages.h"
#include "baton/mcp/modern.h"
#include "baton/util/result.h"

namespace baton::mcp {

// The polling hint of every task: clients that subscribed are told of each
// change anyway (notifications/tasks).
inline constexpr int64_t kTaskPollIntervalMs = 2000;

// queued, running, stopping: working; waiting: input_required; completed
// and failed: completed (a failure is a tool result with isError); killed:
// cancelled; interrupted: failed.
std::string_view McpTaskStatus(TaskStatus status);

// The Task object: taskId, status, statusMessage, createdAt, lastUpdatedAt,
// ttlMs (null: baton keeps its tasks), pollIntervalMs.
Json McpTask(const TaskRecord& task);

// The key of a question in inputRequests: "q<seq>", unique over the task's
// life (seq is its question event's).
std::string QuestionKey(int64_t seq);

// One open question of `task` as an elicitation/create request (method and
// params): a form with one field per item (`answer_1`, ...), the options
// as an enum of labels (a list of them for a multi-select item), free text
// otherwise.
Json QuestionForm(const TaskRecord& task, const OpenQuestion& question);

// A waiting task's open questions as inputRequests: its QuestionForm per
// question, under QuestionKey.
Json InputRequests(const TaskView& view);

// batond's answers (one string per item: an option number, "1,3", text or
// "skip") from an elicitation result for `question`. Declined or cancelled:
// "skip" for every item; an item left out: "skip". A value of the wrong
// type, or a label that is not an option, is an error that says which.
Result<std::vector<std::string>> AnswersFromElicitation(
    const OpenQuestion& question, const Json& response);

// The tools/call result of an ended task, what a call that waited for it
// would have returned: its status line, the tail of its output and its
// evidence as text; `structured` (the tool's structuredContent, to which the
// output tail and evidence are added); isError when it failed.
Json EndedToolResult(const TaskView& view, std::string_view output_tail,
                     Json structured);

// The DetailedTask of tasks/get and notifications/tasks: McpTask plus
// inputRequests (input_required), `tool_result` as `result` (completed) or
// the JSON-RPC error (failed).
Json DetailedTask(const TaskView& view, const Json& tool_result);

}  // namespace baton::mcp

#endif  // BATON_MCP_TASK_MAPPING_H_
