// Starts tasks on a few worker threads, so that the supervisor's loop never
// waits for a spawn. posix_spawn returns only once the child has exec'd (or
// failed to), and opening the task's files creates inodes: a millisecond or
// more per task on a busy machine. With the spawns on their own threads the
// loop goes on reaping, killing and answering batond meanwhile, and on a
// machine with several cores several tasks start at once
// (doc/supervisor.md, "Spawning").
//
// A job is one SpawnRequest; its result comes back on the loop's thread
// through `on_done`, in the order the jobs finish.
#ifndef BATON_SUPERVISOR_SPAWN_POOL_H_
#define BATON_SUPERVISOR_SPAWN_POOL_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/loop/event_loop.h"
#include "baton/loop/worker_pool.h"
#include "baton/supervisor/journal.h"
#include "baton/supervisor/limits.h"
#include "baton/supervisor/protocol.h"
#include "baton/util/program_path.h"
#include "baton/util/unique_fd.h"

namespace baton {

// What a started task leaves behind for the supervisor to keep.
struct SpawnOutcome {
  SpawnRequest request;
  std::string error;      // Empty on success.
  pid_t pid = 0;          // Also the process group and session id.
  UniqueFd log_fd;        // The output log, kept for the disk-full check.
  UniqueFd stdin_holder;  // A FIFO stdin's writer, until close_stdin.
  // Its cgroups, when a limit of it is held by one (supervisor/limits.h).
  std::shared_ptr<TaskCgroup> cgroup;
  // What the journal says of it once started (pid, start time, deadline).
  JournalTask record;
};

// Opens the task's files, checks its folder and spawns it in its own
// session, finding argv[0] through `programs` when given, and holding it
// to its limits through `limits` (a task with limits fails without it).
// With a `journal`, says "spawning" right before the spawn itself and
// "started" (or "ended") right after, from this thread: a supervisor that
// dies with spawns still queued leaves them unnamed, so they are sent and
// run once again, and one that dies after a spawn leaves its pid
// (doc/supervisor.md, "Exactly once"). Thread-safe: touches nothing but
// the request's paths and cgroups (and the cache and journal, which lock).
// Exposed for tests.
SpawnOutcome StartTask(SpawnRequest request, ProgramCache* programs = nullptr,
                       const LimitHolder* limits = nullptr,
                       Journal* journal = nullptr);

class SpawnPool {
 public:
  using DoneCallback = std::function<void(SpawnOutcome)>;

  // REQUIRES: the process's blocked signals are set up (EventLoop::
  // HandleSignal) before the first Submit, which starts the threads, so that
  // they inherit the mask and never take SIGCHLD or SIGTERM themselves.
  // `limits` and `journal` outlive the pool.
  SpawnPool(EventLoop* loop, int threads, DoneCallback on_done,
            const LimitHolder* limits = nullptr, Journal* journal = nullptr);

  void Submit(SpawnRequest request);
  // Jobs submitted whose outcome was not delivered yet.
  size_t in_flight() const { return workers_.pending(); }

 private:
  DoneCallback on_done_;
  ProgramCache programs_;  // Where the spawns found their argv[0].
  const LimitHolder* limits_;
  Journal* journal_;
  // Last: destroyed first, every spawn it was given made.
  WorkerPool workers_;
};

}  // namespace baton

#endif  // BATON_SUPERVISOR_SPAWN_POOL_H_
