// `baton wait`: returns as soon as any of the tasks ends or asks (every
// one, with --all); also what a director runs in the background to be
// woken.
#include "baton/cli/verbs.h"
#include "baton/cli/wait_report.h"

namespace baton {
namespace {

struct WaitArgs {
  std::vector<std::string> ids;
  bool all = false;
  bool turn = false;
  std::string timeout;
};

int DoWait(const Context& ctx, const WaitArgs& args) {
  WaitOptions options{.ids = args.ids, .all = args.all, .turns = args.turn};
  if (!args.timeout.empty()) {
    auto timeout = ParseDurationFlag("--timeout", args.timeout);
    if (!timeout)
      return ReportError(ctx, timeout.error());
    options.timeout = *timeout;
  }
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  return WaitAndReport(ctx, *client, options);
}

}  // namespace

void DefineWait(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<WaitArgs>();
  command.add_option("ids", args->ids, "Task ids")->required();
  command.add_flag("--all", args->all, "Wait for every task");
  command.add_flag("--turn", args->turn,
                   "Also return when an agent task ends a turn, with the "
                   "turn's final text");
  command.add_option("--timeout", args->timeout, "Give up after (e.g. 30s)");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoWait(ctx, *args); };
  });
}

}  // namespace baton
