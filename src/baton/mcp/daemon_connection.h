// An asynchronous connection to batond on the MCP server's EventLoop:
// requests are pipelined and each reply goes to the callback of its id, so
// one slow request (a wait) never holds up the others. Replies' notices go
// to a sink. Not thread-safe (single loop thread).
#ifndef BATON_MCP_DAEMON_CONNECTION_H_
#define BATON_MCP_DAEMON_CONNECTION_H_

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "baton/ipc/daemon_client.h"
#include "baton/ipc/line_channel.h"
#include "baton/loop/event_loop.h"
#include "baton/util/result.h"

namespace baton::mcp {

class DaemonConnection {
 public:
  // The reply's "result", or the daemon's error (kUnavailable when the
  // connection closed before the reply came).
  using ReplyCallback = std::function<void(Result<nlohmann::json>)>;
  using NoticeSink = std::function<void(const nlohmann::json& notice)>;

  // Connects (blocking; DaemonClient starts batond when none runs) and
  // moves the socket onto `loop`. `session` goes with every request.
  static Result<std::unique_ptr<DaemonConnection>> Open(
      EventLoop* loop, const DaemonClient::Options& options,
      NoticeSink notices);

  ~DaemonConnection();
  DaemonConnection(const DaemonConnection&) = delete;
  DaemonConnection& operator=(const DaemonConnection&) = delete;

  // Sends `op` with `args`; `done` runs once with the reply (from the loop,
  // never from inside Call). After Close, `done` is never called.
  void Call(std::string_view op, nlohmann::json args, ReplyCallback done);

  // Closes the socket; pending callbacks are dropped without a call. The
  // daemon drops this connection's waits (doc/protocol.md, "Waits").
  void Close();
  bool closed() const { return channel_ == nullptr || channel_->closed(); }
  size_t pending() const { return pending_.size(); }

 private:
  DaemonConnection(EventLoop* loop, std::string session, NoticeSink notices);
  void OnLine(std::string_view line);
  void OnClose();

  EventLoop* loop_;
  std::string session_;
  NoticeSink notices_;
  std::unique_ptr<LineChannel> channel_;
  int64_t next_id_ = 1;
  std::map<int64_t, ReplyCallback> pending_;
};

}  // namespace baton::mcp

#endif  // BATON_MCP_DAEMON_CONNECTION_H_
