// The `run` tool: starts a shell command in the background and returns at
// once with its id and a `baton wait` command line that wakes the client.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"

namespace baton::mcp {
namespace {

void HandleRun(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  std::vector<std::string_view> names = {
      "command",          "cwd",   "label",    "env",   "timeout_s",
      "checks",           "queue", "priority", "after", "after_any",
      "max_output_bytes", "redact"};
  names.insert(names.end(), std::begin(kSlurmArguments),
               std::end(kSlurmArguments));
  names.insert(names.end(), std::begin(kLimitArguments),
               std::end(kLimitArguments));
  names.insert(names.end(), std::begin(kRetryArguments),
               std::end(kRetryArguments));
  if (auto known = CheckKnownArguments(args, names); !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  auto command = RequiredString(args, "command", "\"make -j4\"");
  if (!command)
    return call->Finish(ToolResult::Error(command.error().message));
  auto cwd = OptionalString(args, "cwd");
  if (!cwd)
    return call->Finish(ToolResult::Error(cwd.error().message));
  auto label = OptionalString(args, "label");
  if (!label)
    return call->Finish(ToolResult::Error(label.error().message));
  auto timeout = TimeoutSeconds(args, "no limit");
  if (!timeout)
    return call->Finish(ToolResult::Error(timeout.error().message));

  RunRequest request;
  request.command = *command;
  request.label = *label;
  // A relative cwd is relative to the server's, which clients start in the
  // project folder.
  std::string dir = cwd->empty() ? call->facts().cwd : *cwd;
  if (dir[0] != '/')
    dir = call->facts().cwd + "/" + dir;
  request.cwd = dir;
  auto checks = ChecksArgument(args);
  if (!checks)
    return call->Finish(ToolResult::Error(checks.error().message));
  request.checks = std::move(*checks);
  auto schedule = ScheduleArguments(args);
  if (!schedule)
    return call->Finish(ToolResult::Error(schedule.error().message));
  request.schedule = std::move(*schedule);
  auto slurm = SlurmArguments(args);
  if (!slurm)
    return call->Finish(ToolResult::Error(slurm.error().message));
  request.slurm = std::move(*slurm);
  auto limits = LimitArguments(args);
  if (!limits)
    return call->Finish(ToolResult::Error(limits.error().message));
  request.limits = std::move(*limits);
  if (const Json* max = FindArgument(args, "max_output_bytes")) {
    const auto* bytes = max->get_ptr<const Json::number_unsigned_t*>();
    if (!bytes || *bytes > (uint64_t{1} << 62)) {
      return call->Finish(ToolResult::Error(fmt::format(
          "argument 'max_output_bytes' must be a whole number of bytes >= 0 "
          "(0: keep all), e.g. {{\"max_output_bytes\": 104857600}} (got {})",
          max->dump())));
    }
    request.max_output = static_cast<int64_t>(*bytes);
  }
  auto redact = OptionalBool(args, "redact", true);
  if (!redact)
    return call->Finish(ToolResult::Error(redact.error().message));
  if (!*redact)
    request.redact = false;
  auto retry = RetryArguments(args);
  if (!retry)
    return call->Finish(ToolResult::Error(retry.error().message));
  request.retry = *retry;
  if (const Json* env = FindArgument(args, "env")) {
    if (!env->is_object()) {
      return call->Finish(ToolResult::Error(
          "argument 'env' must be an object of variables, e.g. {\"env\": "
          "{\"MODE\": \"fast\"}}"));
    }
    for (const auto& [name, value] : env->items()) {
      const auto* text = value.get_ptr<const std::string*>();
      if (!text || name.empty() || name.find('=') != std::string::npos) {
        return call->Finish(ToolResult::Error(fmt::format(
            "argument 'env': '{}' must be a variable name with a string "
            "value, e.g. {{\"env\": {{\"MODE\": \"fast\"}}}}",
            name)));
      }
      request.env[name] = *text;
    }
  }
  if (*timeout) {
    auto ms = TimeoutArgument(**timeout);
    if (!ms)
      return call->Finish(ToolResult::Error(ms.error().message));
    request.timeout = *ms;
  }
  // The task inherits the environment the client gave the server (PATH,
  // virtualenvs, ...), as a command the client ran itself would.
  request.base_env = ProcessEnvironment();

  call->Daemon(request, [call](Result<TaskReply> reply) {
    if (!reply)
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
    const TaskRecord& task = reply->task.task;
    std::string id = task.id.ToString();
    std::string wait_command = WaitCommand(call->facts(), id);
    Json structured = TaskSummary(task);
    structured["cwd"] = task.spec.cwd;
    structured["wait_command"] = wait_command;
    std::string text;
    if (task.status == TaskStatus::kFailed) {
      text = fmt::format("{} could not start: {}\n[status: failed, {}]\n", id,
                         task.detail, task.detail);
    } else {
      text = fmt::format(
          "Started {} [status: {}]: {}\n"
          "You will be told when it ends (with any tool result); do other "
          "work meanwhile and do not redo what it does. When you need its "
          "result, call task_output with {{\"task_ids\": [\"{}\"], \"wait\": "
          "true}} (with every id you are blocked on).\n"
          "To be woken from a background shell instead: {}\n",
          TaskName(task), TaskStatusName(task.status), CommandText(task.spec),
          id, wait_command);
    }
    call->Finish({std::move(text), std::move(structured), false, reply->task});
  });
}

}  // namespace

ToolDefinition RunToolDefinition() {
  ToolDefinition tool;
  tool.name = "run";
  tool.title = "Run a command in the background";
  tool.description =
      "Start a shell command (run by /bin/sh -c) in the background and "
      "return at once with its task id. The task keeps running while you do "
      "other work; you are told when it ends. Read its output with "
      "task_output (wait: true to block until it or another task ends). Use "
      "it for builds, test suites, servers, anything slow. The result's "
      "wait_command is a shell line that blocks until the task ends and "
      "prints its status and last lines: for a client that wakes you when a "
      "background shell ends.";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"command",
            {{"type", "string"},
             {"description",
              "The shell command line, e.g. \"make -j4 && ctest\""}}},
           {"cwd",
            {{"type", "string"},
             {"description",
              "Working directory (absolute, or relative to the server's); "
              "default: the server's working directory"}}},
           {"label",
            {{"type", "string"},
             {"description", "A short name for the task, e.g. \"tests\""}}},
           {"env",
            {{"type", "object"},
             {"additionalProperties", {{"type", "string"}}},
             {"description",
              "Extra environment variables, e.g. {\"MODE\": \"fast\"}"}}},
           {"timeout_s",
            {{"type", "number"},
             {"exclusiveMinimum", 0},
             {"description",
              "Kill the task after this many seconds; default: no limit"}}},
           {"checks",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description",
              "Shell commands run in its folder when it ends, e.g. [\"make "
              "test\"]; a check that fails makes the task failed, and their "
              "exit codes and last lines join its end"}}},
           {"max_output_bytes",
            {{"type", "integer"},
             {"minimum", 0},
             {"description",
              "The output it keeps; past it, what it prints is dropped and "
              "counted, and its output ends with a marker saying how much. "
              "0: keep all; default: 1 GiB"}}},
           {"redact",
            {{"type", "boolean"},
             {"description",
              "Mask secrets of well-known shapes (API keys, tokens, private "
              "keys) in its output, in place; false keeps its output as "
              "printed. Default: true"}}},
       }},
      {"required", {"command"}},
      {"additionalProperties", false},
  };
  Json output = TaskSummarySchema();
  output["properties"]["cwd"] = {{"type", "string"}};
  output["properties"]["wait_command"] = {
      {"type", "string"},
      {"description",
       "A `baton wait` command line (with this session) that returns when "
       "the task ends and prints its status, then its output's last lines "
       "or its open question; run it in a background shell to be woken"}};
  output["required"] = {"task_id", "status", "wait_command"};
  tool.output_schema = std::move(output);
  // A shell command can do anything, anywhere: honest hints say so.
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", false},
                      {"openWorldHint", true}};
  tool.handler = HandleRun;
  AddScheduleProperties(tool.input_schema["properties"]);
  AddSlurmProperties(tool.input_schema["properties"]);
  AddLimitProperties(tool.input_schema["properties"]);
  AddRetryProperties(tool.input_schema["properties"]);
  return tool;
}

}  // namespace baton::mcp
