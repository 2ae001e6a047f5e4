// Work that may block (git, a walk of a large folder) run off an EventLoop:
// one thread of its own takes jobs in order, and each job's `done` runs
// afterwards on the loop's thread, so that the loop never waits for it
// (doc/tasks.md, "Evidence"). What the two share is the job's own state,
// captured by both callbacks.
#ifndef BATON_LOOP_WORKER_THREAD_H_
#define BATON_LOOP_WORKER_THREAD_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "baton/loop/event_loop.h"
#include "baton/util/unique_fd.h"

namespace baton {

class WorkerThread {
 public:
  explicit WorkerThread(EventLoop* loop);
  // Waits for the job under way (each bounds itself), runs none of the
  // queued ones, and calls no `done`.
  ~WorkerThread();
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // `job` runs on the worker's thread, then `done` on the loop's. With no
  // thread (an eventfd could not be made), both run at once, here.
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
  UniqueFd wake_fd_;  // eventfd: finished jobs wait.
  size_t pending_ = 0;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<Job> queued_;    // Guarded by mu_.
  std::deque<Job> finished_;  // Guarded by mu_.
  bool stopping_ = false;     // Guarded by mu_.
  std::thread thread_;
};

}  // namespace baton

#endif  // BATON_LOOP_WORKER_THREAD_H_
