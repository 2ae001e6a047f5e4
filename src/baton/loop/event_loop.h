// A single-threaded epoll loop: fd readiness callbacks, one-shot timers,
// signals as events (signalfd), and "before sleep" hooks that run once per
// iteration before the loop blocks (where the daemon commits its batched
// writes and flushes its sockets). Everything runs on the thread that calls
// Run(); nothing here is thread-safe.
#ifndef BATON_LOOP_EVENT_LOOP_H_
#define BATON_LOOP_EVENT_LOOP_H_

#include <sys/epoll.h>

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "baton/util/result.h"
#include "baton/util/timers.h"
#include "baton/util/unique_fd.h"

namespace baton {

class EventLoop : public Timers {
 public:
  // Events are EPOLLIN / EPOLLOUT / EPOLLHUP / EPOLLERR bits.
  using FdCallback = std::function<void(uint32_t events)>;

  EventLoop();
  ~EventLoop() override;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // False if epoll could not be created (then nothing else works).
  bool ok() const { return static_cast<bool>(epoll_fd_); }

  // Watches `fd` (not owned) for `events`. Re-adding replaces the callback.
  Status AddFd(int fd, uint32_t events, FdCallback callback);
  Status ModifyFd(int fd, uint32_t events);
  // Safe to call from inside a callback, also for the fd being served.
  void RemoveFd(int fd);

  // A timer runs in the first iteration that wakes at or after `when`; one
  // scheduled from a callback for now or earlier runs in the next
  // iteration, after the before-sleep hooks, without blocking.
  TimerId Schedule(MonoTime when, std::function<void()> callback) override;
  void Cancel(TimerId id) override;

  // Blocks `signal` for the whole process and delivers it as a callback.
  // REQUIRES: called before any thread is started.
  Status HandleSignal(int signal, std::function<void()> callback);

  // Runs `hook` at the end of every iteration, in the order added.
  void AddBeforeSleep(std::function<void()> hook);

  // Runs until Stop(). Returns an error only if epoll itself fails.
  Status Run();
  void Stop() { running_ = false; }
  // One iteration: waits at most `max_wait` for events. For tests.
  Status RunOnce(std::chrono::milliseconds max_wait);
  // Timers scheduled and not yet run or cancelled. For tests.
  size_t pending_timers() const { return timers_.size(); }

 private:
  void RunDueTimers(MonoTime now);
  void OnSignalFd();
  int NextTimeoutMs(std::chrono::milliseconds cap) const;

  UniqueFd epoll_fd_;
  bool running_ = false;
  std::unordered_map<int, std::shared_ptr<FdCallback>> fds_;
  struct TimerEntry {
    TimerId id;
    std::function<void()> callback;
  };
  std::multimap<MonoTime, TimerEntry> timers_;
  std::unordered_map<TimerId, MonoTime> timer_deadlines_;
  TimerId next_timer_id_ = 1;
  std::vector<std::function<void()>> before_sleep_;
  UniqueFd signal_fd_;
  std::map<int, std::function<void()>> signal_callbacks_;
};

}  // namespace baton

#endif  // BATON_LOOP_EVENT_LOOP_H_
