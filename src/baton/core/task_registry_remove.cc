// Removing ended tasks (doc/tasks.md, "Removing ended tasks"): which may
// go, and forgetting them. A task goes only when nothing still needs it:
// no live task starts after it or is its sub-task, and no session budget
// counts what it spent.
#include <fmt/format.h>

#include <set>

#include "baton/core/sessions.h"
#include "baton/core/task_registry.h"

namespace baton {
namespace {

// The ids live tasks still need: what they start after, their parents.
std::set<std::string> NeededByLive(const std::map<TaskId, TaskRecord>& live) {
  std::set<std::string> needed;
  for (const auto& [id, task] : live) {
    needed.insert(task.spec.schedule.after.begin(),
                  task.spec.schedule.after.end());
    if (!task.spec.parent.empty())
      needed.insert(task.spec.parent);
  }
  return needed;
}

}  // namespace

Result<TaskRegistry::RemovalPlan> TaskRegistry::PlanRemoval(
    const std::vector<std::string>& ids, bool every_ended,
    const std::string& session) {
  std::set<std::string> needed = NeededByLive(live_);
  // Why `task` must stay, "" when it may go.
  auto why_kept = [&](const TaskRecord& task) -> std::string {
    std::string id = task.id.ToString();
    if (!IsTerminal(task.status)) {
      return fmt::format(
          "{} is still {}; stop it first (baton kill {}), or wait for it", id,
          TaskStatusName(ToldStatus(task)), id);
    }
    if (needed.contains(id)) {
      return fmt::format(
          "{} is needed by a live task (one starts after it, or is its "
          "sub-task); remove it once that one ended",
          id);
    }
    if (task.spec.agent && budgets_.Has(task.spec.owner)) {
      return fmt::format(
          "{} counts toward session {}'s budget; remove the budget first "
          "(baton budget --clear)",
          id, task.spec.owner);
    }
    return "";
  };
  RemovalPlan plan;
  if (!every_ended) {
    std::set<std::string> seen;
    for (const std::string& text : ids) {
      auto task = Resolve(text, session);
      if (!task)
        return std::unexpected(task.error());
      if (!seen.insert(task->id.ToString()).second)
        continue;
      if (std::string why = why_kept(*task); !why.empty())
        return MakeError(ErrorCode::kInvalidArgument,
                         why + " (nothing was removed)");
      plan.remove.push_back(std::move(*task));
    }
    return plan;
  }
  auto ended = store_->ListTasks({.owner = session, .include_live = false});
  if (!ended)
    return std::unexpected(ended.error());
  for (TaskRecord& task : *ended) {
    if (!SeesOwner(session, task.spec.owner))
      continue;
    if (std::string why = why_kept(task); !why.empty()) {
      plan.kept.emplace_back(task.id.ToString(), std::move(why));
    } else {
      plan.remove.push_back(std::move(task));
    }
  }
  return plan;
}

Status TaskRegistry::Remove(const std::vector<TaskId>& ids) {
  if (auto deleted = store_->DeleteTasks(ids); !deleted)
    return deleted;
  std::set<std::string> gone;
  for (const TaskId& id : ids)
    gone.insert(id.ToString());
  for (auto& [owner, unnoticed] : unnoticed_) {
    std::erase_if(unnoticed, [&](const TaskId& id) {
      return gone.contains(id.ToString());
    });
  }
  std::erase_if(recent_ended_,
                [&](const EndedSpan& span) { return gone.contains(span.id); });
  // Counted again at the next listing that needs it.
  terminal_counts_.clear();
  return {};
}

}  // namespace baton
