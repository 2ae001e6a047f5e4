// The `delegate` tool: hands a brief to an agent CLI (Claude Code, Codex,
// an ACP agent, ...) running headless as a background agent task, and
// returns at once with its id and a `baton wait` command line.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"

namespace baton::mcp {
namespace {

void HandleDelegate(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  std::vector<std::string_view> names = {
      "brief",        "agent",     "model",     "label",     "cwd",
      "resume_from",  "checks",    "timeout_s", "queue",     "priority",
      "after",        "after_any", "worktree",  "max_turns", "max_tokens",
      "max_cost_usd", "ask"};
  names.insert(names.end(), std::begin(kSlurmArguments),
               std::end(kSlurmArguments));
  names.insert(names.end(), std::begin(kLimitArguments),
               std::end(kLimitArguments));
  names.insert(names.end(), std::begin(kRetryArguments),
               std::end(kRetryArguments));
  if (auto known = CheckKnownArguments(args, names); !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  auto brief = RequiredString(
      args, "brief", "\"Fix the failing test in tests/parse_test.cc\"");
  if (!brief)
    return call->Finish(ToolResult::Error(brief.error().message));
  DelegateRequest request;
  request.brief = *brief;
  for (auto [name, field] :
       {std::pair{"agent", &request.agent}, std::pair{"model", &request.model},
        std::pair{"label", &request.label},
        std::pair{"resume_from", &request.resume_from}}) {
    auto value = OptionalString(args, name);
    if (!value)
      return call->Finish(ToolResult::Error(value.error().message));
    *field = std::move(*value);
  }
  auto cwd = OptionalString(args, "cwd");
  if (!cwd)
    return call->Finish(ToolResult::Error(cwd.error().message));
  auto timeout = TimeoutSeconds(
      args, "the profile's default (else the config's, else 30 minutes)");
  if (!timeout)
    return call->Finish(ToolResult::Error(timeout.error().message));
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
  auto retry = RetryArguments(args);
  if (!retry)
    return call->Finish(ToolResult::Error(retry.error().message));
  request.retry = *retry;
  if (args.contains("worktree")) {
    auto worktree = OptionalBool(args, "worktree", false);
    if (!worktree)
      return call->Finish(ToolResult::Error(worktree.error().message));
    request.worktree = *worktree;
  }
  // Its budget (doc/agents.md, "Budgets"); absent: the profile's.
  for (auto [name, field] : {std::pair{"max_turns", &request.max_turns},
                             std::pair{"max_tokens", &request.max_tokens}}) {
    auto count = OptionalCount(args, name);
    if (!count)
      return call->Finish(ToolResult::Error(count.error().message));
    *field = *count;
  }
  auto cost = OptionalNumber(args, "max_cost_usd", 0);
  if (!cost || (*cost && !IsCostBudget(**cost))) {
    return call->Finish(ToolResult::Error(
        fmt::format("argument 'max_cost_usd' must be {}", kCostBudgetRule)));
  }
  request.max_cost_usd = *cost;
  if (const Json* ask = FindArgument(args, "ask")) {
    Asker asker{};
    if (!DecodeValue(*ask, asker, {}, "ask")) {
      return call->Finish(ToolResult::Error(fmt::format(
          "argument 'ask' must be \"director\" (you answer its questions, "
          "the default) or \"person\" (your user answers them in a form); "
          "got {}",
          ask->dump())));
    }
    request.ask = asker;
  }
  if (request.ask == Asker::kPerson && !call->CanAskPerson()) {
    return call->Finish(ToolResult::Error(
        "ask: \"person\" needs a client that can show its user a form, and "
        "this one did not declare elicitation (form) in its capabilities; "
        "leave 'ask' out and answer the agent's questions with task_answer "
        "(nothing was started)"));
  }
  // A relative cwd is relative to the server's. Without one, a resumed
  // task runs where its session ran (the daemon's choice), a new one here.
  if (!cwd->empty()) {
    request.cwd = (*cwd)[0] == '/' ? *cwd : call->facts().cwd + "/" + *cwd;
  } else if (request.resume_from.empty()) {
    request.cwd = call->facts().cwd;
  }
  if (*timeout) {
    auto ms = TimeoutArgument(**timeout);
    if (!ms)
      return call->Finish(ToolResult::Error(ms.error().message));
    request.timeout = *ms;
  }
  request.base_env = ProcessEnvironment();
  std::string agent = request.agent.empty() ? "claude" : request.agent;
  std::string model = request.model;

  call->Daemon(request, [call, agent = std::move(agent),
                         model](Result<TaskReply> reply) mutable {
    if (!reply) {
      std::string text = DaemonErrorText(reply.error());
      if (reply.error().code == ErrorCode::kInvalidModel)
        text += " (or leave 'model' out for the agent's default)";
      else if (reply.error().code == ErrorCode::kResumeNotFound)
        text += " (delegate a new task without resume_from instead)";
      return call->Finish(
          ToolResult::Error(std::move(text) + " (nothing was started)"));
    }
    const TaskRecord& task = reply->task.task;
    // The profile batond chose (a resumed task's own, when none was named).
    if (task.spec.agent && !task.spec.agent->profile.empty())
      agent = task.spec.agent->profile;
    std::string id = task.id.ToString();
    std::string wait_command = WaitCommand(call->facts(), id);
    Json structured = TaskSummary(task);
    structured["agent"] = agent;
    structured["model"] = model;
    structured["cwd"] = task.spec.cwd;
    structured["wait_command"] = wait_command;
    std::string text;
    if (task.status == TaskStatus::kFailed) {
      text = fmt::format("{} could not start: {}\n[status: failed, {}]\n", id,
                         task.detail, task.detail);
    } else {
      text = fmt::format(
          "Delegated to {} as {} [status: {}].\n"
          "You will be told when it ends or asks a question (with any tool "
          "result); do other work meanwhile and do not redo its work. When "
          "you need its result, call task_output with {{\"task_ids\": "
          "[\"{}\"], \"wait\": true}}: it returns when the agent ends OR "
          "asks (then answer with task_answer). Direct it with task_send "
          "(mode steer or followup).\n"
          "To be woken from a background shell instead: {}\n",
          agent, TaskName(task), TaskStatusName(task.status), id, wait_command);
      if (task.spec.agent && task.spec.agent->worktree) {
        const Worktree& worktree = *task.spec.agent->worktree;
        text += fmt::format(
            "It works in its own git worktree {} on branch {} (from {}); "
            "merge the branch to keep its work.\n",
            worktree.path, worktree.branch, worktree.base.substr(0, 12));
        structured["worktree"] = {{"path", worktree.path},
                                  {"branch", worktree.branch},
                                  {"base", worktree.base}};
      }
      // batond ran another adapter than the profile's (a codex without
      // app-server runs codex exec, which cannot be steered or asked).
      if (task.spec.agent && !task.spec.agent->note.empty()) {
        text += "Note: " + task.spec.agent->note + "\n";
        structured["note"] = task.spec.agent->note;
      }
    }
    if (task.spec.agent && task.spec.agent->AsksPerson() &&
        !IsTerminal(task.status)) {
      text +=
          "Its questions go to your user, in a form of your client; you "
          "need not answer them (the first answer wins).\n";
      call->WatchPersonQuestions(id);
    }
    call->Finish({std::move(text), std::move(structured), false, reply->task});
  });
}

}  // namespace

ToolDefinition DelegateToolDefinition() {
  ToolDefinition tool;
  tool.name = "delegate";
  tool.title = "Delegate a brief to an agent";
  tool.description =
      "Hand a brief to a coding agent (Claude Code by default; codex, "
      "gemini, opencode, qwen, dsh) that works headless in the background "
      "as an agent task, and return at once with its task id. Its events "
      "(text, tools used, questions) are kept; task_output with wait: true "
      "returns when it ends or asks a question (answer with task_answer); "
      "task_send steers it or queues a follow-up. resume_from continues an "
      "ended task's session as a new task. checks are commands run in its "
      "folder when it ends. The result's wait_command is a shell line that "
      "blocks until the task ends and prints its status and last lines or "
      "its question: for a client that wakes you when a background shell "
      "ends.";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"brief",
            {{"type", "string"},
             {"description",
              "What the agent should do, self-contained (it does not see "
              "your conversation)"}}},
           {"agent",
            {{"type", "string"},
             {"description",
              "The agent profile: claude (default), codex, codex-exec "
              "(codex exec, for a codex without app-server), gemini, "
              "opencode, qwen, dsh, or one from baton's config"}}},
           {"model",
            {{"type", "string"},
             {"description",
              "<provider>/<model>[:<effort>], e.g. "
              "anthropic/claude-sonnet-4-5:high (effort: off, minimal, low, "
              "medium, high, xhigh, max); default: the profile's, then the "
              "CLI's own"}}},
           {"label",
            {{"type", "string"},
             {"description",
              "A short name for the task, e.g. \"fix-parser\""}}},
           {"cwd",
            {{"type", "string"},
             {"description",
              "Working directory (absolute, or relative to the server's); "
              "default: the server's, or for a resume where the session ran"}}},
           {"resume_from",
            {{"type", "string"},
             {"description",
              "Continue the session of an ended agent task (its id, e.g. "
              "agent-1) or an agent CLI session id, as a new task"}}},
           {"checks",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description",
              "Shell commands run in its folder when it ends, e.g. [\"make "
              "test\"]; their exit codes and last lines join the result"}}},
           {"timeout_s",
            {{"type", "number"},
             {"exclusiveMinimum", 0},
             {"description",
              "Stop the agent after this many seconds; default: 1800"}}},
           {"worktree",
            {{"type", "boolean"},
             {"description",
              "true: the agent works in a new git worktree on a new branch "
              "baton/<task id> made from HEAD, so parallel agents in one "
              "repository never touch each other's files; its evidence "
              "names the branch, its commits and diff. Default: the "
              "profile's"}}},
           {"max_turns",
            {{"type", "integer"},
             {"minimum", 1},
             {"description",
              "Budget: stop the agent past this many model turns; it ends "
              "killed with detail 'budget: max-turns N reached'. Default: "
              "the profile's, else no limit"}}},
           {"max_tokens",
            {{"type", "integer"},
             {"minimum", 1},
             {"description",
              "Budget: stop the agent once it used this many tokens (input, "
              "cached input included, plus output), as its CLI reports "
              "them"}}},
           {"max_cost_usd",
            {{"type", "number"},
             {"exclusiveMinimum", 0},
             {"description",
              "Budget: stop the agent once it cost this many US dollars "
              "(Claude Code reports a cost; the others only tokens)"}}},
           {"ask",
            {{"type", "string"},
             {"enum", EnumNames<Asker>()},
             {"description",
              "Who answers the agent's questions: director (you, with "
              "task_answer; the default) or person (your user, in a form "
              "your client shows; needs a client with elicitation)"}}},
       }},
      {"required", {"brief"}},
      {"additionalProperties", false},
  };
  Json output = TaskSummarySchema();
  output["properties"]["agent"] = {{"type", "string"},
                                   {"description", "the agent profile"}};
  output["properties"]["model"] = {
      {"type", "string"},
      {"description", "the model asked for (\"\": the default)"}};
  output["properties"]["cwd"] = {{"type", "string"}};
  output["properties"]["worktree"] = {
      {"type", "object"},
      {"description", "its own worktree, when it has one"},
      {"properties",
       {{"path", {{"type", "string"}}},
        {"branch", {{"type", "string"}}},
        {"base", {{"type", "string"}, {"description", "the commit"}}}}}};
  output["properties"]["note"] = {
      {"type", "string"},
      {"description",
       "Why batond ran another adapter than the profile's, e.g. a codex "
       "without app-server runs through codex exec (no steering, no "
       "questions)"}};
  output["properties"]["wait_command"] = {
      {"type", "string"},
      {"description",
       "A `baton wait` command line (with this session) that returns when "
       "the task ends or asks, and prints its status, then its output's "
       "last lines or the question; run it in a background shell to be "
       "woken"}};
  output["required"] = {"task_id", "status", "agent", "wait_command"};
  tool.output_schema = std::move(output);
  // An agent edits files and runs commands: honest hints say so.
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", false},
                      {"openWorldHint", true}};
  tool.handler = HandleDelegate;
  AddScheduleProperties(tool.input_schema["properties"]);
  AddSlurmProperties(tool.input_schema["properties"]);
  AddLimitProperties(tool.input_schema["properties"]);
  AddRetryProperties(tool.input_schema["properties"]);
  return tool;
}

}  // namespace baton::mcp
