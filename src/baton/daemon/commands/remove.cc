// The `remove` handler (doc/tasks.md, "Removing ended tasks"): ended tasks
// go from the store at once, in a transaction of their own, then their
// folders (output, events, exit records) on the file-system worker; the
// reply waits for both. The audit trail keeps one record per task.
#include <fmt/format.h>

#include <filesystem>

#include "baton/daemon/daemon.h"

namespace baton {
namespace {

// Why an agent task's worktree keeps it, "" when it has none any more: the
// worktree's work would lose its record (worktree clean decides what goes).
std::string WorktreeKeeps(const TaskRecord& task) {
  if (!task.spec.agent || !task.spec.agent->worktree)
    return "";
  const std::string& path = task.spec.agent->worktree->path;
  std::error_code ignored;
  if (path.empty() || !std::filesystem::exists(path, ignored))
    return "";
  std::string id = task.id.ToString();
  return fmt::format(
      "{}'s worktree {} is still there; baton worktree clean {} first (it "
      "keeps unmerged branches)",
      id, path, id);
}

}  // namespace

void Daemon::Handle(Connection& connection, const RemoveRequest& request,
                    Session session, Reply reply) {
  auto plan = registry_->PlanRemoval(request.tasks, request.ended, session);
  if (!plan)
    return reply(std::unexpected(plan.error()));
  std::vector<TaskId> ids;
  std::vector<std::string> dirs;
  RemoveReply answer;
  for (const TaskRecord& task : plan->remove) {
    if (std::string why = WorktreeKeeps(task); !why.empty()) {
      if (!request.ended) {
        return reply(MakeError(ErrorCode::kInvalidArgument,
                               why + " (nothing was removed)"));
      }
      answer.kept.push_back({task.id.ToString(), std::move(why)});
      continue;
    }
    ids.push_back(task.id);
    dirs.push_back(router_->TaskDir(task.id));
    answer.removed.push_back(task.id.ToString());
  }
  for (auto& [id, why] : plan->kept)
    answer.kept.push_back({std::move(id), std::move(why)});
  if (ids.empty())
    return reply(std::move(answer));
  if (auto removed = registry_->Remove(ids); !removed)
    return reply(std::unexpected(removed.error()));
  for (const std::string& id : answer.removed) {
    AuditRecord audit = AuditOf(connection, session, "remove", id);
    audit.detail = "removed with its output";
    registry_->audit().Record(std::move(audit), /*with_batch=*/false);
  }
  worktree_worker_->Post(
      [dirs = std::move(dirs)] {
        for (const std::string& dir : dirs) {
          std::error_code ignored;  // Gone already is gone.
          std::filesystem::remove_all(dir, ignored);
        }
      },
      [reply, answer = std::move(answer)]() mutable {
        reply(std::move(answer));
      });
}

}  // namespace baton
