// The supervisor process: the parent of every task. It spawns tasks, kills
// them, enforces their deadlines, reaps them and records each exit in an
// exit file, and outlives batond (doc/supervisor.md). One loop thread; the
// spawns themselves run on a few worker threads (spawn_pool.h).
#ifndef BATON_SUPERVISOR_SUPERVISOR_H_
#define BATON_SUPERVISOR_SUPERVISOR_H_

#include "baton/util/state_paths.h"

namespace baton {

// Runs the supervisor until no batond is connected and no task (nor a
// pending SIGKILL escalation) is live, or until SIGTERM arrives while no task
// is live. Returns the process exit code.
//
// `ready_fd` (-1 for none) is the write end of the starter's pipe: it gets
// one byte 'R' once the socket listens, 'E' if start-up failed (see
// supervisor.log), and nothing if another supervisor already holds the lock
// (then this returns 0 at once). It is closed in every case.
// REQUIRES: `paths` were prepared (StatePaths::Prepare); no other threads
// (it starts its spawn threads itself, once the signals are blocked).
int RunSupervisor(const StatePaths& paths, int ready_fd);

}  // namespace baton

#endif  // BATON_SUPERVISOR_SUPERVISOR_H_
