// A non-blocking, newline-delimited message channel on an EventLoop: reads
// whole lines and hands them to a callback; buffers writes and flushes them
// when the socket can take them. Bounds what a peer may cost: the length of
// a line, and the output it leaves unread. Used for both the client
// protocol and the supervisor protocol (doc/protocol.md).
#ifndef BATON_IPC_LINE_CHANNEL_H_
#define BATON_IPC_LINE_CHANNEL_H_

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "baton/ipc/limits.h"
#include "baton/loop/event_loop.h"
#include "baton/util/unique_fd.h"

namespace baton {

class LineChannel;

// A bound on the input that several channels hold together (what a
// server's clients may cost it in all). When a read takes the total past
// `limit`, the channel holding the most is refused as for an overlong line
// (its over_budget_reply, then the close). Not thread-safe; outlives its
// channels.
class InputBudget {
 public:
  explicit InputBudget(size_t limit) : limit_(limit) {}
  InputBudget(const InputBudget&) = delete;
  InputBudget& operator=(const InputBudget&) = delete;
  size_t held() const { return held_; }
  size_t limit() const { return limit_; }

 private:
  friend class LineChannel;
  size_t limit_;
  size_t held_ = 0;
  std::set<LineChannel*> channels_;
};

// What a LineChannel lets its peer cost it.
struct LineChannelLimits {
  // The longest line read, without its '\n'. A longer one closes the
  // channel (a broken or hostile peer), after `overlong_reply` (when not
  // empty) is sent as far as the socket takes it at once.
  size_t max_line = kMaxInternalLine;
  std::string overlong_reply;
  // Output the peer may leave unread: a Send() while more than this
  // waits closes the channel at the next Flush(). 0 = no limit.
  size_t max_unread_output = 0;
  // Shared with other channels, if set: their input together. The channel
  // refused when it runs out is sent `over_budget_reply` (if not empty).
  InputBudget* shared_input = nullptr;
  std::string over_budget_reply;
};

class LineChannel {
 public:
  using LineCallback = std::function<void(std::string_view line)>;
  using CloseCallback = std::function<void()>;

  // The default longest line: the peer is baton itself.
  static constexpr size_t kMaxLine = kMaxInternalLine;

  using Limits = LineChannelLimits;
  enum class CloseReason {
    kOpen,
    kPeer,          // The peer closed, or the socket failed.
    kByUs,          // Close() was called.
    kLineTooLong,   // A line over Limits::max_line.
    kUnreadOutput,  // Over Limits::max_unread_output left unread.
    kOverBudget,    // Held the most when the shared input budget ran out.
  };
  // Lines served per loop turn. The rest wait for the next turn, after the
  // loop's before-sleep hooks: batond commits and sends what the first
  // lines asked for (their replies, their spawns) while it parses the next
  // ones, instead of keeping the supervisor idle through a thousand
  // pipelined requests. Nothing more is read from the socket meanwhile, so
  // a fast peer is held back by the kernel's buffer, not by our memory.
  static constexpr size_t kLinesPerTurn = 64;

  // Takes `fd` (non-blocking) and registers it with `loop`. The callbacks
  // must not destroy the channel; defer that (e.g. to a before-sleep hook).
  // on_close runs when the peer closes or a limit is passed, not on
  // Close().
  LineChannel(EventLoop* loop, UniqueFd fd, LineCallback on_line,
              CloseCallback on_close, Limits limits = {});
  ~LineChannel();
  LineChannel(const LineChannel&) = delete;
  LineChannel& operator=(const LineChannel&) = delete;

  // Queues `line` plus '\n'. Written at the next Flush() (or when the socket
  // drains). No-op once closed, and once the peer left more than
  // Limits::max_unread_output unread (the next Flush() closes).
  void Send(std::string_view line);
  // Writes as much of the queue as the socket takes now.
  void Flush();
  bool closed() const { return !fd_; }
  CloseReason close_reason() const { return close_reason_; }
  bool has_pending_output() const { return !out_.empty(); }
  // The bytes the input buffer has room for: what the peer once sent at
  // once, at most a line's limit.
  size_t input_capacity() const { return in_.capacity(); }
  int fd() const { return fd_.get(); }
  // Closes without calling on_close.
  void Close();
  // Reads whatever the peer has sent by now and serves every complete line
  // at once, past kLinesPerTurn (then a close seen is reported as usual).
  // For a server about to replace this channel by a new one from the same
  // peer, which died: nothing it sent before it went may be dropped.
  void ServeAvailable();

 private:
  void OnEvents(uint32_t events);
  // Reads what the socket holds now into in_ (sets eof_ at its end).
  // False if the read failed (the channel is then closed).
  bool ReadAvailable();
  // Serves up to `limit` complete lines; schedules the rest for the next
  // turn. At EOF, serves a last line without its newline too, and reports
  // the close at the next turn, once this turn's replies went out.
  void ServeLines(size_t limit = kLinesPerTurn);
  // Closes and runs on_close, for `reason`.
  void HandleClose(CloseReason reason);
  // A line over the limit: the reply (if any), then the close.
  void RefuseLine(CloseReason reason = CloseReason::kLineTooLong);
  // Tells the shared budget what in_ holds now; false if this read took it
  // over and this channel was the one refused.
  bool CountInput();
  // Takes what in_ holds off the shared budget (at the close).
  void ReleaseInput();

  EventLoop* loop_;
  UniqueFd fd_;
  LineCallback on_line_;
  CloseCallback on_close_;
  Limits limits_;
  CloseReason close_reason_ = CloseReason::kOpen;
  bool unread_output_over_ = false;  // Send() found too much unread.
  std::string in_;
  size_t counted_ = 0;  // in_'s size as the shared budget knows it.
  size_t served_ = 0;   // in_[0, served_) is served.
  bool eof_ = false;    // The peer closed; served lines come first.
  TimerId resume_timer_ = 0;
  std::string out_;
  bool want_write_ = false;
};

}  // namespace baton

#endif  // BATON_IPC_LINE_CHANNEL_H_
