#include "baton/loop/worker_thread.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace baton {

WorkerThread::WorkerThread(EventLoop* loop)
    : loop_(loop), wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ &&
      !loop_->AddFd(wake_fd_.get(), EPOLLIN, [this](uint32_t) { OnWake(); })) {
    wake_fd_.reset();
  }
}

WorkerThread::~WorkerThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queued_.clear();
  }
  work_ready_.notify_all();
  if (thread_.joinable())
    thread_.join();
  if (wake_fd_)
    loop_->RemoveFd(wake_fd_.get());
}

void WorkerThread::Post(std::function<void()> job, std::function<void()> done) {
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
  // Started with the first job: a batond that never collects evidence
  // runs no thread.
  if (!thread_.joinable())
    thread_ = std::thread([this] { Work(); });
  work_ready_.notify_one();
}

void WorkerThread::Work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      work_ready_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
      if (stopping_)
        return;
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

void WorkerThread::OnWake() {
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
