// The merge queue's requests (doc/land.md): `land` queues finished
// worktree workers' branches (git checks them off the loop, on the queue's
// thread; the reply waits for it), `lands` lists the entries the session
// sees. The landing itself runs in daemon/merge_queue.*.
#include <fmt/format.h>

#include "baton/core/sessions.h"
#include "baton/daemon/daemon.h"
#include "baton/daemon/worktrees.h"

namespace baton {

void Daemon::Handle(Connection& connection, const LandRequest& request,
                    Session session, Reply reply) {
  std::vector<TaskRecord> tasks;
  for (const std::string& id : request.tasks) {
    auto task = registry_->Get(id, session);
    if (!task)
      return reply(std::unexpected(task.error()));
    auto refuse = [&](std::string why) {
      reply(MakeError(ErrorCode::kInvalidArgument,
                      fmt::format("{} cannot land: {}", id, why)));
    };
    if (!HasWorktree(*task)) {
      return refuse(
          "it did not run in a worktree of its own (only a worker "
          "delegated with --worktree has a branch to land)");
    }
    if (!IsTerminal(task->status)) {
      return refuse(fmt::format(
          "it is {}; land it once it ended completed (baton wait {})",
          TaskStatusName(task->status), id));
    }
    if (task->status != TaskStatus::kCompleted) {
      return refuse(fmt::format(
          "it ended {}; only a worker that completed "
          "lands (rerun it, or merge its branch {} by "
          "hand)",
          TaskStatusName(task->status), task->spec.agent->worktree->branch));
    }
    if (const LandEntry* queued = lands_->Unfinished(id)) {
      return refuse(
          fmt::format("it is in the merge queue already (entry {}, "
                      "{}; baton lands lists it)",
                      queued->id, EnumName(queued->state)));
    }
    tasks.push_back(std::move(*task));
  }
  AuditRecord audit = AuditOf(connection, session, "land");
  lands_->Add(
      std::move(tasks), request.target.onto, request.target.check,
      [this, audit,
       reply = std::move(reply)](Result<std::vector<LandEntry>> added) {
        if (!added)
          return reply(std::unexpected(added.error()));
        for (const LandEntry& entry : *added) {
          AuditRecord record = audit;
          record.task = entry.task;
          record.detail = fmt::format(
              "{} onto {} in {}{}", entry.branch, entry.target, entry.repo,
              entry.check.empty() ? "" : "; check: " + entry.check);
          registry_->audit().Record(std::move(record), /*with_batch=*/true);
        }
        reply(LandReply{.entries = std::move(*added)});
      });
}

void Daemon::Handle(Connection&, const LandsRequest& request, Session session,
                    Reply reply) {
  LandsReply answer{.check_runs = lands_->check_runs()};
  for (LandEntry& entry : lands_->Entries()) {
    if (!request.task.empty() && entry.task != request.task)
      continue;
    // The entries of the tasks the session sees (not a look at the task:
    // its end stays unseen).
    if (SeesOwner(session, entry.owner))
      answer.entries.push_back(std::move(entry));
  }
  reply(answer);
}

}  // namespace baton
