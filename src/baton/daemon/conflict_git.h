// What the conflict radar asks git (doc/conflicts.md), without touching a
// worktree: a snapshot of a worktree's state, committed or not, as a
// commit object of its own, and a trial merge of two snapshots. Each runs
// git synchronously, every git with a deadline: the radar calls them on a
// WorkerPool, off batond's loop.
#ifndef BATON_DAEMON_CONFLICT_GIT_H_
#define BATON_DAEMON_CONFLICT_GIT_H_

#include <chrono>
#include <string>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

// git's environment for the radar: `base` without the GIT_* entries that
// would point git elsewhere (GIT_DIR, GIT_INDEX_FILE, ...) or change its
// output, which a client's environment may hold.
std::vector<std::string> RadarGitEnvironment(std::vector<std::string> base);

// A worktree's state now: a commit whose tree is its files as `git add -A`
// would stage them (tracked, changed and new; ignored ones not), whose
// parent is its HEAD, and the files that differ from its base (paths from
// its top, sorted). The same state gives the same commit (fixed author and
// dates), so an unchanged worktree's trial merges can be kept.
struct WorktreeSnapshot {
  std::string head;  // The worktree's HEAD then.
  std::string tree;  // Its files' tree.
  std::string commit;
  std::vector<std::string> files;
};

// Takes it through a copy of the worktree's index in `scratch` (a folder
// of batond's): the copy knows the unchanged files' stat data, so `git add
// -A` rehashes only what changed; the worktree's own index and files are
// only read. Writes objects into the repository (the snapshot's blobs,
// tree and commit, unreferenced: git's gc prunes them). Each git may take
// `timeout`. With the worktree's `last` snapshot, an unchanged HEAD and
// tree give it back without asking git for the rest.
Result<WorktreeSnapshot> SnapshotWorktree(
    const Worktree& worktree, const std::vector<std::string>& env,
    const std::string& scratch, std::chrono::milliseconds timeout,
    const WorktreeSnapshot* last = nullptr);

// A trial merge of two snapshots (`git merge-tree --write-tree`, git 2.38
// or later): whether it conflicts, and in which files (sorted).
struct TrialMerge {
  bool conflict = false;
  std::vector<std::string> conflict_files;
};
Result<TrialMerge> TrialMergeCommits(const std::string& repo,
                                     const std::string& first,
                                     const std::string& second,
                                     const std::vector<std::string>& env,
                                     std::chrono::milliseconds timeout);

}  // namespace baton

#endif  // BATON_DAEMON_CONFLICT_GIT_H_
