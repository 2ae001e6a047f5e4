// The `task_status` tool: a non-consuming look at one task (status, detail,
// label, cwd, times, output size, the last lines of its output).
#include <fmt/format.h>

#include "baton/ipc/task_text.h"
#include "baton/mcp/agent_events.h"
#include "baton/mcp/output_text.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

// The fields of the look beyond the summary, as the task object of
// doc/protocol.md has them (null when unknown).
void AddTimes(const TaskRecord& task, Json& structured) {
  structured["signal"] =
      task.signal ? Json(SignalName(*task.signal)) : Json(nullptr);
  structured["created_at"] = TimeOrNull(task.created_ms);
  structured["ended_at"] = TimeOrNull(task.ended_ms);
  structured["duration_ms"] = task.started_ms && task.ended_ms
                                  ? Json(task.ended_ms - task.started_ms)
                                  : Json(nullptr);
  structured["timeout_ms"] =
      task.spec.timeout ? Json(task.spec.timeout->count()) : Json(nullptr);
  structured["kill_reason"] =
      task.kill_reason.empty() ? Json(nullptr) : Json(task.kill_reason);
}

// The start of the diff its evidence kept, inline in the text and as
// evidence.diff (cut at a line, evidence.diff_bytes the whole size), for a
// director that cannot read batond's files (over HTTP, on another host).
constexpr uint64_t kInlineDiffBytes = 32 * 1024;
void AddDiff(const TaskRecord& task, std::string& text, Json& structured) {
  if (!task.evidence || task.evidence->diff_path.empty())
    return;
  const std::string& path = task.evidence->diff_path;
  auto size = FileSize(path);
  auto head = ReadFileRange(path, 0, kInlineDiffBytes);
  if (!size || !head) {
    text += "diff: cannot read " + path + "\n";
    return;
  }
  if (*size > head->size() && head->find('\n') != std::string::npos)
    head->resize(head->rfind('\n') + 1);
  if (head->size() < *size) {
    text +=
        fmt::format("the diff's first {} of {} bytes:\n", head->size(), *size);
  } else {
    text += fmt::format("the diff ({} bytes):\n", *size);
  }
  text += *head;
  if (!head->empty() && head->back() != '\n')
    text += '\n';
  Json& evidence = structured["evidence"];
  evidence["diff_bytes"] = *size;
  evidence["diff"] = std::move(*head);
}

// An agent task's usage and budget (doc/agents.md, "Budgets"), live.
void AddUsage(const TaskRecord& task, std::string& text, Json& structured) {
  if (!task.spec.agent)
    return;
  if (task.usage)  // The summary has its fields.
    text += "usage: " + UsageText(*task.usage) + "\n";
  AgentBudget own = BudgetOf(*task.spec.agent);
  Json budget = Json::object();
  if (auto parsed = ParseJson(EncodeObject(own)))
    budget = std::move(parsed->value);
  if (own.any())
    text += "budget: " + BudgetText(own) + "\n";
  structured["budget"] = std::move(budget);
}

// A task's hard limits and what holds it to them (doc/limits.md).
void AddLimits(const TaskView& view, std::string& text, Json& structured) {
  const ResourceLimits& limits = view.task.spec.limits;
  if (!limits.any())
    return;
  text += "limits: " + LimitsText(limits);
  if (!view.limits_held_by.empty())
    text += " (held by " + view.limits_held_by + ")";
  text += "\n";
  Json json = nullptr;
  if (auto parsed = ParseJson(EncodeObject(limits)))
    json = std::move(parsed->value);
  json["held_by"] = view.limits_held_by;
  structured["limits"] = std::move(json);
}

// The sandbox it runs in (doc/sandbox.md).
void AddSandbox(const TaskView& view, std::string& text, Json& structured) {
  const std::optional<SandboxProfile>& sandbox = view.task.spec.sandbox;
  if (!sandbox)
    return;
  text += "sandbox: " + SandboxText(*sandbox) + "\n";
  structured["sandbox"] = {{"name", sandbox->name},
                           {"network", EnumName(sandbox->network)}};
}

// What was masked in its output (doc/redaction.md).
void AddRedactions(const TaskView& view, std::string& text, Json& structured) {
  if (!view.task.spec.redact) {
    text += "redacted: off, its output is kept as printed\n";
    structured["redact"] = false;
    return;
  }
  std::string masked = RedactionsText(view.redactions);
  if (masked.empty())
    return;
  text += "redacted: " + masked + "\n";
  Json counts = Json::object();
  for (const RedactionCount& count : view.redactions)
    counts[count.kind] = count.count;
  structured["redactions"] = std::move(counts);
}

