#include "baton/ipc/line_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace baton {

LineChannel::LineChannel(EventLoop* loop, UniqueFd fd, LineCallback on_line,
                         CloseCallback on_close, Limits limits)
    : loop_(loop),
      fd_(std::move(fd)),
      on_line_(std::move(on_line)),
      on_close_(std::move(on_close)),
      limits_(std::move(limits)) {
  if (!loop_->AddFd(fd_.get(), EPOLLIN | EPOLLRDHUP,
                    [this](uint32_t events) { OnEvents(events); })) {
    fd_.reset();
  }
  if (limits_.shared_input)
    limits_.shared_input->channels_.insert(this);
}

LineChannel::~LineChannel() {
  Close();
  if (limits_.shared_input)
    limits_.shared_input->channels_.erase(this);
}

bool LineChannel::CountInput() {
  InputBudget* budget = limits_.shared_input;
  if (!budget || !fd_)
    return true;
  budget->held_ = budget->held_ - counted_ + in_.size();
  counted_ = in_.size();
  if (budget->held_ <= budget->limit_)
    return true;
  // Closed ones count nothing any more, and are not closed twice.
  LineChannel* largest = this;
  for (LineChannel* channel : budget->channels_) {
    if (channel->fd_ && channel->in_.size() - channel->served_ >
                            largest->in_.size() - largest->served_) {
      largest = channel;
    }
  }
  largest->RefuseLine(CloseReason::kOverBudget);
  return largest != this;
}

void LineChannel::ReleaseInput() {
  // The bytes themselves go with the channel (a callback may still hold a
  // line of them); its owner destroys it soon after the close.
  if (limits_.shared_input) {
    limits_.shared_input->held_ -= counted_;
    counted_ = 0;
  }
}

void LineChannel::Close() {
  if (resume_timer_) {
    loop_->Cancel(resume_timer_);
    resume_timer_ = 0;
  }
  if (!fd_)
    return;
  if (close_reason_ == CloseReason::kOpen)
    close_reason_ = CloseReason::kByUs;
  loop_->RemoveFd(fd_.get());
  fd_.reset();
  ReleaseInput();
}

void LineChannel::Send(std::string_view line) {
  if (!fd_ || unread_output_over_)
    return;
  if (limits_.max_unread_output != 0 &&
      out_.size() > limits_.max_unread_output) {
    // Closed at the next Flush(), not here: Send runs inside callbacks
    // that do not expect the channel to close under them.
    unread_output_over_ = true;
    return;
  }
  out_.append(line);
  out_.push_back('\n');
}

void LineChannel::Flush() {
  if (fd_ && unread_output_over_) {
    out_.clear();
    HandleClose(CloseReason::kUnreadOutput);
    return;
  }
  while (fd_ && !out_.empty()) {
    ssize_t n = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        break;
      HandleClose(CloseReason::kPeer);
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

void LineChannel::HandleClose(CloseReason reason) {
  close_reason_ = reason;
  Close();
  if (on_close_)
    on_close_();
}

void LineChannel::RefuseLine(CloseReason reason) {
  const std::string& reply = reason == CloseReason::kOverBudget
                                 ? limits_.over_budget_reply
                                 : limits_.overlong_reply;
  if (!reply.empty()) {
    // Before the close, as far as the socket takes it now: the peer may
    // still be writing its line, and nothing more is read from it.
    out_.append(reply);
    out_.push_back('\n');
    ssize_t sent;
    while ((sent = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL)) <
               0 &&
           errno == EINTR) {
    }
  }
  out_.clear();
  HandleClose(reason);
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
      HandleClose(CloseReason::kPeer);
      return false;
    }
    if (n == 0) {
      eof_ = true;  // Serve complete lines before reporting the close.
      return true;
    }
    in_.append(buf, static_cast<size_t>(n));
    if (!CountInput())
      return false;
    // Enough to serve, or to know the line is too long: the rest waits in
    // the socket (level-triggered, so the loop comes back for it).
    if (static_cast<size_t>(n) < sizeof buf ||
        in_.size() - served_ > limits_.max_line) {
      return true;
    }
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
  while (fd_ && !eof_ && in_.size() - served_ <= limits_.max_line) {
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
    if (line.size() > limits_.max_line)
      return RefuseLine();
    if (!line.empty()) {
      on_line_(line);
      ++served;
    }
  }
  if (!fd_)
    return;
  in_.erase(0, served_);
  served_ = 0;
  (void)CountInput();  // Less than before: never over.
  if (in_.size() > limits_.max_line)
    return RefuseLine();
  if (!eof_)
    return;
  // A last line without its newline is a line all the same.
  if (!in_.empty()) {
    std::string last = std::exchange(in_, {});
    (void)CountInput();
    on_line_(last);
    if (!fd_)
      return;
  }
  // The peer only closed its writing side: the replies to its last lines
  // go out in this turn (after the owner's before-sleep hooks, which may
  // hold them until a commit), and the close comes at the next.
  resume_timer_ = loop_->Schedule(MonoTime::clock::now(), [this] {
    resume_timer_ = 0;
    Flush();
    if (fd_)
      HandleClose(CloseReason::kPeer);
  });
}

}  // namespace baton
