#include "baton/loop/worker_pool.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace baton {

WorkerPool::WorkerPool(EventLoop* loop, int threads, AtExit at_exit)
    : loop_(loop),
      thread_count_(threads < 1 ? 1 : threads),
      at_exit_(at_exit),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ &&
      !loop_->AddFd(wake_fd_.get(), EPOLLIN, [this](uint32_t) { OnWake(); })) {
    wake_fd_.reset();
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (at_exit_ == AtExit::kDropQueued)
      queued_.clear();
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_)
    thread.join();
  if (wake_fd_)
    loop_->RemoveFd(wake_fd_.get());
}

void WorkerPool::Post(std::function<void()> job, std::function<void()> done) {
  if (!wake_fd_) {
    job();
    done();
    return;
  }
  ++pending_;
  {
    std::lock_guard lock(mu_);
    queued_.push_back({std::move(job), std::move(done)});
  }
  // Started with the first job: a pool that is never used runs no thread.
  if (threads_.empty()) {
    for (int i = 0; i < thread_count_; ++i)
      threads_.emplace_back([this] { Work(); });
  }
  work_ready_.notify_one();
}

void WorkerPool::Work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      work_ready_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
      if (queued_.empty())
        return;  // Stopping, and nothing left to run.
      job = std::move(queued_.front());
      queued_.pop_front();
    }
    job.work();
    {
      std::lock_guard lock(mu_);
      finished_.push_back(std::move(job));
    }
    uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
  }
}

void WorkerPool::OnWake() {
  uint64_t count = 0;
  (void)!::read(wake_fd_.get(), &count, sizeof count);
  std::deque<Job> finished;
  {
    std::lock_guard lock(mu_);
    finished.swap(finished_);
  }
  for (Job& job : finished) {
    --pending_;
    job.done();
  }
}

}  // namespace baton
