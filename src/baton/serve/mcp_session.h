// One MCP server of `baton serve` (an mcp::Server: one owner session of
// batond) and the HTTP exchanges its messages go to (doc/serve.md). A
// request's answer is JSON, or an SSE stream once something comes before
// it. In the legacy era (resumable) every event of a stream has an id and
// is kept until the answer is out, so that a client whose connection
// dropped can resume the stream (GET with Last-Event-ID) within a grace
// period; its wait is cancelled only when that runs out. A 2026-07-28
// stream is not resumable: closing it cancels its request at once.
#ifndef BATON_SERVE_MCP_SESSION_H_
#define BATON_SERVE_MCP_SESSION_H_

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "baton/loop/event_loop.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/server.h"
#include "baton/serve/http_server.h"

namespace baton::serve {

struct McpSessionOptions {
  bool resumable = false;  // The legacy era's streams.
  std::chrono::milliseconds resume_grace{30'000};
  // Events kept per stream for a resumption; older ones are dropped (a
  // resumption from before them is refused).
  size_t max_replay_events = 256;
};

class McpSession : public mcp::Transport {
 public:
  McpSession(EventLoop* loop, const mcp::McpServerOptions& server,
             McpSessionOptions options);
  ~McpSession() override;
  McpSession(const McpSession&) = delete;
  McpSession& operator=(const McpSession&) = delete;

  void Start() { server_->Start(); }
  const std::string& batond_session() const { return server_->facts().session; }
  // Something is in flight or open: not a session to end to make room.
  bool busy() const { return !pending_.empty() || stream_ != nullptr; }
  void Release() { server_->ReleaseRetired(); }

  // Serves a request posted through `http`; what the server says about it
  // goes back there under `key`. `headers` go with the answer's first byte.
  void Request(mcp::Message message, std::string key, const ExchangePtr& http,
               bool events_ok, bool modern, HeaderList headers);
  void Notify(mcp::Message message) { server_->Serve(std::move(message)); }
  // The session's own stream (GET). False when one is open.
  bool Listen(const ExchangePtr& http);
  // Resumes the dropped stream that `last_event_id` belongs to on `http`:
  // replays what came after that event, then goes on live. False (nothing
  // done) when no such stream waits for a resumption.
  bool Resume(const std::string& last_event_id, const ExchangePtr& http);

  void Send(const mcp::Json& message, const std::string& key) override;

  uint64_t last_used = 0;

 private:
  struct Pending {
    ExchangePtr http;  // Null while the stream waits for a resumption.
    bool events_ok = false;
    bool modern = false;
    HeaderList headers;
    uint64_t stream = 0;  // Its number once its events started (resumable).
    uint64_t next_seq = 1;
    std::deque<std::pair<uint64_t, std::string>> events;  // seq, data.
    bool answered = false;  // The answer is among `events`.
    TimerId grace = 0;
  };

  // Sends (and, resumable, keeps) one event of `pending`'s stream.
  void Event(Pending& pending, std::string data);
  void Gone(const std::string& key);
  void Expire(const std::string& key);
  void Drop(std::map<std::string, Pending>::iterator it);

  EventLoop* loop_;
  McpSessionOptions options_;
  std::unique_ptr<mcp::Server> server_;
  std::map<std::string, Pending> pending_;  // By exchange name.
  ExchangePtr stream_;                      // GET, or null.
  uint64_t streams_ = 0;                    // Numbers the streams.
};

}  // namespace baton::serve

#endif  // BATON_SERVE_MCP_SESSION_H_
