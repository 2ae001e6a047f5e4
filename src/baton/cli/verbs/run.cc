// `baton run`: starts a command in the background.
#include <fmt/format.h>

#include "baton/cli/task_start.h"
#include "baton/cli/verbs.h"
#include "baton/util/byte_size.h"

namespace baton {
namespace {

struct RunArgs {
  std::string label;
  std::vector<std::string> env;
  std::vector<std::string> command;
  PlacementFlags placement;
  SlurmFlags slurm;
  LimitFlags limits;
  std::string max_output;
  RetryFlags retry;
  bool no_redact = false;
  bool wait = false;
};

int DoRun(const Context& ctx, const RunArgs& args) {
  if (args.command.empty()) {
    return ReportError(ctx, {ErrorCode::kInvalidArgument,
                             "empty command; give the command after --, "
                             "e.g. baton run -- make -j4"});
  }
  RunRequest request;
  for (size_t i = 0; i < args.command.size(); ++i) {
    if (auto ok = CheckArgumentText(
            fmt::format("argument {} of the command", i + 1), args.command[i]);
        !ok) {
      return ReportError(ctx, ok.error());
    }
  }
  // One argument is a shell line; several are an argv, run as given.
  if (args.command.size() == 1) {
    request.command = args.command[0];
  } else {
    request.argv = args.command;
  }
  request.label = args.label;
  for (const auto& entry : args.env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ReportError(
          ctx, {ErrorCode::kInvalidArgument,
                fmt::format("--env '{}' is not NAME=VALUE; e.g. --env "
                            "MODE=fast",
                            entry)});
    }
    request.env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (auto placed = PlaceTask(request, args.placement, args.slurm, args.limits);
      !placed) {
    return ReportError(ctx, placed.error());
  }
  if (!args.max_output.empty()) {
    auto bytes = ParseByteSize(args.max_output);
    if (!bytes) {
      return ReportError(ctx, {ErrorCode::kInvalidArgument,
                               "--max-output: " + bytes.error().message});
    }
    request.max_output = *bytes;
  }
  if (args.no_redact)
    request.redact = false;
  auto retry = RetryFieldsOf(args.retry);
  if (!retry)
    return ReportError(ctx, retry.error());
  request.retry = *retry;
  // --wait: until it ends, then exit with the command's own code.
  return StartTask(ctx, request,
                   args.wait ? AfterStart::kWaitForEnd : AfterStart::kReturn);
}

}  // namespace

void DefineRun(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<RunArgs>();
  command.add_option("--label", args->label, "A name for people");
  command.add_option("--cwd", args->placement.cwd,
                     "Working directory (default: here)");
  command.add_option("--env", args->env, "Extra variable NAME=VALUE")
      ->take_all()
      ->allow_extra_args(false);
  command.add_option("--timeout", args->placement.timeout,
                     "Kill it after this long (e.g. 30s, 5m)");
  command
      .add_option("--check", args->placement.checks,
                  "A check command run in its folder when it ends")
      ->allow_extra_args(false);
  AddScheduleFlags(command, args->placement);
  AddSlurmFlags(command, args->slurm);
  AddLimitFlags(command, args->limits);
  command.add_option("--max-output", args->max_output,
                     "Keep this much output (e.g. 100M; 0: all); past it, "
                     "output is dropped and counted (default 1G)");
  AddRetryFlags(command, args->retry);
  command.add_flag("--no-redact", args->no_redact,
                   "Keep secrets in its output as printed (by default API "
                   "keys and tokens of well-known shapes are masked)");
  command.add_flag("--wait", args->wait,
                   "Wait for it and exit with its exit code");
  command
      .add_option("command", args->command,
                  "The command: one argument is a shell line, several are "
                  "run as given")
      ->required();
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoRun(ctx, *args); };
  });
}

}  // namespace baton
