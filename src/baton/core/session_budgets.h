// Session budgets (doc/agents.md, "Session budgets"): a budget over all
// the agent tasks of one session, ended ones too. It keeps the sum of
// their usage for each session with a budget, so that the check after
// each usage report reads no rows (the agent runtime stops the session's
// workers once it is reached), and owns the changes of the batch it may
// have to take back.
#ifndef BATON_CORE_SESSION_BUDGETS_H_
#define BATON_CORE_SESSION_BUDGETS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/ports.h"
#include "baton/core/task.h"

namespace baton {

// A session's budget over its agent tasks and what they spent
// (doc/agents.md, "Session budgets").
struct SessionBudgetView {
  std::string session;
  AgentBudget budget;  // Empty: none.
  AgentUsage usage;    // Summed over its agent tasks, ended ones too.
  int64_t agent_tasks = 0;
  std::string reached;  // BudgetReached's detail; "" while none is.
};

// A change to a session's budget: `clear` removes it all first; then each
// limit given replaces the session's, 0 removes it, nullopt leaves it.
struct SessionBudgetChange {
  bool clear = false;
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
};

class SessionBudgets {
 public:
  // Borrows the store; it must outlive this.
  explicit SessionBudgets(TaskStore* store) : store_(store) {}

  // Loads the stored budgets and sums their sessions' usage. Call once.
  Status Recover();

  // A session is a non-empty owner: unowned tasks have none. A change is
  // stored with the batch; errors say what to do. Each sums the session's
  // tasks once, for the view.
  Result<SessionBudgetView> Change(const std::string& session,
                                   const SessionBudgetChange& change);
  Result<SessionBudgetView> Of(const std::string& session);
  // The detail of the budget its usage reached ("budget: session build's
  // max-tokens 200000 reached"); "" while none is, or it has none.
  std::string Reached(const std::string& session) const;
  bool Has(const std::string& session) const {
    return !session.empty() && budgets_.contains(session);
  }
  // Calls `visit(session, budget, usage)` for each session with a budget,
  // from what is kept (no store reads): /metrics' budgets left.
  template <class F>
  void ForEach(F&& visit) const {
    for (const auto& [session, spend] : budgets_)
      visit(session, spend.budget, spend.usage);
  }
  // An agent task of `session` reported `usage`, where it had reported
  // `before`: the session's sum follows.
  void UsageMoved(const std::string& session, const AgentUsage& before,
                  const AgentUsage& usage);

  // The batch was committed: nothing of it is taken back any more.
  void Committed() { batch_.clear(); }
  // The batch's commit failed and the store dropped it (DropBatch): its
  // changes go here too. Call once the tasks the batch kept are written
  // again: a budget taken back is summed again from them.
  void RollBack();

 private:
  struct Spend {
    AgentBudget budget;
    AgentUsage usage;
  };
  // What the agent tasks of `session` spent, and how many there are.
  Result<std::pair<AgentUsage, int64_t>> Sum(const std::string& session);

  TaskStore* store_;
  std::map<std::string, Spend> budgets_;
  // This batch's changes, in order: the session and its budget before.
  std::vector<std::pair<std::string, AgentBudget>> batch_;
};

}  // namespace baton

#endif  // BATON_CORE_SESSION_BUDGETS_H_
