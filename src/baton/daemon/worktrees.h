// Agent workers' own git worktrees (doc/agents.md, "Worktrees"): made when
// such a task is submitted, before it is stored; read for its evidence when
// it ends; listed and cleaned for every front end (the `worktrees`
// request). Each runs git synchronously: batond calls them on a
// WorkerPool, off its loop.
#ifndef BATON_DAEMON_WORKTREES_H_
#define BATON_DAEMON_WORKTREES_H_

#include <optional>
#include <string>
#include <vector>

#include "baton/core/task.h"
#include "baton/ipc/messages.h"
#include "baton/util/result.h"

namespace baton {

// The task runs in a worktree batond made for it.
inline bool HasWorktree(const TaskRecord& task) {
  return task.spec.agent && task.spec.agent->worktree &&
         !task.spec.agent->worktree->path.empty();
}

// Prepares the worktree `task` runs in, locked for it (`git worktree lock`,
// so that neither git nor a person's prune removes it while it runs):
// - made, when spec.agent->worktree is set and empty: a branch
//   `baton/<id>` from HEAD of the repository that holds spec.cwd, checked
//   out at `root`/<id>; the task's folder becomes the same folder inside
//   it. kInvalidArgument, with what to do, when the folder is in no
//   repository, the repository has no commit, or git refuses (a branch of
//   that name exists);
// - taken over, when its path is set (a resume goes on in the worktree of
//   the task it resumes): kInvalidArgument when it is gone.
// `env` is git's environment.
Status PrepareWorktree(const std::string& root,
                       const std::vector<std::string>& env, TaskRecord& task);

// Takes the lock of `task` off its worktree once it ended. A lock that is
// not its own (a later task's, a person's) stays.
void UnlockWorktree(const TaskRecord& task,
                    const std::vector<std::string>& env);

// What a worktree holds at its task's end, against its base: the changed
// files (committed or not, new ones too; paths from its top) and its
// branch. nullopt when git cannot tell (the worktree is gone).
struct WorktreeFindings {
  std::vector<std::string> changed_files;
  BranchEvidence branch;
};
std::optional<WorktreeFindings> ReadWorktree(
    const Worktree& worktree, const std::vector<std::string>& env);

// The worktree of `task` (HasWorktree) as git tells it now. Blocks on git:
// off the loop.
WorktreeInfo InspectWorktree(const TaskRecord& task,
                             const std::vector<std::string>& env);

// Removes the worktree of `task` (inspected as `info`) when that loses
// nothing, and says so in info.outcome and info.note. Never, whoever asks:
// the worktree of a live task (its own, or `used_by`, the id of a live
// task that resumed it), one whose HEAD holds commits on no branch, one
// locked by someone else, an unmerged branch (its worktree goes when the
// task is `named`, the branch stays). Uncommitted work stays unless
// `force`, and then it is committed on the task's branch first, so that
// the branch keeps it. A merged branch is deleted with its worktree; one
// removed by hand is pruned from git's list. Blocks on git: off the loop.
void CleanWorktree(const TaskRecord& task, bool named, bool force,
                   const std::string& used_by,
                   const std::vector<std::string>& env, WorktreeInfo& info);

}  // namespace baton

#endif  // BATON_DAEMON_WORKTREES_H_
