// The HTTP/1.1 server of `baton serve`: a TCP listener and its connections
// on baton's EventLoop (one thread, no thread pool: the MCP server it
// carries is single-threaded too), requests parsed and responses written by
// Boost.Beast, a gate that every request passes first (Host, Origin, token),
// and routes by exact path (/mcp now; the board will add its own). An
// answer is whole (HttpResponse) or an event stream (text/event-stream,
// chunked) or a body sent in pieces (chunked, each piece once the one before
// is written: a file download), given at once or later through the
// request's HttpExchange.
// Bounded: connections, header and body sizes, bytes queued for a slow
// reader, and the time a connection may take to send its next request.
#ifndef BATON_SERVE_HTTP_SERVER_H_
#define BATON_SERVE_HTTP_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "baton/loop/event_loop.h"
#include "baton/serve/http_checks.h"
#include "baton/serve/http_message.h"
#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton::serve {

struct HttpLimits {
  size_t max_connections = 1024;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 4 * 1024 * 1024;
  // A reader this far behind an event stream is dropped.
  size_t max_queued_bytes = 16 * 1024 * 1024;
  // From a connection's start or its last answer to its next whole request.
  std::chrono::milliseconds request_timeout{60'000};
  // The same for a connection none of whose requests the gate let through
  // yet (no token): short, so that idle connections without the token
  // cannot hold the server's connections for long.
  std::chrono::milliseconds untrusted_timeout{10'000};
  // An SSE comment on every open event stream this often, so that clients
  // and proxies with idle timeouts keep a quiet stream.
  std::chrono::milliseconds keep_alive_interval{25'000};
};

class HttpConnection;

// The answer to one request: whole, or an event stream. Owned by whoever
// answers it (shared); outlives its connection safely: once the client is
// gone, every call does nothing.
class HttpExchange {
 public:
  // Answers whole (once; nothing if already answered or gone).
  void Respond(HttpResponse response);
  // Starts the answer as a text/event-stream (200) with `headers`.
  void StartEvents(HeaderList headers);
  // One SSE event whose data is `data` (one line: JSON has none inside),
  // with the event id `id` unless empty.
  void SendEvent(std::string_view data, std::string_view id = {});
  // Ends the event stream; the connection serves its next request.
  void EndEvents();
  // A body sent in pieces (chunked, 200, `headers`), for a file too large
  // to hold whole: StartBody, then Send and OnDrained until the end, then
  // EndEvents. No keep-alive comments go into it.
  void StartBody(HeaderList headers);
  void Send(std::string_view data);
  // Runs `callback` once (from the loop, never inside this call) when all
  // that was sent so far is written to the client; nothing if it is gone.
  void OnDrained(std::function<void()> callback);
  bool started() const { return started_; }
  bool finished() const { return finished_; }
  bool gone() const { return connection_ == nullptr; }
  // Runs once if the client goes away before the answer ended (not when
  // the server ends it). Replaces any earlier callback.
  void OnGone(std::function<void()> callback) {
    on_gone_ = std::move(callback);
  }

 private:
  friend class HttpConnection;
  explicit HttpExchange(HttpConnection* connection, bool keep_alive)
      : connection_(connection), keep_alive_(keep_alive) {}
  // The connection is closing before the answer ended.
  void Lost();

  HttpConnection* connection_;  // nullptr once gone.
  bool keep_alive_;
  bool started_ = false;
  bool events_ = false;  // An event stream (not a body sent in pieces).
  bool finished_ = false;
  std::function<void()> on_gone_;
};

using ExchangePtr = std::shared_ptr<HttpExchange>;
// Answers `request` through `exchange`, now or later.
using HttpHandler = std::function<void(const HttpRequest& request,
                                       const ExchangePtr& exchange)>;
// Refuses a request (a response) or lets it through (nullopt).
using HttpGate = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

class HttpServer {
 public:
  HttpServer(EventLoop* loop, HttpLimits limits);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the bound port (the one picked for port 0).
  Result<uint16_t> Listen(const ListenAddress& address);
  void SetGate(HttpGate gate) { gate_ = std::move(gate); }
  // Requests for exactly `path` (the query left out) go to `handler`.
  void Route(std::string path, HttpHandler handler);
  size_t connections() const { return connections_.size(); }

  // For HttpConnection.
  EventLoop* loop() { return loop_; }
  const HttpLimits& limits() const { return limits_; }
  // The answer to a request refused on its head alone (two Host headers,
  // the gate: Host, Origin, the token), before its body is read; nullopt
  // lets it on.
  std::optional<HttpResponse> Screen(const HttpRequest& head) const;
  // A screened request, body and all, to its route.
  void Dispatch(const HttpRequest& request, const ExchangePtr& exchange);
  // Destroys `connection` once the loop is out of its callbacks.
  void Closed(HttpConnection* connection);
  void StreamStarted();

 private:
  void OnAccept();
  void KeepStreamsAlive();

  EventLoop* loop_;
  HttpLimits limits_;
  UniqueFd listener_;
  HttpGate gate_;
  std::map<std::string, HttpHandler> routes_;
  std::map<HttpConnection*, std::unique_ptr<HttpConnection>> connections_;
  uint64_t next_serial_ = 0;  // Of the next connection accepted.
  std::vector<std::unique_ptr<HttpConnection>> closed_;
  TimerId keep_alive_timer_ = 0;
  TimerId reap_timer_ = 0;
};

// A refusal with a JSON-RPC error body without id, as the MCP transport
// allows for 400, 401, 403, 404 and 405 (code -32600, or `code`).
HttpResponse ErrorResponse(int status, std::string_view message,
                           int code = -32600);

}  // namespace baton::serve

#endif  // BATON_SERVE_HTTP_SERVER_H_
