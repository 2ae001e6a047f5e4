// Starts a long-lived helper process (batond, the supervisor) detached from
// the caller: in its own session, not the caller's child (double fork), with
// stdio on /dev/null. The caller blocks until the process reports ready on a
// pipe, which is event-driven and bounded: no polling for a socket file.
#ifndef BATON_UTIL_DETACHED_PROCESS_H_
#define BATON_UTIL_DETACHED_PROCESS_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "baton/util/result.h"

namespace baton {

// Runs `argv` detached. Every "{ready_fd}" in `argv` is replaced by the
// number of the pipe's write end, the one fd besides stdio (/dev/null) that
// the process inherits: fds the caller inherited from its own parent must not
// outlive it in a daemon. The process writes "R" when ready, or
// "E<message>" and exits when it cannot start. Fails with the process's
// message (kUnavailable); with kAlreadyExists if it exited without a word
// (another instance won a race: connect again); kSpawnFailed if the exec
// failed; kTimeout after `ready_timeout`. For tests, `child_entry` (if set)
// runs in the detached process instead of the exec, given the ready fd; it
// must not return.
Status StartDetached(std::vector<std::string> argv,
                     std::chrono::milliseconds ready_timeout,
                     std::function<void(int ready_fd)> child_entry = {});

// The process side: reports readiness (or a start-up error) on `ready_fd`
// and closes it. No-op for ready_fd < 0.
void ReportReady(int ready_fd);
void ReportStartFailure(int ready_fd, const std::string& message);

// The absolute path of the running executable (/proc/self/exe).
std::string SelfExecutable();

}  // namespace baton

#endif  // BATON_UTIL_DETACHED_PROCESS_H_
