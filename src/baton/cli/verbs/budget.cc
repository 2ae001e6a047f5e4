// `baton budget`: the session's budget over all its agent tasks, and what
// they spent (doc/agents.md, "Session budgets"). With a limit it sets that
// one first (0 removes it); --clear removes them all.
#include <cstdio>

#include "baton/cli/verbs.h"
#include "baton/ipc/task_text.h"

namespace baton {
namespace {

int PrintBudget(const BudgetReply& reply) {
  std::fputs(SessionBudgetText(reply).c_str(), stdout);
  return kExitOk;
}

}  // namespace

void DefineBudget(CLI::App& command, const Context& ctx, Action& action) {
  auto request = std::make_shared<BudgetRequest>();
  command
      .add_option("--max-turns", request->max_turns,
                  "Stop the session's agents past N model turns together "
                  "(0: no limit)")
      ->check(WholeNumber(0, kMaxUsageCount));
  command
      .add_option("--max-tokens", request->max_tokens,
                  "Stop them once they used N tokens together, input and "
                  "output (0: no limit)")
      ->check(WholeNumber(0, kMaxUsageCount));
  command
      .add_option("--max-cost", request->max_cost_usd,
                  "Stop them once they cost USD dollars together, where the "
                  "CLI reports a cost (0: no limit)")
      ->check(DecimalNumber(0, kMaxCostUsd));
  command.add_flag("--clear", request->clear, "Remove the session's budget");
  command.callback([&ctx, &action, request] {
    // --clear with a limit is refused by batond (BudgetRequest::Validate).
    action = [&ctx, request] {
      return CallAndPrint(ctx, *request, PrintBudget);
    };
  });
}

}  // namespace baton
