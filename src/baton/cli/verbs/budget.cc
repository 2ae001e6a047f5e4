// `baton budget`: the session's budget over all its agent tasks, and what
// they spent (doc/agents.md, "Session budgets"). With a limit it sets that
// one first (0 removes it); --clear removes them all.
#include <fmt/format.h>

#include <cstdio>

#include "baton/cli/verbs.h"
#include "baton/ipc/task_text.h"

namespace baton {
namespace {

int PrintBudget(const BudgetReply& reply) {
  std::string budget = BudgetText(reply.budget);
  std::printf("session %s: %s\n", reply.session.c_str(),
              budget.empty() ? "no budget" : ("budget " + budget).c_str());
  std::printf("spent: %lld agent task%s, %s\n",
              static_cast<long long>(reply.agent_tasks),
              reply.agent_tasks == 1 ? "" : "s",
              UsageText(reply.usage).c_str());
  if (!reply.reached.empty())
    std::printf("reached: %s\n", reply.reached.c_str());
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
      ->check(CLI::Range(0.0, 1e9));
  command.add_flag("--clear", request->clear, "Remove the session's budget");
  command.callback([&ctx, &action, request] {
    // --clear with a limit is refused by batond (BudgetRequest::Validate).
    action = [&ctx, request] {
      return CallAndPrint(ctx, *request, PrintBudget);
    };
  });
}

}  // namespace baton
