// The MCP tools of `baton mcp`, one file each, and the pieces they share
// (the task summary object and its schema).
#ifndef BATON_MCP_TOOLS_TOOLS_H_
#define BATON_MCP_TOOLS_TOOLS_H_

#include <optional>
#include <vector>

#include "baton/mcp/tool.h"

namespace baton::mcp {

ToolDefinition RunToolDefinition();
ToolDefinition TaskOutputToolDefinition();
ToolDefinition TaskStatusToolDefinition();
ToolDefinition TaskListToolDefinition();
ToolDefinition TaskEventsToolDefinition();
ToolDefinition TaskQuestionsToolDefinition();
ToolDefinition TaskKillToolDefinition();
ToolDefinition DelegateToolDefinition();
ToolDefinition TaskSendToolDefinition();
ToolDefinition TaskAnswerToolDefinition();
ToolDefinition SessionBudgetToolDefinition();
ToolDefinition WorktreesToolDefinition();
ToolDefinition TaskRerunToolDefinition();
ToolDefinition TaskEditToolDefinition();
ToolDefinition ConflictsToolDefinition();
ToolDefinition LandToolDefinition();
ToolDefinition LandQueueToolDefinition();

// What run and task_rerun answer once a task started (tools/run.cc): the
// result, and its output schema.
void FinishStarted(const ToolCallPtr& call, const Result<TaskReply>& reply);
Json StartedSchema();
// What every tool that starts a task answers (run, task_rerun, delegate):
// the task's summary, its folder and its `wait_command`; and the text when
// it could not start ("" when it did).
struct StartedFields {
  std::string wait_command;
  Json structured;
};
StartedFields StartedFieldsOf(const ToolCallPtr& call, const TaskRecord& task);
std::string CouldNotStartText(const TaskRecord& task);
// StartedSchema's part of every start tool, its wait_command described as
// `wait_doc` says.
Json StartedSchema(const std::string& wait_doc);
// The hints of a tool that starts a task (run, delegate, task_rerun): a
// command or an agent can do anything, anywhere, and each call starts one
// more.
Json StartAnnotations(const std::string& title);

// The arguments of a tool that takes none.
struct NoArguments {
  template <class V>
  void Fields(V&) {}
};

// One task's id (task_status, task_events, task_send, task_answer).
struct TaskIdArgument {
  std::string task_id;
  template <class V>
  void Fields(V& v) {
    v("task_id", task_id,
      {.required = true,
       .non_empty = true,
       .max_bytes = kMaxNameBytes,
       .doc = "The task id, e.g. shell-1",
       .example = "\"shell-1\""});
  }
};

// One task or several: `task_id` and/or `task_ids` (task_output,
// task_kill).
struct TaskIdsArguments {
  std::string task_id;
  std::vector<std::string> task_ids;
  template <class V>
  void Fields(V& v) {
    v("task_id", task_id,
      {.non_empty = true,
       .max_bytes = kMaxNameBytes,
       .doc = "A task id, e.g. shell-1",
       .example = "\"shell-1\""});
    v("task_ids", task_ids,
      {.max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "Several task ids, e.g. [\"shell-1\", \"shell-2\"]",
       .example = "[\"shell-1\", \"shell-2\"]"});
  }
  // Both, merged in order without duplicates; an error that says how to
  // name a task when neither was given.
  Result<std::vector<std::string>> Ids() const;
};

// Every tool, in the order tools/list shows them.
const std::vector<ToolDefinition>& AllTools();

// JSON Schema of a string-or-null / integer-or-null property.
Json NullableString(std::string_view description);
Json NullableInteger(std::string_view description);

// The compact task object of the structured results: task_id, kind,
// status, detail, exit_code, label, command, started_at, elapsed_ms,
// `evidence` once its checks ran, and an agent task's agent, model and
// usage (what `baton ls` shows).
Json TaskSummary(const TaskRecord& task);
inline Json TaskSummary(const TaskView& view) {
  return TaskSummary(view.task);
}
Json TaskSummarySchema();
// A wall time as ISO 8601 UTC, null for 0 (not yet).
Json TimeOrNull(int64_t wall_ms);
// From its start to its end, or to now while it runs; none before a start.
std::optional<int64_t> ElapsedMs(const TaskRecord& task);
// An agent's usage as AgentUsage's fields name it.
Json UsageJson(const AgentUsage& usage);
// A task's evidence (its checks, changed files, overlapping tasks) as the
// summary's `evidence` object, and its schema.
Json EvidenceJson(const Evidence& evidence);
Json EvidenceSchema();
// The evidence of an ended task with checks as text lines; "" without.
std::string EndEvidenceText(const TaskRecord& task);
// The schema of QuestionsJson (agent_events.h): a waiting agent task's
// open questions.
Json PendingQuestionsSchema();
// "shell-1 (build)" or "shell-1" when it has no label.
std::string TaskName(const TaskRecord& task);

// A `baton wait` command line for `id` in this session (with BATON_HOME
// when set), for a background shell to be woken by.
std::string WaitCommand(const ServerFacts& facts, const std::string& id);

// The name of an enum value on batond's wire ("already-terminal"), from
// JsonEnum<E> (ipc/messages.h).
template <class E>
std::string_view WireName(E value) {
  for (const auto& [known, name] : JsonEnum<E>::kNames) {
    if (known == value)
      return name;
  }
  return "";
}

// The daemon's error as a message for the model ("not_found: ...").
std::string DaemonErrorText(const Error& error);

}  // namespace baton::mcp

#endif  // BATON_MCP_TOOLS_TOOLS_H_
