// The one way baton starts a child (tasks in the supervisor, checks and the
// codex probe in batond; posix_spawn, or vfork where the child must run
// code of ours before its exec): a clean child in its own session, with an
// explicit environment and folder and nothing inherited but its three stdio
// fds. Not for detached helpers (batond, the
// supervisor): those are started by util/detached_process.h.
#ifndef BATON_UTIL_SPAWN_CHILD_H_
#define BATON_UTIL_SPAWN_CHILD_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "baton/util/result.h"

namespace baton {

struct ChildSpec {
  // The file to execute, as posix_spawn takes it: no PATH search here
  // (ResolveProgram, util/program_path.h, finds it on the child's own PATH).
  std::string program;
  std::vector<std::string> argv;  // argv[0] included; not empty.
  // The child's whole environment, "NAME=value" entries. Never taken from
  // the caller's: a child of batond or the supervisor must not see theirs.
  std::vector<std::string> env;
  std::string cwd;  // The child's working directory; absolute, not empty.
  // The fds its stdin, stdout and stderr are made from (dup2'd, so they
  // may be close-on-exec and stay the caller's); -1 = /dev/null.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Set up in the child before it execs, so that nothing it starts escapes
  // them (doc/limits.md): the cgroup.procs files it moves itself into, and
  // the rlimits it sets (resource, limit). posix_spawn can do neither, so
  // either makes SpawnChild vfork.
  std::vector<std::string> join_cgroups;
  std::vector<std::pair<int, rlim_t>> rlimits;
  // Written by the child in one write(2) right before its exec: the two
  // parts with its pid in decimal between them (at most 512 bytes in all,
  // else nothing is written). So the caller's journal holds the pid of a
  // child that is about to run even if the caller dies during the spawn
  // (doc/supervisor.md, "Exactly once"). Makes SpawnChild vfork.
  int announce_fd = -1;
  std::string announce_before_pid;
  std::string announce_after_pid;
};

// Starts `spec` and returns its pid, which is also its process group and
// session id (the handle to kill the whole group; no controlling
// terminal). The child starts with an empty signal mask and every signal at
// its default: the callers' loops block the signals they read through
// signalfd and ignore SIGPIPE, SIGHUP and SIGINT, and none of that may leak
// into a child (glibc still leaves its two internal signals, 32 and 33,
// ignored). Every fd above 2 is closed in the child, close-on-exec or not.
//
// Every set-up call is checked. Fails with kInvalidArgument for an empty
// argv, program or cwd, and otherwise with the errno of the call that
// failed, as `spawn "<argv[0]>": <strerror>` (the exec's and the chdir's
// failures read the same: check the folder first to tell them apart), or
// `spawn "<argv[0]>": <set-up call>: <strerror>` for a failed set-up
// (`join cgroup <file>` and `setrlimit` among them). The vfork path
// needs Linux 5.11 (close_range's CLOEXEC flag). Thread-safe.
Result<pid_t> SpawnChild(const ChildSpec& spec);

}  // namespace baton

#endif  // BATON_UTIL_SPAWN_CHILD_H_
