// The `wait` handler: answered when any (or every) named task ends or asks
// a question, or at the timeout, from the registry's events (no polling).
#include <algorithm>

#include "baton/daemon/daemon.h"

namespace baton {

void Daemon::Handle(Connection& connection, const WaitRequest& request,
                    Session session, Reply reply) {
  uint64_t connection_id = connection.id;
  // The wait id is known only after Wait returns, but `done` may run
  // inside Wait; they meet in this small cell.
  struct Cell {
    WaitId id = 0;
    bool done = false;
  };
  auto cell = std::make_shared<Cell>();
  StillRunningForm form = request.still_running;
  auto wait = registry_->Wait(
      request.tasks, session, request.all, request.timeout,
      [this, reply, connection_id, cell, form](WaitResult result) {
        cell->done = true;
        auto it = connections_.find(connection_id);
        if (it != connections_.end())
          it->second.waits.erase(cell->id);
        if (result.error)  // A task it names was not saved.
          return reply(std::unexpected(*result.error));
        bool reproducible = std::ranges::all_of(
            result.ended,
            [this](const TaskRecord& task) { return EndSurvivesACrash(task); });
        // An end woke it: its reply is written in BeforeSleep, which
        // observes the wake (ObserveWakes).
        std::optional<MonoTime> woke;
        if (result.woken_by_end && it != connections_.end())
          woke = clock_.Now();
        size_t held = woke ? it->second.held.size() : 0;
        WaitReply answer;
        answer.timed_out = result.timed_out;
        for (const TaskId& id : result.already_told)
          answer.already_told.push_back(id.ToString());
        for (const TaskId& id : result.told_before)
          answer.told_before.push_back(id.ToString());
        for (auto& [id, text] : result.turns)
          answer.turns.push_back({id.ToString(), std::move(text)});
        answer.ended.reserve(result.ended.size());
        for (auto& task : result.ended)
          answer.ended.push_back(View(std::move(task)));
        // Tasks still running go in their short form, as ids, or only
        // counted: a wait on a thousand ids must not pay for a thousand
        // full records.
        if (form == StillRunningForm::kNone) {
          answer.still_running_count =
              static_cast<int64_t>(result.still_running_count());
        } else {
          for (const TaskId& id : result.StillRunning()) {
            if (form == StillRunningForm::kIds) {
              TaskBrief brief{.id_only = true};
              brief.task.id = id;
              answer.still_running.push_back(std::move(brief));
            } else if (const TaskRecord* task = registry_->FindLive(id)) {
              answer.still_running.push_back({*task, false});
            }
          }
        }
        if (reproducible) {
          std::vector<TaskId> ends;
          for (const TaskView& task : answer.ended)
            ends.push_back(task.task.id);
          reply.BeforeCommit(answer, std::move(ends));
        } else {
          reply(answer);
        }
        // Sent now, to be flushed before the commit, when the reply joined
        // no held ones (MakeReplier).
        if (woke)
          woken_.push_back({*woke, it->second.held.size() == held});
      },
      request.turns, request.news_since_ms);
  if (!wait)
    return reply(std::unexpected(wait.error()));
  cell->id = *wait;
  // Only a wait still pending is tracked (to cancel it on disconnect).
  if (!cell->done)
    connection.waits.insert(*wait);
}

}  // namespace baton
