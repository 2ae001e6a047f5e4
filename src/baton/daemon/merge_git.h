// What the merge queue asks git (doc/land.md): the repository's land
// settings, a target branch's tip and checkout, a trial of a batch of
// branches brought onto the tip in a scratch worktree with the land check
// run there, and the compare-and-swap move of the target. Each runs git
// (and the check) synchronously, every one with a deadline: the queue
// calls them on a WorkerPool, off batond's loop.
#ifndef BATON_DAEMON_MERGE_GIT_H_
#define BATON_DAEMON_MERGE_GIT_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "baton/util/result.h"

namespace baton {

// What every call of the queue's git shares.
struct LandGit {
  std::vector<std::string> env;  // git's and the check's environment.
  std::string scratch;           // A folder of batond's for trial worktrees.
  std::chrono::milliseconds git_timeout{60'000};
  std::chrono::milliseconds check_timeout{std::chrono::minutes(30)};
};

// The queue's git environment: `base` without the GIT_* entries that would
// point git elsewhere (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, ...); an
// identity set in the environment (GIT_AUTHOR_*, GIT_COMMITTER_*) stays.
std::vector<std::string> LandGitEnvironment(std::vector<std::string> base);

// A repository's land settings, from its git config (doc/land.md):
// baton.landStrategy (rebase, the default, or merge) and baton.landCheck
// (a shell line; none: a clean rebase or merge is the test).
struct LandSettings {
  bool merge = false;
  std::string check;
};
Result<LandSettings> ReadLandSettings(const std::string& repo,
                                      const LandGit& git);

// The commit of refs/heads/`branch`; kNotFound when there is no such
// branch.
Result<std::string> BranchTip(const std::string& repo,
                              const std::string& branch, const LandGit& git);

// The branch HEAD of `repo` (a worktree's folder) names; "" when detached.
Result<std::string> CheckedOutBranch(const std::string& repo,
                                     const LandGit& git);

// How many commits `head` has that `target` has not.
Result<int64_t> CommitsAhead(const std::string& repo, const std::string& head,
                             const std::string& target, const LandGit& git);

// The worktree that has `branch` checked out, if any, and whether it holds
// changes not committed (tracked or new files).
struct Checkout {
  std::string path;
  bool dirty = false;
};
Result<std::optional<Checkout>> FindCheckout(const std::string& repo,
                                             const std::string& branch,
                                             const LandGit& git);

// One branch of a batch: its commit, and a name for the merge message.
struct TrialBranch {
  std::string head;
  std::string name;  // "baton/agent-3".
};

// A batch brought onto `onto` in order and checked once.
struct Trial {
  // The commit after each entry brought on cleanly, in order: a prefix of
  // the batch (all of it but at a conflict). An entry that brought
  // nothing new (its changes are on the target already) repeats the last.
  std::vector<std::string> results;
  // The first entry that conflicted, with its files and hunks (short).
  std::optional<size_t> conflict_at;
  std::vector<std::string> conflict_files;
  std::string conflict_hunks;
  // The check ran on the last result (when there is one and a check):
  // green, or red with its output's tail.
  bool checked = false;
  bool green = false;
  std::string output;
};
// Fails when git fails otherwise (not a conflict): a deadline, a lock, no
// identity to commit with.
Result<Trial> TryBatch(const std::string& repo, const std::string& onto,
                       const std::vector<TrialBranch>& batch,
                       const LandSettings& settings, const LandGit& git);

// Moves refs/heads/`target` from `old_tip` to `new_tip`, or nothing: with
// `git update-ref` (compare and swap), or, where it is checked out (clean),
// with `git merge --ff-only` there, which brings its files along. false
// (nothing moved) when the target is no longer at `old_tip`, or its
// checkout has changes now.
Result<bool> MoveTarget(const std::string& repo, const std::string& target,
                        const std::string& old_tip, const std::string& new_tip,
                        const LandGit& git);

}  // namespace baton

#endif  // BATON_DAEMON_MERGE_GIT_H_
