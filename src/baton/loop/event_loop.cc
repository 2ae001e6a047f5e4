#include "baton/loop/event_loop.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

namespace baton {

EventLoop::EventLoop() : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {}

EventLoop::~EventLoop() = default;

Status EventLoop::AddFd(int fd, uint32_t events, FdCallback callback) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  bool known = fds_.count(fd) != 0;
  if (::epoll_ctl(epoll_fd_.get(), known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd,
                  &ev) != 0) {
    return std::unexpected(ErrnoError("epoll_ctl add", errno));
  }
  fds_[fd] = std::make_shared<FdCallback>(std::move(callback));
  return {};
}

Status EventLoop::ModifyFd(int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0) {
    return std::unexpected(ErrnoError("epoll_ctl mod", errno));
  }
  return {};
}

void EventLoop::RemoveFd(int fd) {
  if (fds_.erase(fd) == 0)
    return;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

TimerId EventLoop::Schedule(MonoTime when, std::function<void()> callback) {
  TimerId id = next_timer_id_++;
  timers_.emplace(when, TimerEntry{id, std::move(callback)});
  timer_deadlines_[id] = when;
  return id;
}

void EventLoop::Cancel(TimerId id) {
  auto deadline = timer_deadlines_.find(id);
  if (deadline == timer_deadlines_.end())
    return;
  auto [first, last] = timers_.equal_range(deadline->second);
  for (auto it = first; it != last; ++it) {
    if (it->second.id == id) {
      timers_.erase(it);
      break;
    }
  }
  timer_deadlines_.erase(deadline);
}

Status EventLoop::HandleSignal(int signal, std::function<void()> callback) {
  sigset_t mask;
  sigemptyset(&mask);
  for (const auto& [known, unused] : signal_callbacks_)
    sigaddset(&mask, known);
  sigaddset(&mask, signal);
  if (::sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) {
    return std::unexpected(ErrnoError("sigprocmask", errno));
  }
  int fd = ::signalfd(signal_fd_ ? signal_fd_.get() : -1, &mask,
                      SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0)
    return std::unexpected(ErrnoError("signalfd", errno));
  signal_callbacks_[signal] = std::move(callback);
  if (!signal_fd_) {
    signal_fd_.reset(fd);
    return AddFd(fd, EPOLLIN, [this](uint32_t) { OnSignalFd(); });
  }
  return {};
}

void EventLoop::OnSignalFd() {
  signalfd_siginfo info;
  while (::read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
    auto it = signal_callbacks_.find(static_cast<int>(info.ssi_signo));
    if (it != signal_callbacks_.end())
      it->second();
  }
}

void EventLoop::AddBeforeSleep(std::function<void()> hook) {
  before_sleep_.push_back(std::move(hook));
}

int EventLoop::NextTimeoutMs(std::chrono::milliseconds cap) const {
  if (timers_.empty())
    return static_cast<int>(cap.count());
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(
      timers_.begin()->first - std::chrono::steady_clock::now());
  if (wait.count() < 0)
    return 0;
  return static_cast<int>(std::min(wait, cap).count());
}

void EventLoop::RunDueTimers(MonoTime now) {
  // Collect first: a callback may schedule or cancel timers.
  std::vector<TimerEntry> due;
  while (!timers_.empty() && timers_.begin()->first <= now) {
    due.push_back(std::move(timers_.begin()->second));
    timer_deadlines_.erase(due.back().id);
    timers_.erase(timers_.begin());
  }
  for (auto& entry : due)
    entry.callback();
}

Status EventLoop::RunOnce(std::chrono::milliseconds max_wait) {
  for (auto& hook : before_sleep_)
    hook();
  epoll_event events[64];
  int n = ::epoll_wait(epoll_fd_.get(), events, 64, NextTimeoutMs(max_wait));
  // Timers due when the loop woke: one scheduled for "now" by a callback
  // below runs in the next iteration, after the before-sleep hooks.
  MonoTime woke = std::chrono::steady_clock::now();
  if (n < 0) {
    if (errno == EINTR)
      return {};
    return std::unexpected(ErrnoError("epoll_wait", errno));
  }
  for (int i = 0; i < n; ++i) {
    auto it = fds_.find(events[i].data.fd);
    if (it == fds_.end())
      continue;                  // Removed by an earlier callback.
    auto callback = it->second;  // Keeps it alive if it removes itself.
    (*callback)(events[i].events);
  }
  RunDueTimers(woke);
  return {};
}

Status EventLoop::Run() {
  running_ = true;
  while (running_) {
    // An hour is only the cap of one wait: an idle loop wakes for timers
    // and fds, never on a schedule of its own.
    if (auto status = RunOnce(std::chrono::hours(1)); !status)
      return status;
  }
  for (auto& hook : before_sleep_)
    hook();
  return {};
}

}  // namespace baton
