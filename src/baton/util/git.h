// Running git to its end (or its deadline), synchronously: the short
// queries and the worktree commands of agent workers' own worktrees
// (doc/agents.md, "Worktrees"), in batond (a few per task at its submit;
// its evidence at its end, off the loop) and in the CLI.
#ifndef BATON_UTIL_GIT_H_
#define BATON_UTIL_GIT_H_

#include <chrono>
#include <string>
#include <vector>

#include "baton/util/result.h"
#include "baton/util/run_to_end.h"

namespace baton {

struct GitResult : RunOutcome {
  // What git said on stderr, trimmed, for an error message ("git exited
  // with code N" when it said nothing).
  std::string Complaint() const;
};

// How long one git may take before it is killed: a hung git (a lock, a
// network file system, a huge repository) fails what asked for it, not the
// process that waits.
inline constexpr std::chrono::milliseconds kGitTimeout{30'000};

// Runs `git ARGS...` in `cwd` with the environment `env` ("NAME=value"
// entries; git is found on its PATH) and waits for it, at most `timeout`
// (then its whole process group is killed). Fails only when git could not
// be started (kNotFound when there is none on the PATH); a git that ran
// and failed, or timed out, is a GitResult with its exit code and stderr.
Result<GitResult> RunGit(const std::string& cwd,
                         const std::vector<std::string>& args,
                         const std::vector<std::string>& env,
                         std::chrono::milliseconds timeout = kGitTimeout);

}  // namespace baton

#endif  // BATON_UTIL_GIT_H_