// A retried shell task's earlier attempts (doc/scheduling.md, "Retries").
void AddAttempts(const TaskRecord& task, std::string& text, Json& structured) {
  if (task.spec.retry.retries == 0)
    return;
  Json attempts = Json::array();
  for (size_t i = 0; i < task.attempts.size(); ++i) {
    const Attempt& attempt = task.attempts[i];
    text += AttemptText(attempt, i + 1) + "\n";
    // The fields as Attempt lists them (as in the task's JSON).
    if (auto parsed = ParseJson(EncodeObject(attempt)))
      attempts.push_back(std::move(parsed->value));
  }
  if (task.retry_at_ms != 0)
    text += "retry at: " + FormatIsoTime(task.retry_at_ms) + "\n";
  structured["attempts"] = std::move(attempts);
  structured["retries"] = task.spec.retry.retries;
}

// An agent task's last text, tools used and open questions, in `text` and
// `structured`.
void AddAgentFacts(const std::string& id, const EventsReply& reply,
                   std::string& text, Json& structured) {
  std::string said = LastAgentText(reply.events);
  std::vector<std::string> tools = ToolNamesUsed(reply.events);
  const std::vector<OpenQuestion>& pending = reply.task.questions;
  if (!said.empty()) {
    text += "last text:\n" + said;
    if (text.back() != '\n')
      text += '\n';
  }
  std::string names;
  for (const auto& name : tools)
    names += (names.empty() ? "" : ", ") + name;
  text += fmt::format("tools used: {}\n", names.empty() ? "none" : names);
  text += PendingQuestionsText(id, pending);
  structured["last_text"] = said;
  structured["tools_used"] = tools;
  structured["pending_questions"] = QuestionsJson(pending);
}

void HandleTaskStatus(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskIdArgument>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  call->Daemon(GetRequest{.task = args->task_id}, [call](
                                                      Result<TaskReply> reply) {
    if (!reply)
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
    const TaskRecord& task = reply->task.task;
    uint64_t size = reply->task.output_bytes.value_or(0);
    std::string last = ReadLogTail(task.output_path, size);
    Json structured = TaskSummary(task);
    AddTimes(task, structured);
    structured["cwd"] = task.spec.cwd;
    structured["output_bytes"] = size;
    structured["last_lines"] = last;
    std::string text =
        fmt::format("{}: {}\n", TaskName(task), StatusLine(task));
    if (const auto& agent = task.spec.agent) {
      // What it was told comes first; its CLI's command line is what ran.
      text += fmt::format("agent: {}, model {}\nbrief:\n{}\n", agent->profile,
                          ModelText(*agent), agent->brief);
      structured["brief"] = agent->brief;
    }
    text += fmt::format("command: {}\ncwd: {}\n", CommandText(task.spec),
                        task.spec.cwd);
    text += "created: ";
    if (task.created_ms)
      text += FormatIsoTime(task.created_ms);
    if (task.started_ms)
      text += ", started: " + FormatIsoTime(task.started_ms);
    if (task.ended_ms)
      text += ", ended: " + FormatIsoTime(task.ended_ms);
    if (task.started_ms && task.ended_ms) {
      text += fmt::format(
          " ({:.1f}s)",
          static_cast<double>(task.ended_ms - task.started_ms) / 1000.0);
    }
    text += fmt::format(
        "\noutput: {} bytes (this look consumes nothing; task_output reads "
        "it)\n",
        size);
    if (!last.empty()) {
      text += "last lines:\n" + last;
      if (text.back() != '\n')
        text += '\n';
    }
    text += EndEvidenceText(task);
    AddDiff(task, text, structured);
    AddUsage(task, text, structured);
    AddAttempts(task, text, structured);
    AddLimits(reply->task, text, structured);
    AddSandbox(reply->task, text, structured);
    AddRedactions(reply->task, text, structured);
    if (task.id.kind != TaskKind::kAgent)
      return call->Finish({std::move(text), std::move(structured), false});
    // An agent task: what it said last, the tools it used, its questions.
    std::string id = task.id.ToString();
    call->Daemon(
        EventsRequest{.task = id, .after = 0},
        [call, id, text = std::move(text), structured = std::move(structured)](
            Result<EventsReply> events) mutable {
          if (!events) {
            text += "events: " + DaemonErrorText(events.error()) + "\n";
            return call->Finish(
                {std::move(text), std::move(structured), false});
          }
          AddAgentFacts(id, *events, text, structured);
          call->Finish({std::move(text), std::move(structured), false});
        });
  });
}

}  // namespace

