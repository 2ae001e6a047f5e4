// Agent workers' own git worktrees (doc/agents.md, "Worktrees"): made when
// such a task is submitted, before it is stored; read for its evidence when
// it ends. Each runs git synchronously, as the check runner's `git status`
// does: a few quick calls per task.
#ifndef BATON_DAEMON_WORKTREES_H_
#define BATON_DAEMON_WORKTREES_H_

#include <optional>
#include <string>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

// The task runs in a worktree batond made for it.
inline bool HasWorktree(const TaskRecord& task) {
  return task.spec.agent && task.spec.agent->worktree &&
         !task.spec.agent->worktree->path.empty();
}

// Makes the worktree `task` asked for (spec.agent->worktree set, empty): a
// branch `baton/<id>` from HEAD of the repository that holds spec.cwd,
// checked out at `root`/<id>. The task's folder becomes the same folder
// inside it. `env` is git's environment. kInvalidArgument, with what to
// do, when the folder is in no repository, the repository has no commit,
// or git refuses (a branch of that name exists).
Status MakeWorktree(const std::string& root,
                    const std::vector<std::string>& env, TaskRecord& task);

// What a worktree holds at its task's end, against its base: the changed
// files (committed or not, new ones too; paths from its top) and its
// branch. nullopt when git cannot tell (the worktree is gone).
struct WorktreeFindings {
  std::vector<std::string> changed_files;
  BranchEvidence branch;
};
std::optional<WorktreeFindings> ReadWorktree(
    const Worktree& worktree, const std::vector<std::string>& env);

}  // namespace baton

#endif  // BATON_DAEMON_WORKTREES_H_
