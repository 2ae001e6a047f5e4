// `baton edit`: changes a task that is still held, before it starts
// (doc/tasks.md, "Editing a queued task"), as pueue's `edit`: each flag
// given replaces the task's, a command after `--` replaces its command.
#include <fmt/format.h>

#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct EditArgs {
  std::string id;
  std::string label, queue, timeout, cwd;
  int64_t priority = 0;
  std::vector<std::string> after, after_any, env, command;
  bool no_after = false;
  // Which flags were given (an empty --label is a change: no label).
  CLI::Option* label_flag = nullptr;
  CLI::Option* priority_flag = nullptr;
  CLI::Option* queue_flag = nullptr;
};

Result<EditRequest> RequestOf(const EditArgs& args) {
  auto invalid = [](std::string message) {
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  };
  EditRequest request{.task = args.id};
  if (args.label_flag->count())
    request.label = args.label;
  if (args.priority_flag->count())
    request.priority = args.priority;
  if (args.queue_flag->count())
    request.queue = args.queue;
  int after_flags = !args.after.empty() + !args.after_any.empty() +
                    static_cast<int>(args.no_after);
  if (after_flags > 1) {
    return invalid(
        "--after, --after-any and --no-after do not go together; use one");
  }
  if (!args.after.empty())
    request.after = args.after;
  if (!args.after_any.empty()) {
    request.after = args.after_any;
    request.after_any = true;
  }
  if (args.no_after)
    request.after = std::vector<std::string>{};
  if (!args.timeout.empty()) {
    auto timeout = ParseDurationFlag("--timeout", args.timeout);
    if (!timeout)
      return std::unexpected(timeout.error());
    if (timeout->count() <= 0) {
      return invalid(fmt::format(
          "--timeout must be more than 0 (got {}), e.g. --timeout 30m",
          args.timeout));
    }
    request.timeout = *timeout;
  }
  for (const std::string& entry : args.env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return invalid(fmt::format(
          "--env '{}' is not NAME=VALUE; e.g. --env MODE=fast", entry));
    }
    request.env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (!args.cwd.empty())
    request.cwd = args.cwd[0] == '/' ? args.cwd : CurrentDir() + "/" + args.cwd;
  for (size_t i = 0; i < args.command.size(); ++i) {
    if (auto ok = CheckArgumentText(
            fmt::format("argument {} of the command", i + 1), args.command[i]);
        !ok) {
      return std::unexpected(ok.error());
    }
  }
  // As `run`: one argument is a shell line; several are an argv.
  if (args.command.size() == 1) {
    request.command = args.command[0];
  } else if (args.command.size() > 1) {
    request.argv = args.command;
  }
  bool any = request.label || request.priority || request.queue ||
             request.after || request.timeout || !request.env.empty() ||
             request.cwd || request.command || request.argv;
  if (!any) {
    return invalid(fmt::format(
        "nothing to change; give what is new, e.g. baton edit {} --priority "
        "5, or a new command after --: baton edit {} -- make -j4 (baton edit "
        "--help lists the flags)",
        args.id, args.id));
  }
  return request;
}

int DoEdit(const Context& ctx, const EditArgs& args) {
  auto request = RequestOf(args);
  if (!request)
    return ReportError(ctx, request.error());
  return CallAndPrint(ctx, *request, [](const TaskReply& reply) {
    const TaskRecord& task = reply.task.task;
    // "shell-4 edited: queued (queue gpu: 1 of 1 running)".
    std::string line = fmt::format("{} edited: {}", task.id.ToString(),
                                   TaskStatusName(task.status));
    if (!task.detail.empty())
      line += fmt::format(" ({})", task.detail);
    std::printf("%s\n", line.c_str());
    return kExitOk;
  });
}

}  // namespace

void DefineEdit(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<EditArgs>();
  command.add_option("id", args->id, "The queued task's id")->required();
  args->label_flag =
      command.add_option("--label", args->label, "A new label ('' for none)");
  args->priority_flag =
      command
          .add_option("--priority", args->priority,
                      "A new priority: higher starts first within its queue")
          ->check(WholeNumber(-1'000'000, 1'000'000));
  args->queue_flag = command.add_option(
      "--queue", args->queue, "Another queue (default: the default queue)");
  command
      .add_option("--after", args->after,
                  "Start once these tasks completed (ID[,ID...]); replaces "
                  "what it waited for")
      ->delimiter(',')
      ->allow_extra_args(false);
  command
      .add_option("--after-any", args->after_any,
                  "Start at the first end of any of these (ID[,ID...])")
      ->delimiter(',')
      ->allow_extra_args(false);
  command.add_flag("--no-after", args->no_after,
                   "Wait for no other task any more");
  command.add_option("--timeout", args->timeout,
                     "A new timeout (e.g. 30s, 5m)");
  command
      .add_option("--env", args->env,
                  "Set a variable NAME=VALUE (over its own; a shell task's)")
      ->take_all()
      ->allow_extra_args(false);
  command.add_option("--cwd", args->cwd,
                     "A new working directory (a shell task's)");
  command.add_option("command", args->command,
                     "A new command after --: one argument is a shell line, "
                     "several are run as given");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoEdit(ctx, *args); };
  });
}

}  // namespace baton
