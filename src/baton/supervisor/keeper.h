// The keeper: a tiny process above the supervisor that outlives it, so
// that a task's exit status is not lost when the supervisor dies
// (doc/supervisor.md, "The keeper").
//
// A process whose parent dies is reparented to its nearest living ancestor
// that is a child subreaper, else to init, which reaps it and drops its
// status. The keeper is the supervisor's parent and a subreaper: when the
// supervisor dies, its tasks become the keeper's children, and the keeper
// appends each one's end (pid, start time, wait status) to the journal
// before it reaps it. A new supervisor reads those records there. While the
// supervisor lives the keeper only waits: it costs nothing per task.
#ifndef BATON_SUPERVISOR_KEEPER_H_
#define BATON_SUPERVISOR_KEEPER_H_

#include <string>

namespace baton {

// Forks. The child returns (it goes on as the supervisor); the parent
// becomes the keeper of `journal_path` and never returns: it exits with the
// supervisor's exit status once it has no children left, or at once when
// the supervisor exited 0 (a clean exit leaves no task behind). SIGTERM to
// the keeper is passed on to the supervisor. `keep_fd` (the log) stays
// open in the keeper; every other fd is closed there. If fork fails the
// caller goes on without a keeper (logged).
// REQUIRES: no other threads.
void StartKeeper(const std::string& journal_path, int keep_fd);

}  // namespace baton

#endif  // BATON_SUPERVISOR_KEEPER_H_
