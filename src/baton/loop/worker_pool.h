// Work that may block (a spawn, git, a walk of a large folder) run off an
// EventLoop: a few threads of their own take jobs in order, and each job's
// `done` runs afterwards on the loop's thread, in the order the jobs
// finish, so that the loop never waits for them. What a job and its `done`
// share is the job's own state, captured by both. The supervisor's spawns
// (supervisor/spawn_pool.h) and batond's evidence (doc/tasks.md,
// "Checks and evidence") run here.
#ifndef BATON_LOOP_WORKER_POOL_H_
#define BATON_LOOP_WORKER_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/loop/event_loop.h"
#include "baton/util/unique_fd.h"

namespace baton {

class WorkerPool {
 public:
  // What the destructor does with jobs not started yet: run them (a spawn
  // promised is a spawn made) or drop them.
  enum class AtExit { kRunQueued, kDropQueued };

  // The threads start with the first Post: they inherit the signal mask
  // the process has then (the supervisor's loop blocks its signals first).
  WorkerPool(EventLoop* loop, int threads, AtExit at_exit);
  // Waits for the threads (and, with kRunQueued, the jobs left); calls no
  // `done`.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // `job` runs on a worker thread, then `done` on the loop's. With no
  // threads (an eventfd could not be made), both run at once, here.
  void Post(std::function<void()> job, std::function<void()> done);
  // Jobs posted whose `done` has not run yet.
  size_t pending() const { return pending_; }

 private:
  struct Job {
    std::function<void()> work;
    std::function<void()> done;
  };
  void Work();
  void OnWake();

  EventLoop* loop_;
  int thread_count_;
  AtExit at_exit_;
  UniqueFd wake_fd_;  // eventfd: finished jobs wait.
  size_t pending_ = 0;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<Job> queued_;    // Guarded by mu_.
  std::deque<Job> finished_;  // Guarded by mu_.
  bool stopping_ = false;     // Guarded by mu_.
  std::vector<std::thread> threads_;
};

}  // namespace baton

#endif  // BATON_LOOP_WORKER_POOL_H_
