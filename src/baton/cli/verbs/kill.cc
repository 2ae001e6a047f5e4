// `baton kill`: stops tasks (SIGTERM to the group, SIGKILL after the grace).
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct KillArgs {
  std::vector<std::string> ids;
  std::string reason, grace;
};

int DoKill(const Context& ctx, const KillArgs& args) {
  KillRequest request{.tasks = args.ids, .reason = args.reason};
  if (!args.grace.empty()) {
    auto grace = ParseDurationFlag("--grace", args.grace);
    if (!grace)
      return ReportError(ctx, grace.error());
    request.grace = *grace;
  }
  return CallAndPrint(ctx, request, [](const KillReply& reply) {
    for (const KillResult& result : reply.results) {
      // What happened, in words (--json keeps the protocol's outcome).
      std::printf("%s: %s\n", result.id.c_str(),
                  result.outcome == KillOutcome::kRequested
                      ? "killed"
                      : "had already ended");
    }
    return kExitOk;
  });
}

}  // namespace

void DefineKill(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<KillArgs>();
  command.add_option("ids", args->ids, "Task ids")->required();
  command.add_option("--reason", args->reason, "Why (shown in its detail)");
  command.add_option("--grace", args->grace,
                     "Time between SIGTERM and SIGKILL (default 5s)");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoKill(ctx, *args); };
  });
}

}  // namespace baton