ToolDefinition TaskStatusToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_status";
  tool.title = "Look at one task";
  tool.description =
      "A quick, non-consuming look at one task: status, how it ended, "
      "label, command, cwd, times, output size and the last lines of its "
      "output; for an agent task also its brief, its last text, the tools "
      "it used and its pending questions (task_events: everything it did). "
      "Does not move your read position (task_output "
      "does).";
  tool.input_schema = ArgumentSchema<TaskIdArgument>();
  Json output = TaskSummarySchema();
  auto& props = output["properties"];
  props["signal"] = NullableString("the signal that ended it, e.g. SIGKILL");
  props["created_at"] = NullableString("ISO 8601 UTC");
  props["ended_at"] = NullableString("ISO 8601 UTC");
  props["duration_ms"] = NullableInteger("ended - started");
  props["timeout_ms"] = NullableInteger("its time limit");
  props["kill_reason"] = NullableString("why it was killed");
  props["brief"] = {{"type", "string"},
                    {"description", "agent tasks: what it was told"}};
  props["cwd"] = {{"type", "string"}};
  props["output_bytes"] = {{"type", "integer"}};
  props["last_lines"] = {
      {"type", "string"},
      {"description", "the last lines of its output (up to 10)"}};
  props["last_text"] = {
      {"type", "string"},
      {"description", "agent tasks: the last text the agent wrote"}};
  props["tools_used"] = {
      {"type", "array"},
      {"items", {{"type", "string"}}},
      {"description", "agent tasks: the tools it used, in order of first use"}};
  props["pending_questions"] = PendingQuestionsSchema();
  auto& evidence = props["evidence"]["properties"];
  evidence["diff"] = {
      {"type", "string"},
      {"description",
       "the diff's first 32 KiB, cut at a line (diff_path holds all)"}};
  evidence["diff_bytes"] = {{"type", "integer"},
                            {"description", "the diff file's size"}};
  props["limits"] = {
      {"type", "object"},
      {"description",
       "its hard limits (memory_bytes, cpu_millis, pids; 0: none) and "
       "held_by: what holds it to them (cgroup v2, cgroup v1, rlimit; "
       "doc/limits.md); absent when it has none"},
      {"properties",
       {{"memory_bytes", {{"type", "integer"}}},
        {"cpu_millis", {{"type", "integer"}}},
        {"pids", {{"type", "integer"}}},
        {"held_by", {{"type", "string"}}}}}};
  props["sandbox"] = {
      {"type", "object"},
      {"description",
       "the sandbox its processes run in: its profile's name and network "
       "(none, full; doc/sandbox.md); absent when it has none"},
      {"properties",
       {{"name", {{"type", "string"}}}, {"network", {{"type", "string"}}}}}};
  props["redactions"] = {
      {"type", "object"},
      {"additionalProperties", {{"type", "integer"}}},
      {"description",
       "the secrets masked in its output so far, by kind, e.g. "
       "{\"github-token\": 2} (doc/redaction.md); absent when none were"}};
  props["redact"] = {
      {"type", "boolean"},
      {"description",
       "false when its output is kept as printed (run with redact: false); "
       "absent otherwise"}};
  props["budget"] = {
      {"type", "object"},
      {"description",
       "agent tasks: its budget (max_turns, max_tokens, max_cost_usd); past "
       "one it is stopped and ends killed"},
      {"properties",
       {{"max_turns", {{"type", "integer"}}},
        {"max_tokens", {{"type", "integer"}}},
        {"max_cost_usd", {{"type", "number"}}}}}};
  props["retries"] = {
      {"type", "integer"},
      {"description", "tasks run with retries: how many it may take"}};
  props["attempts"] = {
      {"type", "array"},
      {"description",
       "a retried task's earlier attempts, oldest first: started_ms, "
       "ended_ms, exit_code, signal (a number), detail, and the bytes of "
       "its output each wrote (output_from, output_to)"},
      {"items", {{"type", "object"}}}};
  output["required"] = {"task_id", "status", "output_bytes", "last_lines"};
  tool.output_schema = std::move(output);
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskStatus;
  return tool;
}

}  // namespace baton::mcp
