#include "baton/ipc/line_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace baton {

LineChannel::LineChannel(EventLoop* loop, UniqueFd fd, LineCallback on_line,
                         CloseCallback on_close)
    : loop_(loop),
      fd_(std::move(fd)),
      on_line_(std::move(on_line)),
      on_close_(std::move(on_close)) {
  if (!loop_->AddFd(fd_.get(), EPOLLIN | EPOLLRDHUP,
                    [this](uint32_t events) { OnEvents(events); })) {
    fd_.reset();
  }
}

LineChannel::~LineChannel() {
  Close();
}

void LineChannel::Close() {
  if (resume_timer_) {
    loop_->Cancel(resume_timer_);
    resume_timer_ = 0;
  }
  if (!fd_)
    return;
  loop_->RemoveFd(fd_.get());
  fd_.reset();
}

void LineChannel::Send(std::string_view line) {
  if (!fd_)
    return;
  out_.append(line);
  out_.push_back('\n');
}

void LineChannel::Flush() {
  while (fd_ && !out_.empty()) {
    ssize_t n = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        break;
      HandleClose();
      return;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  if (!fd_)
    return;
  bool want = !out_.empty();
  if (want != want_write_) {
    want_write_ = want;
    (void)loop_->ModifyFd(fd_.get(),
                          EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u));
  }
}

void LineChannel::HandleClose() {
  Close();
  if (on_close_)
    on_close_();
}

void LineChannel::OnEvents(uint32_t events) {
  if (events & EPOLLOUT)
    Flush();
  // With lines still to serve, the resume timer serves them; the socket
  // (and a close) waits until they are done.
  if (!fd_ || resume_timer_ || eof_)
    return;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
    if (!ReadAvailable())
      return;
    if (events & EPOLLERR)
      eof_ = true;
    ServeLines();
  }
}

bool LineChannel::ReadAvailable() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return true;
      HandleClose();
      return false;
    }
    if (n == 0) {
      eof_ = true;  // Serve complete lines before reporting the close.
      return true;
    }
    in_.append(buf, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < sizeof buf)
      return true;
  }
}

void LineChannel::ServeAvailable() {
  if (!fd_)
    return;
  if (resume_timer_) {
    loop_->Cancel(resume_timer_);
    resume_timer_ = 0;
  }
  // A dead peer's last bytes are all queued: read until none are left.
  while (fd_ && !eof_ && in_.size() <= kMaxLine) {
    size_t before = in_.size();
    if (!ReadAvailable())
      return;
    if (in_.size() == before)
      break;
  }
  ServeLines(SIZE_MAX);
}

void LineChannel::ServeLines(size_t limit) {
  size_t served = 0;
  for (size_t nl; fd_ && (nl = in_.find('\n', served_)) != std::string::npos;
       served_ = nl + 1) {
    if (served == limit) {
      resume_timer_ = loop_->Schedule(MonoTime::clock::now(), [this] {
        resume_timer_ = 0;
        ServeLines();
      });
      return;
    }
    std::string_view line(in_.data() + served_, nl - served_);
    if (!line.empty()) {
      on_line_(line);
      ++served;
    }
  }
  if (!fd_)
    return;
  in_.erase(0, served_);
  served_ = 0;
  if (in_.size() > kMaxLine || eof_)
    HandleClose();
}

}  // namespace baton
