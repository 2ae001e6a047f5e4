// The `run` tool: starts a shell command in the background and returns at
// once with its id and a `baton wait` command line that wakes the client.
#include <fmt/format.h>

#include "baton/mcp/tools/start_arguments.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"

namespace baton::mcp {
namespace {

// The arguments, each described once (mcp/arguments.h).
struct RunArguments {
  std::string command;
  std::map<std::string, std::string> env;
  std::optional<Seconds> timeout_s;
  std::optional<int64_t> max_output_bytes;
  bool redact = true;
  StartArguments start;
  template <class V>
  void Fields(V& v) {
    v("command", command,
      {.required = true,
       .non_empty = true,
       .max_bytes = kMaxArgBytes,
       .doc = "The shell command line, e.g. \"make -j4 && ctest\"",
       .example = "\"make -j4\""});
    v("env", env,
      {.max_bytes = kMaxArgBytes,
       .max_items = kMaxEnvEntries,
       .doc = "Extra environment variables, e.g. {\"MODE\": \"fast\"}",
       .example = "{\"MODE\": \"fast\"}"});
    v("timeout_s", timeout_s,
      {.doc = "Kill the task after this many seconds",
       .example = "600",
       .when_absent = "no limit"});
    v("max_output_bytes", max_output_bytes,
      {.min = 0,
       .max = int64_t{1} << 62,
       .doc = "The output it keeps; past it, what it prints is dropped and "
              "counted, and its output ends with a marker saying how much. "
              "0: keep all; default: 1 GiB",
       .example = "104857600"});
    v("redact", redact,
      {.doc = "Mask secrets of well-known shapes (API keys, tokens, private "
              "keys) in its output, in place; false keeps its output as "
              "printed. Default: true"});
    start.Fields(v);
  }
};

void HandleRun(const ToolCallPtr& call) {
  auto args = ParseArguments<RunArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  RunRequest request;
  request.command = args->command;
  request.env = args->env;
  if (args->timeout_s)
    request.timeout = args->timeout_s->Milliseconds();
  request.max_output = args->max_output_bytes;
  if (!args->redact)
    request.redact = false;
  args->start.ApplyTo(request, call->facts().cwd);
  if (request.cwd.empty())
    request.cwd = call->facts().cwd;
  // The task inherits the environment the client gave the server (PATH,
  // virtualenvs, ...), as a command the client ran itself would.
  request.base_env = ProcessEnvironment();

  call->Daemon(request,
               [call](Result<TaskReply> reply) { FinishStarted(call, reply); });
}

}  // namespace

// The result of a tool that started a shell task (run, task_rerun): its
// summary, where it runs, and how to be told of its end.
void FinishStarted(const ToolCallPtr& call, const Result<TaskReply>& reply) {
  if (!reply)
    return call->Finish(ToolResult::Error(DaemonErrorText(reply.error())));
  const TaskRecord& task = reply->task.task;
  auto [wait_command, structured] = StartedFieldsOf(call, task);
  std::string text = CouldNotStartText(task);
  if (text.empty()) {
    text = fmt::format(
        "Started {} [status: {}]: {}\n"
        "You will be told when it ends (with any tool result); do other "
        "work meanwhile and do not redo what it does. When you need its "
        "result, call task_output with {{\"task_ids\": [\"{}\"], \"wait\": "
        "true}} (with every id you are blocked on).\n"
        "To be woken from a background shell instead: {}\n",
        TaskName(task), TaskStatusName(task.status), CommandText(task.spec),
        task.id.ToString(), wait_command);
  }
  call->Finish({std::move(text), std::move(structured), false, reply->task});
}

Json StartAnnotations(const std::string& title) {
  return {{"title", title},
          {"readOnlyHint", false},
          {"destructiveHint", true},
          {"idempotentHint", false},
          {"openWorldHint", true}};
}

StartedFields StartedFieldsOf(const ToolCallPtr& call, const TaskRecord& task) {
  StartedFields started{WaitCommand(call->facts(), task.id.ToString()),
                        TaskSummary(task)};
  started.structured["cwd"] = task.spec.cwd;
  started.structured["wait_command"] = started.wait_command;
  return started;
}

std::string CouldNotStartText(const TaskRecord& task) {
  if (task.status != TaskStatus::kFailed)
    return "";
  return fmt::format("{} could not start: {}\n[status: failed, {}]\n",
                     task.id.ToString(), task.detail, task.detail);
}

Json StartedSchema(const std::string& wait_doc) {
  Json output = TaskSummarySchema();
  output["properties"]["cwd"] = {{"type", "string"}};
  output["properties"]["wait_command"] = {{"type", "string"},
                                          {"description", wait_doc}};
  output["required"] = {"task_id", "status", "wait_command"};
  return output;
}

Json StartedSchema() {
  return StartedSchema(
      "A `baton wait` command line (with this session) that returns when "
      "the task ends and prints its status, then its output's last lines "
      "or its open question; run it in a background shell to be woken");
}

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
  tool.input_schema = ArgumentSchema<RunArguments>();
  tool.output_schema = StartedSchema();
  // A shell command can do anything, anywhere: honest hints say so.
  tool.annotations = StartAnnotations(tool.title);
  tool.handler = HandleRun;
  return tool;
}

}  // namespace baton::mcp
