// TaskRegistry's batches (task_registry.h, Commit): executor requests held
// until the commit of the state they depend on, and what a failed commit
// takes back. Split from task_registry.cc, which holds everything else.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "baton/core/task_registry.h"
#include "baton/util/log.h"

namespace baton {

Status TaskRegistry::Commit(std::vector<TaskId>* rolled_back) {
  // Starts of held tasks go with this batch (core/scheduler.h).
  scheduler_.Pass();
  if (store_->HasPendingWrites()) {
    if (auto flushed = store_->Flush(); !flushed) {
      RollBack(flushed.error(), rolled_back);
      return flushed;
    }
  }
  undo_.clear();
  saved_in_batch_.clear();
  budgets_.Committed();
  audit_.Committed();
  scheduler_.Committed();
  for (Effect& effect : std::exchange(effects_, {}))
    RunEffect(std::move(effect));
  return {};
}

void TaskRegistry::StartTask(TaskRecord& task) {
  TaskRecord start = task;  // With the client's environment.
  // In the spawn request now; no longer stored unless a retry needs it.
  if (!KeepsEnvironment(task))
    task.spec.base_env = {};
  Save(TaskRecord(task));
  metrics_.TaskStarted(task.spec.kind, task.attempts.empty(),
                       clock_->WallNowMillis() - task.created_ms);
  if (on_dispatch_)
    on_dispatch_(start);
  effects_.push_back({.kind = Effect::Kind::kStart, .task = std::move(start)});
}

void TaskRegistry::RunEffect(Effect effect) {
  if (effect.kind == Effect::Kind::kStart) {
    executor_->Start(effect.task);
    return;
  }
  const TaskId& id = effect.task.id;
  if (!live_.contains(id))
    return;  // It ended meanwhile.
  if (effect.stop_delay <= std::chrono::milliseconds(0)) {
    executor_->Kill(id, effect.grace);
    return;
  }
  timers_->Schedule(clock_->Now() + effect.stop_delay,
                    [this, id, grace = effect.grace] {
                      // Still there: it did not end by itself.
                      if (live_.contains(id))
                        executor_->Kill(id, grace);
                    });
}

void TaskRegistry::RollBack(const Error& error,
                            std::vector<TaskId>* rolled_back) {
  // The records as they are without the undone changes, newest undone
  // first, so each field gets the value it had before the batch. Read
  // before the batch is dropped: reads see its writes.
  std::map<TaskId, TaskRecord> records;
  std::set<TaskId> created;
  std::set<TaskId> edited;
  for (auto undo = undo_.rbegin(); undo != undo_.rend(); ++undo) {
    if (undo->kind == Undo::Kind::kCursor)
      continue;  // Only the store had it: the drop takes it back.
    auto record = records.find(undo->id);
    if (record == records.end()) {
      auto current = Lookup(undo->id);
      if (!current)
        continue;
      record = records.emplace(undo->id, std::move(*current)).first;
    }
    TaskRecord& task = record->second;
    switch (undo->kind) {
      case Undo::Kind::kCreated:
        created.insert(undo->id);
        break;
      case Undo::Kind::kEndSeen:
        task.end_seen = false;
        break;
      case Undo::Kind::kNoticeDelivered:
        task.notice_delivered = false;
        break;
      case Undo::Kind::kQuestionTold:
        task.question_told = false;
        break;
      case Undo::Kind::kKill:
        // A task that ended meanwhile keeps its end, which counts as
        // killed, as any end racing a kill does (OnTaskExited).
        if (!IsTerminal(task.status)) {
          task.status = undo->status;
          task.kill_reason = undo->kill_reason;
          task.killed_at_limit = undo->killed_at_limit;
          task.end_seen = undo->end_seen;
        }
        break;
      case Undo::Kind::kEdited:
        // Held as it was before: what the batch did after the edit (a
        // dispatch) goes with it.
        edited.insert(undo->id);
        task = *undo->task_before;
        break;
      case Undo::Kind::kCursor:
        break;
    }
  }
  // And the tasks the batch saved for good, as they are now: written again
  // below, into the next batch, which keeps them (a second failed commit
  // drops and writes them again).
  std::set<TaskId> saved = std::exchange(saved_in_batch_, {});
  for (const TaskId& id : saved) {
    if (records.contains(id))
      continue;
    if (auto current = Lookup(id); current)
      records.emplace(id, std::move(*current));
  }
  // The whole batch goes at once (TaskStore::DropBatch); what stays of it
  // is written again below, as the next batch.
  store_->DropBatch();
  // Ends unseen again, per owner, to be noticed before the later ones.
  std::map<std::string, std::vector<TaskId>> unnoticed_again;
  for (auto& [id, task] : records) {
    if (created.contains(id)) {
      scheduler_.Remove(task);
      live_.erase(id);
      std::erase_if(effects_,
                    [&](const Effect& effect) { return effect.task.id == id; });
      waits_.Fail(id, Error{ErrorCode::kIo,
                            fmt::format("cannot save state, so {} was not "
                                        "created: {}",
                                        id.ToString(), error.message)});
      if (rolled_back)
        rolled_back->push_back(id);
      continue;
    }
    if (edited.contains(id)) {
      if (auto now = live_.find(id); now != live_.end())
        scheduler_.Unindex(now->second);
      std::erase_if(effects_, [&](const Effect& effect) {
        return effect.kind == Effect::Kind::kStart && effect.task.id == id;
      });
      scheduler_.Index(task);
    }
    if (saved.contains(id)) {
      Save(task);  // What stays of the batch goes into the next commit.
    } else if (!IsTerminal(task.status)) {
      live_[id] = task;
    }
    bool untold_end =
        IsTerminal(task.status) && !task.end_seen && !task.notice_delivered;
    bool untold_question =
        task.status == TaskStatus::kWaiting && !task.question_told;
    if (!task.spec.owner.empty() && (untold_end || untold_question)) {
      unnoticed_again[task.spec.owner].push_back(id);
    }
  }
  NoticeFirst(std::move(unnoticed_again));
  // What else stays: the sessions with a lease, the audit records not made
  // for a reply; then what the collaborators hold in memory (budgets sum
  // the tasks written again above).
  for (const std::string& session : leased_sessions_)
    MarkLeased(session);
  audit_.RollBack();
  budgets_.RollBack();
  scheduler_.RollBack();
  std::erase_if(effects_, [](const Effect& effect) { return effect.undoable; });
  undo_.clear();
}

void TaskRegistry::NoticeFirst(
    std::map<std::string, std::vector<TaskId>> again) {
  for (auto& [owner, ids] : again) {
    std::vector<TaskId>& unnoticed = unnoticed_[owner];
    std::erase_if(ids, [&](const TaskId& id) {
      return std::find(unnoticed.begin(), unnoticed.end(), id) !=
             unnoticed.end();
    });
    unnoticed.insert(unnoticed.begin(), ids.begin(), ids.end());
  }
}

void TaskRegistry::KeepSeen(const std::vector<TaskId>& ids) {
  for (const TaskId& id : ids) {
    size_t erased = std::erase_if(undo_, [&](const Undo& undo) {
      return undo.kind == Undo::Kind::kEndSeen && undo.id == id;
    });
    if (erased)
      saved_in_batch_.insert(id);
  }
}

}  // namespace baton
