// Handler of the `budget` request (doc/agents.md, "Session budgets"): the
// caller's session budget over its agent tasks, changed first when asked.
// The registry keeps it; a change is committed with its batch, before the
// reply, and the session's workers that the new budget leaves spent are
// stopped at once.
#include "baton/core/sessions.h"
#include "baton/daemon/daemon.h"
#include "baton/ipc/task_text.h"

namespace baton {

void Daemon::Handle(Connection& connection, const BudgetRequest& request,
                    Session session, Reply reply) {
  if (IsPersonSession(session)) {
    return reply(MakeError(
        ErrorCode::kInvalidArgument,
        "session \"*\" is a person's and owns no agent task, so it has no "
        "budget; give the session whose budget you mean (--session NAME)"));
  }
  bool change = request.clear || request.max_turns || request.max_tokens ||
                request.max_cost_usd;
  auto view = change ? registry_->budgets().Change(
                           session, {.clear = request.clear,
                                     .max_turns = request.max_turns,
                                     .max_tokens = request.max_tokens,
                                     .max_cost_usd = request.max_cost_usd})
                     : registry_->budgets().Of(session);
  if (change && view && !view->reached.empty())
    agents_->CheckSessionBudget(session);
  if (!view)
    return reply(std::unexpected(view.error()));
  if (change) {
    AuditRecord audit = AuditOf(connection, session, "budget");
    std::string budget = BudgetText(view->budget);
    audit.detail = budget.empty() ? "no budget" : "budget " + budget;
    registry_->audit().Record(std::move(audit), /*with_batch=*/true);
  }
  reply(BudgetReply{.session = view->session,
                    .budget = view->budget,
                    .usage = view->usage,
                    .agent_tasks = view->agent_tasks,
                    .reached = view->reached});
}

}  // namespace baton
