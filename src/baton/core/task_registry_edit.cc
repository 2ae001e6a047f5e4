// Editing a held task (doc/tasks.md, "Editing a queued task"): a task that
// is stored `queued` and not yet handed to the executor takes a new spec,
// and the scheduler places it again, as pueue's `edit` does. Only a held
// task: once its spawn is on its way, what it runs is fixed. Split from
// task_registry.cc; the scheduler (scheduler.h) takes the task out of its
// indexes and puts it back in.
#include <fmt/format.h>

#include <set>

#include "baton/core/task_registry.h"

namespace baton {
namespace {

// Why `task` cannot be edited now, "" when it can.
std::string WhyNotEditable(const TaskRecord& task) {
  std::string id = task.id.ToString();
  if (IsTerminal(task.status)) {
    return fmt::format(
        "{} is {}: only a queued task can be edited; baton rerun {} starts "
        "a copy (MCP task_rerun)",
        id, TaskStatusName(task.status), id);
  }
  if (task.status != TaskStatus::kQueued || !task.held) {
    // A dispatched task is `running` (starting) to clients (ipc/task_wire).
    std::string_view status = task.status == TaskStatus::kQueued
                                  ? "running"
                                  : TaskStatusName(task.status);
    return fmt::format(
        "{} is {}: only a queued task can be edited; once it ended, baton "
        "rerun {} starts a copy (stop it first: baton kill {})",
        id, status, id, id);
  }
  if (!task.attempts.empty()) {
    return fmt::format(
        "{} ran already and waits for a retry: only a task that has not run "
        "can be edited (baton kill {}, then baton rerun {})",
        id, id, id);
  }
  return "";
}

}  // namespace

Result<TaskRecord> TaskRegistry::Editable(std::string_view id,
                                          const std::string& session) {
  auto task = Resolve(id, session);
  if (!task)
    return task;
  if (std::string why = WhyNotEditable(*task); !why.empty())
    return MakeError(ErrorCode::kInvalidArgument, why);
  return task;
}

Result<TaskRecord> TaskRegistry::Edit(const TaskId& id, TaskSpec spec,
                                      const std::string& session) {
  // Looked at again: a preflight ran off the loop since Editable, and the
  // task may have started or ended meanwhile.
  auto found = Editable(id.ToString(), session);
  if (!found)
    return found;
  auto live = live_.find(id);
  if (live == live_.end())  // A held task is live: Editable saw it held.
    return MakeError(ErrorCode::kNotFound, id.ToString() + " is not live");
  TaskRecord& task = live->second;
  if (auto valid = Validate(spec); !valid)
    return std::unexpected(valid.error());
  if (auto valid = scheduler_.Prepare(spec.schedule, spec.owner); !valid)
    return std::unexpected(valid.error());
  // A task may not wait for itself, directly or through held tasks that
  // wait for it: none of them would ever start. Only live tasks can still
  // wait; an ended one's `after` is history.
  std::set<std::string> seen;
  std::vector<std::string> next = spec.schedule.after;
  std::string self = id.ToString();
  while (!next.empty()) {
    std::string dep = std::move(next.back());
    next.pop_back();
    if (dep == self) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format(
              "after: {} would wait for itself{}; name tasks it does "
              "not start before",
              self,
              spec.schedule.after.size() == 1 && spec.schedule.after[0] == self
                  ? ""
                  : " (through the tasks it names)"));
    }
    if (!seen.insert(dep).second)
      continue;
    auto dep_id = TaskId::Parse(dep);
    if (!dep_id)
      continue;
    if (const TaskRecord* live = FindLive(*dep_id))
      next.insert(next.end(), live->spec.schedule.after.begin(),
                  live->spec.schedule.after.end());
  }
  // A failed commit takes the edit back (RollBack), with what the batch
  // did to the edited task after it (a dispatch).
  Undo undo(Undo::Kind::kEdited, id);
  undo.task_before = task;
  undo_.push_back(std::move(undo));
  // Out of the schedule's indexes as it was, then in again as it is.
  scheduler_.Unindex(task);
  task.spec = std::move(spec);
  scheduler_.Index(task);
  task.detail = scheduler_.HeldDetail(task);
  Save(TaskRecord(task));
  return TaskRecord(task);
}

}  // namespace baton
