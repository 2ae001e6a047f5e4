// Where baton keeps its state (see doc/state-dir.md). BATON_HOME puts all of
// it in one directory; otherwise XDG_STATE_HOME and XDG_RUNTIME_DIR are used.
#ifndef BATON_UTIL_STATE_PATHS_H_
#define BATON_UTIL_STATE_PATHS_H_

#include <string>

#include "baton/util/result.h"

namespace baton {

struct StatePaths {
  std::string home;     // Database, logs, task files. 0700.
  std::string runtime;  // Sockets and locks. 0700.

  std::string database() const { return home + "/baton.db"; }
  std::string daemon_log() const { return home + "/batond.log"; }
  std::string tasks_dir() const { return home + "/tasks"; }
  std::string daemon_socket() const { return runtime + "/batond.sock"; }
  std::string daemon_lock() const { return runtime + "/batond.lock"; }
  // While `baton daemon upgrade` replaces batond: the file the next batond
  // runs, whoever starts it (doc/install.md, "Upgrades").
  std::string next_daemon() const { return runtime + "/batond.next"; }
  std::string supervisor_socket() const { return runtime + "/supervisor.sock"; }
  std::string supervisor_lock() const { return runtime + "/supervisor.lock"; }
  // Eight hex digits of `home`: names this baton's things in places other
  // batons share (Slurm job names, cgroups), so that two never meet.
  std::string tag() const;

  // From BATON_HOME, else XDG_STATE_HOME (~/.local/state) and
  // XDG_RUNTIME_DIR. `home_override` (the --state-dir flag) wins over all.
  static Result<StatePaths> FromEnvironment(const std::string& home_override);

  // Creates both directories (0700) and checks they are ours and private.
  Status Prepare() const;
};

}  // namespace baton

#endif  // BATON_UTIL_STATE_PATHS_H_
