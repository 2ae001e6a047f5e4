// `baton delegate`: hands a brief to an agent CLI in the background.
#include <unistd.h>

#include <limits>

#include "baton/cli/task_start.h"
#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct DelegateArgs {
  std::string agent, model, label, resume;
  PlacementFlags placement;
  SlurmFlags slurm;
  LimitFlags limits;
  RetryFlags retry;
  std::vector<std::string> brief;
  bool wait = false;
  bool worktree = false, no_worktree = false;
  int64_t max_turns = 0, max_tokens = 0;  // 0: the profile's.
  double max_cost = 0;
};

int DoDelegate(const Context& ctx, const DelegateArgs& args) {
  DelegateRequest request;
  request.brief = JoinWords(args.brief);
  if (request.brief.empty() && !::isatty(0)) {
    char buf[65536];
    for (ssize_t n; (n = ::read(0, buf, sizeof buf)) > 0;)
      request.brief.append(buf, static_cast<size_t>(n));
  }
  // Without --agent, batond picks: the resumed task's agent, else the
  // default one.
  request.agent = args.agent;
  request.model = args.model;
  request.label = args.label;
  request.resume_from = args.resume;
  // Neither flag: the profile's default.
  if (args.worktree || args.no_worktree)
    request.worktree = args.worktree;
  if (args.max_turns > 0)
    request.max_turns = args.max_turns;
  if (args.max_tokens > 0)
    request.max_tokens = args.max_tokens;
  if (args.max_cost > 0)
    request.max_cost_usd = args.max_cost;
  if (auto placed = PlaceTask(request, args.placement, args.slurm, args.limits);
      !placed) {
    return ReportError(ctx, placed.error());
  }
  auto retry = RetryFieldsOf(args.retry);
  if (!retry)
    return ReportError(ctx, retry.error());
  request.retry = *retry;
  // A resumed task runs where its session ran, unless --cwd says otherwise
  // (batond takes the ended task's folder when none is sent).
  if (args.placement.cwd.empty() && TaskId::Parse(args.resume))
    request.cwd.clear();
  // --wait: until it ends or asks something.
  return StartTask(ctx, request,
                   args.wait ? AfterStart::kWaitForNews : AfterStart::kReturn);
}

}  // namespace

void DefineDelegate(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<DelegateArgs>();
  command.add_option("--agent", args->agent,
                     "claude (default), codex, codex-exec, gemini, opencode, "
                     "qwen, dsh, or a configured profile");
  command.add_option("--model", args->model, "<provider>/<model>[:<effort>]");
  command.add_option("--label", args->label, "A name for people");
  command.add_option("--cwd", args->placement.cwd, "Working directory");
  command
      .add_option("--check", args->placement.checks,
                  "A check command run when it ends")
      ->take_all()
      ->allow_extra_args(false);
  command.add_option(
      "--resume", args->resume,
      "Resume the session of an ended task (or a CLI session id)");
  command.add_option("--timeout", args->placement.timeout,
                     "Deadline (default 30m)");
  AddScheduleFlags(command, args->placement);
  AddSlurmFlags(command, args->slurm);
  AddLimitFlags(command, args->limits);
  // A failed worker starts again from its brief (doc/agents.md, "Retries").
  AddRetryFlags(command, args->retry);
  auto* worktree = command.add_flag(
      "--worktree", args->worktree,
      "Run it in a new git worktree, on a new branch baton/<task id> made "
      "from HEAD (default: the profile's worktree setting)");
  command
      .add_flag("--no-worktree", args->no_worktree,
                "Run it in the folder itself, whatever the profile says")
      ->excludes(worktree);
  // Budgets (doc/agents.md, "Budgets"): past one, batond interrupts the
  // worker and it ends killed.
  constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();
  command
      .add_option("--max-turns", args->max_turns,
                  "Stop it past N model turns (default: the profile's)")
      ->check(WholeNumber(1, kMaxCount));
  command
      .add_option("--max-tokens", args->max_tokens,
                  "Stop it once it used N tokens, input and output")
      ->check(WholeNumber(1, kMaxCount));
  command
      .add_option("--max-cost", args->max_cost,
                  "Stop it once it cost USD dollars (where the CLI reports "
                  "a cost)")
      ->check(PositiveAmount(kMaxCostUsd));
  command.add_flag("--wait", args->wait,
                   "Wait until it ends or asks something");
  command.add_option("brief", args->brief, "What to do (or on stdin)");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoDelegate(ctx, *args); };
  });
}

}  // namespace baton
