// Running a short program to its end (or its deadline), synchronously, its
// stdout and stderr captured: git's queries and worktree commands
// (util/git.h), a shell line's syntax check (daemon/preflight.cc).
#ifndef BATON_UTIL_RUN_TO_END_H_
#define BATON_UTIL_RUN_TO_END_H_

#include <chrono>
#include <string>
#include <vector>

#include "baton/util/result.h"

namespace baton {

struct RunOutcome {
  int exit_code = -1;      // 128+N for a death by signal N.
  bool timed_out = false;  // Killed at its deadline (exit_code 128+9).
  std::string out;
  std::string err;

  bool ok() const { return exit_code == 0; }
  // What it said on stderr, without the trailing newlines and spaces.
  std::string Said() const;
};

// Runs `program` (a full path) with `argv` (argv[0] included) and the
// environment `env` in `cwd`, in a session of its own, and waits for it, at
// most `timeout` (then its whole process group is killed and `timed_out`
// says so). Fails only when it could not be started.
Result<RunOutcome> RunToEnd(std::string program, std::vector<std::string> argv,
                            const std::vector<std::string>& env,
                            const std::string& cwd,
                            std::chrono::milliseconds timeout);

}  // namespace baton

#endif  // BATON_UTIL_RUN_TO_END_H_
