// An asynchronous connection to batond on an EventLoop, for the clients
// that serve many callers at once (baton mcp, baton serve): requests are
// pipelined and each reply goes to the callback of its id, so one slow
// request (a wait) never holds up the others. Replies' notices go to a
// sink. Same codec as the blocking DaemonClient. Not thread-safe (single
// loop thread).
#ifndef BATON_IPC_ASYNC_DAEMON_CLIENT_H_
#define BATON_IPC_ASYNC_DAEMON_CLIENT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "baton/ipc/codec.h"
#include "baton/ipc/daemon_client.h"
#include "baton/ipc/line_channel.h"
#include "baton/loop/event_loop.h"
#include "baton/util/result.h"

namespace baton {

class AsyncDaemonClient {
 public:
  using NoticeSink = std::function<void(Notice notice)>;
  template <class R>
  using ReplyCallback = std::function<void(Result<typename R::Reply>)>;

  // Connects (blocking; DaemonClient starts batond when none runs) and
  // moves the socket onto `loop`. `session` goes with every request.
  static Result<std::unique_ptr<AsyncDaemonClient>> Open(
      EventLoop* loop, const DaemonClient::Options& options,
      NoticeSink notices);

  ~AsyncDaemonClient();
  AsyncDaemonClient(const AsyncDaemonClient&) = delete;
  AsyncDaemonClient& operator=(const AsyncDaemonClient&) = delete;

  // Sends `request`; `done` runs once with the typed reply or the error
  // (kUnavailable when the connection closed first), from the loop, never
  // from inside Call. After Close, `done` is never called.
  template <class R>
  void Call(const R& request, ReplyCallback<R> done) {
    Send(EncodeRequestLine(next_id_, session_, request),
         [done = std::move(done)](Result<ReplyLine> reply) {
           if (!reply)
             return done(std::unexpected(reply.error()));
           done(DecodeResult<typename R::Reply>(*reply, R::kOp));
         });
  }

  // Closes the socket; pending callbacks are dropped without a call. The
  // daemon drops this connection's waits (doc/protocol.md, "Waits").
  void Close();
  bool closed() const { return channel_ == nullptr || channel_->closed(); }
  size_t pending() const { return pending_.size(); }

 private:
  using LineCallback = std::function<void(Result<ReplyLine>)>;
  AsyncDaemonClient(EventLoop* loop, std::string session, NoticeSink notices);
  // Sends the encoded request of id next_id_ (and moves it on).
  void Send(std::string line, LineCallback done);
  void OnLine(std::string_view line);
  void OnClose();
  // Closes the connection and fails every pending call with `error`.
  void Fail(const Error& error);

  EventLoop* loop_;
  std::string session_;
  NoticeSink notices_;
  std::unique_ptr<LineChannel> channel_;
  int64_t next_id_ = 1;
  std::map<int64_t, LineCallback> pending_;
};

}  // namespace baton

#endif  // BATON_IPC_ASYNC_DAEMON_CLIENT_H_
