#include "baton/core/session_budgets.h"

#include <fmt/format.h>

#include <cmath>

#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {
namespace {

std::string Whose(const std::string& session) {
  return fmt::format("session {}", session);
}

std::unexpected<Error> NoSession() {
  return MakeError(ErrorCode::kInvalidArgument,
                   "a budget belongs to a session, and this client has none; "
                   "name one with --session NAME or BATON_SESSION");
}

Status CheckChange(const SessionBudgetChange& change) {
  for (auto [value, name] : {std::pair(change.max_turns, "max-turns"),
                             std::pair(change.max_tokens, "max-tokens")}) {
    if (value && *value < 0) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("a session's {} must be 0 (none) or more", name));
    }
  }
  // 0 removes a session's limit; any other value is a budget's.
  if (change.max_cost_usd && *change.max_cost_usd != 0 &&
      !IsCostBudget(*change.max_cost_usd)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("a session's max-cost must be 0 (none) or {}",
                                 kCostBudgetRule));
  }
  return {};
}

// `given` into `limit`: 0 removes it, nullopt leaves it.
template <class T>
void Apply(std::optional<T>& limit, const std::optional<T>& given) {
  if (given)
    limit = *given == 0 ? std::nullopt : given;
}

}  // namespace

Result<std::pair<AgentUsage, int64_t>> SessionBudgets::Sum(
    const std::string& session) {
  // The session's tasks and the unowned ones, buffered writes included.
  auto tasks = store_->ListTasks({.owner = session});
  if (!tasks)
    return std::unexpected(tasks.error());
  AgentUsage sum;
  int64_t agent_tasks = 0;
  for (const TaskRecord& task : *tasks) {
    if (task.spec.owner != session || !task.spec.agent)
      continue;
    ++agent_tasks;
    if (task.usage)
      sum = AddUsage(sum, *task.usage);
  }
  return std::pair(sum, agent_tasks);
}

Status SessionBudgets::Recover() {
  auto budgets = store_->LoadSessionBudgets();
  if (!budgets)
    return std::unexpected(budgets.error());
  for (auto& [session, budget] : *budgets) {
    auto sum = Sum(session);
    if (!sum)
      return std::unexpected(sum.error());
    budgets_[session] = {.budget = budget, .usage = sum->first};
  }
  return {};
}

Result<SessionBudgetView> SessionBudgets::Change(
    const std::string& session, const SessionBudgetChange& change) {
  if (session.empty())
    return NoSession();
  if (auto valid = CheckChange(change); !valid)
    return std::unexpected(valid.error());
  auto it = budgets_.find(session);
  AgentBudget before = it == budgets_.end() ? AgentBudget{} : it->second.budget;
  AgentBudget budget = change.clear ? AgentBudget{} : before;
  Apply(budget.max_turns, change.max_turns);
  Apply(budget.max_tokens, change.max_tokens);
  Apply(budget.max_cost_usd, change.max_cost_usd);
  auto sum = Sum(session);
  if (!sum)
    return std::unexpected(sum.error());
  if (auto saved = store_->PutSessionBudget(session, budget); !saved)
    return std::unexpected(saved.error());
  batch_.emplace_back(session, before);
  if (budget.any()) {
    budgets_[session] = {.budget = budget, .usage = sum->first};
  } else {
    budgets_.erase(session);
  }
  BATON_LOG_INFO("session {}: budget {}", session,
                 budget.any() ? EncodeObject(budget) : "removed");
  return SessionBudgetView{
      .session = session,
      .budget = budget,
      .usage = sum->first,
      .agent_tasks = sum->second,
      .reached = BudgetReached(budget, sum->first, Whose(session))};
}

Result<SessionBudgetView> SessionBudgets::Of(const std::string& session) {
  if (session.empty())
    return NoSession();
  auto sum = Sum(session);
  if (!sum)
    return std::unexpected(sum.error());
  SessionBudgetView view{
      .session = session, .usage = sum->first, .agent_tasks = sum->second};
  if (auto it = budgets_.find(session); it != budgets_.end()) {
    view.budget = it->second.budget;
    view.reached = BudgetReached(view.budget, view.usage, Whose(session));
  }
  return view;
}

std::string SessionBudgets::Reached(const std::string& session) const {
  auto it = budgets_.find(session);
  if (it == budgets_.end() || session.empty())
    return "";
  return BudgetReached(it->second.budget, it->second.usage, Whose(session));
}

void SessionBudgets::UsageMoved(const std::string& session,
                                const AgentUsage& before,
                                const AgentUsage& usage) {
  auto spend = budgets_.find(session);
  if (spend == budgets_.end() || session.empty())
    return;
  AgentUsage& sum = spend->second.usage;
  sum = AddUsage(SubtractUsage(sum, before), usage);
}

void SessionBudgets::RollBack() {
  // Newest first, so each session gets the budget it had before the batch.
  for (auto change = batch_.rbegin(); change != batch_.rend(); ++change) {
    const auto& [session, before] = *change;
    if (!before.any()) {
      budgets_.erase(session);
      continue;
    }
    // A kept sum stays (UsageMoved kept it up to date meanwhile); a removed
    // one is summed again.
    auto [spend, added] = budgets_.try_emplace(session);
    spend->second.budget = before;
    if (added) {
      if (auto sum = Sum(session); sum)
        spend->second.usage = sum->first;
    }
  }
  batch_.clear();
}

}  // namespace baton
