// The `delegate` tool: hands a brief to an agent CLI (Claude Code, Codex,
// an ACP agent, ...) running headless as a background agent task, and
// returns at once with its id and a `baton wait` command line.
#include <fmt/format.h>

#include "baton/mcp/tools/start_arguments.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"

namespace baton::mcp {
namespace {

// The arguments, each described once (mcp/arguments.h).
struct DelegateArguments {
  std::string brief;
  std::string agent;
  std::string model;
  std::string resume_from;
  std::optional<Seconds> timeout_s;
  std::optional<bool> worktree;
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
  std::optional<Asker> ask;
  StartArguments start;
  template <class V>
  void Fields(V& v) {
    v("brief", brief,
      {.required = true,
       .non_empty = true,
       .max_bytes = kMaxTextBytes,
       .doc = "What the agent should do, self-contained (it does not see "
              "your conversation)",
       .example = "\"Fix the failing test in tests/parse_test.cc\""});
    v("agent", agent,
      {.max_bytes = kMaxNameBytes,
       .doc = "The agent profile: claude (default), codex, codex-exec (codex "
              "exec, for a codex without app-server), gemini, opencode, "
              "qwen, dsh, or one from baton's config"});
    v("model", model,
      {.max_bytes = kMaxNameBytes,
       .doc = "<provider>/<model>[:<effort>], e.g. "
              "anthropic/claude-sonnet-4-5:high (effort: off, minimal, low, "
              "medium, high, xhigh, max); default: the profile's, then the "
              "CLI's own"});
    v("resume_from", resume_from,
      {.max_bytes = kMaxNameBytes,
       .doc = "Continue the session of an ended agent task (its id, e.g. "
              "agent-1) or an agent CLI session id, as a new task"});
    v("timeout_s", timeout_s,
      {.doc = "Stop the agent after this many seconds",
       .example = "1800",
       .when_absent = "the profile's default (else the config's, else 30 "
                      "minutes)"});
    v("worktree", worktree,
      {.doc = "true: the agent works in a new git worktree on a new branch "
              "baton/<task id> made from HEAD, so parallel agents in one "
              "repository never touch each other's files; its evidence "
              "names the branch, its commits and diff. Default: the "
              "profile's"});
    v("max_turns", max_turns,
      {.min = 1,
       .doc = "Budget: stop the agent past this many model turns; it ends "
              "killed with detail 'budget: max-turns N reached'. Default: "
              "the profile's, else no limit",
       .example = "20"});
    v("max_tokens", max_tokens,
      {.min = 1,
       .doc = "Budget: stop the agent once it used this many tokens (input, "
              "cached input included, plus output), as its CLI reports them",
       .example = "200000"});
    v("max_cost_usd", max_cost_usd,
      {.min = 0,
       .max = static_cast<int64_t>(kMaxCostUsd),
       .above_min = true,
       .doc = "Budget: stop the agent once it cost this many US dollars "
              "(Claude Code reports a cost; the others only tokens)",
       .example = "2.5"});
    v("ask", ask,
      {.doc = "Who answers the agent's questions: director (you, with "
              "task_answer; the default) or person (your user, in a form "
              "your client shows; needs a client with elicitation)"});
    start.Fields(v);
  }
};

void HandleDelegate(const ToolCallPtr& call) {
  auto args = ParseArguments<DelegateArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  if (args->ask == Asker::kPerson && !call->CanAskPerson()) {
    return call->Finish(ToolResult::Error(
        "ask: \"person\" needs a client that can show its user a form, and "
        "this one did not declare elicitation (form) in its capabilities; "
        "leave 'ask' out and answer the agent's questions with task_answer "
        "(nothing was started)"));
  }
  DelegateRequest request;
  request.brief = args->brief;
  request.agent = args->agent;
  request.model = args->model;
  request.resume_from = args->resume_from;
  if (args->timeout_s)
    request.timeout = args->timeout_s->Milliseconds();
  request.worktree = args->worktree;
  request.max_turns = args->max_turns;
  request.max_tokens = args->max_tokens;
  request.max_cost_usd = args->max_cost_usd;
  request.ask = args->ask;
  // Without a cwd, a resumed task runs where its session ran (the daemon's
  // choice), a new one here.
  args->start.ApplyTo(request, call->facts().cwd);
  if (request.cwd.empty() && request.resume_from.empty())
    request.cwd = call->facts().cwd;
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
    auto [wait_command, structured] = StartedFieldsOf(call, task);
    structured["agent"] = agent;
    structured["model"] = model;
    std::string text = CouldNotStartText(task);
    if (text.empty()) {
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
  tool.input_schema = ArgumentSchema<DelegateArguments>();
  Json output = StartedSchema(
      "A `baton wait` command line (with this session) that returns when "
      "the task ends or asks, and prints its status, then its output's "
      "last lines or the question; run it in a background shell to be "
      "woken");
  output["properties"]["agent"] = {{"type", "string"},
                                   {"description", "the agent profile"}};
  output["properties"]["model"] = {
      {"type", "string"},
      {"description", "the model asked for (\"\": the default)"}};
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
  output["required"].push_back("agent");
  tool.output_schema = std::move(output);
  // An agent edits files and runs commands: honest hints say so.
  tool.annotations = StartAnnotations(tool.title);
  tool.handler = HandleDelegate;
  return tool;
}

}  // namespace baton::mcp
