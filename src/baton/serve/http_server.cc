#include "baton/serve/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "baton/serve/http_parse.h"
#include "baton/util/log.h"

namespace baton::serve {

namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

// Everything Beast's serializer makes of `message` up to the end of its
// header (`header_only`) or of the whole message.
template <class Message>
std::string Serialize(Message& message, bool header_only) {
  http::serializer<Message::is_request::value, typename Message::body_type,
                   typename Message::fields_type>
      serializer(message);
  serializer.split(header_only);
  std::string out;
  error_code error;
  auto done = [&] {
    return header_only ? serializer.is_header_done() : serializer.is_done();
  };
  while (!error && !done()) {
    serializer.next(error, [&](error_code&, const auto& buffers) {
      size_t size = 0;
      for (auto buffer : boost::beast::buffers_range_ref(buffers)) {
        out.append(static_cast<const char*>(buffer.data()), buffer.size());
        size += buffer.size();
      }
      serializer.consume(size);
    });
  }
  return out;
}

// Every answer is read as the type it says it is: a browser must not
// guess HTML or a script from a JSON reply or a task's output.
template <class Message>
void NoSniffing(Message& message) {
  message.set("X-Content-Type-Options", "nosniff");
}

std::string ResponseBytes(const HttpResponse& response, bool keep_alive) {
  http::response<http::string_body> message;
  message.version(11);
  message.result(static_cast<unsigned>(response.status));
  for (const auto& [name, value] : response.headers)
    message.set(name, value);
  NoSniffing(message);
  message.body() = response.body;
  message.keep_alive(keep_alive);
  message.prepare_payload();
  return Serialize(message, false);
}

std::string StreamHeadBytes(const HeaderList& headers, bool events) {
  http::response<http::empty_body> message;
  message.version(11);
  message.result(http::status::ok);
  if (events) {
    message.set(http::field::content_type, "text/event-stream");
    message.set(http::field::cache_control, "no-cache");
    // Proxies must not hold events back (the 2026-07-28 transport asks it).
    message.set("X-Accel-Buffering", "no");
  }
  for (const auto& [name, value] : headers)
    message.set(name, value);
  NoSniffing(message);
  message.keep_alive(true);
  message.chunked(true);
  return Serialize(message, true);
}

std::string Chunk(std::string_view data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

}  // namespace

HttpResponse ErrorResponse(int status, std::string_view message, int code) {
  nlohmann::json body = {
      {"jsonrpc", "2.0"},
      {"id", nullptr},
      {"error", {{"code", code}, {"message", std::string(message)}}}};
  HttpResponse response;
  response.status = status;
  response.headers.emplace_back("Content-Type", "application/json");
  response.body =
      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

// ---- HttpConnection ---------------------------------------------------------

class HttpConnection {
 public:
  HttpConnection(HttpServer* server, UniqueFd fd, uint64_t serial)
      : server_(server), fd_(std::move(fd)), serial_(serial) {}
  ~HttpConnection() { DisarmTimer(); }

  // True once the gate let one of its requests through (it has the token).
  bool trusted() const { return trusted_; }
  // Accepted after every connection of a lower serial.
  uint64_t serial() const { return serial_; }

  bool Start() {
    auto added =
        server_->loop()->AddFd(fd_.get(), EPOLLIN | EPOLLRDHUP,
                               [this](uint32_t events) { OnEvents(events); });
    if (!added)
      return false;
    ArmTimer();
    return true;
  }

  // For HttpExchange.
  void Respond(const HttpResponse& response, bool keep_alive) {
    Write(ResponseBytes(response, keep_alive));
    AnswerDone(keep_alive);
  }
  void StartStream(const HeaderList& headers, bool events) {
    Write(StreamHeadBytes(headers, events));
    if (events)
      server_->StreamStarted();
  }
  // `callback` runs from the loop once `out_` is empty.
  void OnDrained(std::function<void()> callback) {
    on_drained_ = std::move(callback);
    Flush();
  }
  void StreamChunk(std::string_view data) { Write(Chunk(data)); }
  void EndStream(bool keep_alive) {
    Write("0\r\n\r\n");
    AnswerDone(keep_alive);
  }
  // An SSE comment on an open event stream.
  bool KeepAlive() {
    if (!exchange_ || !exchange_->started_ || !exchange_->events_ ||
        exchange_->finished_) {
      return false;
    }
    StreamChunk(":\n\n");
    return true;
  }
  // Closes now; an exchange not answered yet is lost (its client is gone).
  void Close();
  // Sends `data` as far as the socket takes it at once, then closes.
  void SendNowAndClose(std::string_view data) {
    if (!closed_)
      (void)::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    Close();
  }

 private:
  void OnEvents(uint32_t events);
  void ReadSome();
  void ParseBuffered();
  void OnRequest();
  void Write(std::string data);
  void Flush();
  void AnswerDone(bool keep_alive);
  // Closes the connection after `after` (0: the request timeout).
  void ArmTimer(std::chrono::milliseconds after = {});
  void DisarmTimer();

  HttpServer* server_;
  UniqueFd fd_;
  uint64_t serial_;
  bool trusted_ = false;
  std::string in_;
  std::string out_;
  std::optional<RequestParser> parser_;
  bool continue_sent_ = false;
  ExchangePtr exchange_;  // The request being answered, or null.
  // The request being parsed went through HttpServer::Screen, and the
  // answer that refused it, if one did.
  bool screened_ = false;
  std::optional<HttpResponse> refused_;
  bool parsing_ = false;
  bool closing_ = false;   // Close once `out_` is written.
  bool draining_ = false;  // Half-closed: waits for the client's end.
  size_t drained_ = 0;
  bool closed_ = false;
  bool want_write_ = false;
  TimerId timer_ = 0;
  std::function<void()> on_drained_;
};

void HttpConnection::OnEvents(uint32_t events) {
  if (events & EPOLLOUT)
    Flush();
  if (!closed_ && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
    ReadSome();
}

void HttpConnection::ReadSome() {
  const HttpLimits& limits = server_->limits();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (n <= 0)
      return Close();  // The client went away (or reset).
    if (closing_) {
      // The last answer is given: what the client still sends is dropped.
      drained_ += static_cast<size_t>(n);
      if (drained_ > limits.max_body_bytes * 4)
        return Close();
      continue;
    }
    in_.append(buf, static_cast<size_t>(n));
    ParseBuffered();
    // Pipelined bytes wait for the answer being given, within bounds.
    if (in_.size() > limits.max_header_bytes + limits.max_body_bytes + 4096)
      return Close();
  }
}

void HttpConnection::ParseBuffered() {
  if (parsing_)
    return;
  parsing_ = true;
  const HttpLimits& limits = server_->limits();
  while (!closed_ && !closing_ && !exchange_ && !in_.empty()) {
    if (!parser_) {
      parser_.emplace();
      LimitRequestParser(*parser_, limits);
      continue_sent_ = false;
      screened_ = false;
    }
    error_code error;
    size_t used =
        parser_->put(boost::asio::buffer(in_.data(), in_.size()), error);
    in_.erase(0, used);
    // Judged on its head, before its body is waited for or kept: a client
    // without the token cannot make serve hold megabytes for it.
    if ((!error || error == http::error::need_more) &&
        parser_->is_header_done() && !screened_) {
      screened_ = true;
      refused_ = server_->Screen(HeadOf(parser_->get()));
      trusted_ = trusted_ || !refused_;
      if (refused_ && !parser_->is_done()) {
        // Its body is still to come: not read, answered, and closed.
        Write(ResponseBytes(*refused_, false));
        refused_.reset();
        closing_ = true;
        in_.clear();
        Flush();
        break;
      }
    }
    if (error == http::error::need_more) {
      if (parser_->is_header_done() && !continue_sent_) {
        continue_sent_ = true;
        auto expect = parser_->get()[http::field::expect];
        if (boost::beast::iequals(expect, "100-continue")) {
          http::response<http::empty_body> go(http::status::continue_, 11);
          Write(Serialize(go, true));
        }
      }
      break;
    }
    if (error) {
      int status = StatusOfParseError(error);
      BATON_LOG_WARN("bad HTTP request ({}): {}", status, error.message());
      std::string why =
          status == 413
              ? fmt::format("Request body too large (at most {} bytes)",
                            limits.max_body_bytes)
          : status == 431
              ? fmt::format("Request header too large (at most {} bytes)",
                            limits.max_header_bytes)
              : "Malformed HTTP request: " + error.message();
      Write(ResponseBytes(ErrorResponse(status, why), false));
      closing_ = true;
      in_.clear();
      Flush();
      break;
    }
    if (parser_->is_done())
      OnRequest();
  }
  parsing_ = false;
}

void HttpConnection::OnRequest() {
  auto& message = parser_->get();
  HttpRequest request = HeadOf(message);
  request.body = std::move(message.body());
  bool keep_alive = parser_->keep_alive();
  parser_.reset();
  DisarmTimer();
  exchange_ = ExchangePtr(new HttpExchange(this, keep_alive));
  // Held here: the handler may drop its own reference at once.
  ExchangePtr exchange = exchange_;
  if (refused_) {
    // Refused on its head, and whole already: answered, the connection
    // kept.
    HttpResponse refused = std::move(*refused_);
    refused_.reset();
    return exchange->Respond(std::move(refused));
  }
  server_->Dispatch(request, exchange);
}

void HttpConnection::AnswerDone(bool keep_alive) {
  exchange_.reset();
  if (closed_)
    return;
  if (!keep_alive) {
    closing_ = true;
    Flush();
    return;
  }
  ArmTimer();
  ParseBuffered();
}

void HttpConnection::Write(std::string data) {
  if (closed_)
    return;
  out_ += data;
  if (out_.size() > server_->limits().max_queued_bytes) {
    BATON_LOG_WARN("dropping an HTTP client {} bytes behind", out_.size());
    return Close();
  }
  Flush();
}

void HttpConnection::Flush() {
  while (!closed_ && !out_.empty()) {
    ssize_t n = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (n < 0)
      return Close();
    out_.erase(0, static_cast<size_t>(n));
  }
  if (closed_)
    return;
  if (out_.empty() && on_drained_) {
    // From the loop: the callback may send again, which flushes again.
    server_->loop()->Schedule(std::chrono::steady_clock::now(),
                              std::exchange(on_drained_, nullptr));
  }
  if (out_.empty() && closing_ && !draining_) {
    // A lingering close: closing with the client's bytes unread (a body
    // refused as too large) would reset the connection and could destroy
    // the answer before the client reads it. Half-close, drop what still
    // comes, and close at the client's end or after a while.
    draining_ = true;
    ::shutdown(fd_.get(), SHUT_WR);
    ArmTimer(std::chrono::milliseconds(2000));
    return;
  }
  bool want = !out_.empty();
  if (want != want_write_) {
    want_write_ = want;
    (void)server_->loop()->ModifyFd(
        fd_.get(), EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u));
  }
}

void HttpConnection::Close() {
  if (closed_)
    return;
  closed_ = true;
  on_drained_ = nullptr;
  DisarmTimer();
  server_->loop()->RemoveFd(fd_.get());
  fd_.reset();
  if (ExchangePtr exchange = std::exchange(exchange_, nullptr))
    exchange->Lost();
  server_->Closed(this);
}

void HttpConnection::ArmTimer(std::chrono::milliseconds after) {
  DisarmTimer();
  if (after.count() == 0) {
    after = trusted_ ? server_->limits().request_timeout
                     : server_->limits().untrusted_timeout;
  }
  timer_ = server_->loop()->Schedule(std::chrono::steady_clock::now() + after,
                                     [this] {
                                       timer_ = 0;
                                       Close();
                                     });
}

void HttpConnection::DisarmTimer() {
  if (timer_) {
    server_->loop()->Cancel(timer_);
    timer_ = 0;
  }
}

// ---- HttpExchange -----------------------------------------------------------

void HttpExchange::Respond(HttpResponse response) {
  if (!connection_ || started_ || finished_)
    return;
  finished_ = true;
  on_gone_ = nullptr;
  HttpConnection* connection = std::exchange(connection_, nullptr);
  connection->Respond(response, keep_alive_);
}

void HttpExchange::StartEvents(HeaderList headers) {
  if (!connection_ || started_ || finished_)
    return;
  started_ = true;
  events_ = true;
  connection_->StartStream(headers, true);
}

void HttpExchange::StartBody(HeaderList headers) {
  if (!connection_ || started_ || finished_)
    return;
  started_ = true;
  connection_->StartStream(headers, false);
}

void HttpExchange::Send(std::string_view data) {
  if (!connection_ || !started_ || finished_ || data.empty())
    return;
  connection_->StreamChunk(data);
}

void HttpExchange::OnDrained(std::function<void()> callback) {
  if (!connection_ || !started_ || finished_)
    return;
  connection_->OnDrained(std::move(callback));
}

void HttpExchange::SendEvent(std::string_view data, std::string_view id) {
  if (!connection_ || !started_ || finished_)
    return;
  if (id.empty()) {
    connection_->StreamChunk(fmt::format("event: message\ndata: {}\n\n", data));
  } else {
    connection_->StreamChunk(
        fmt::format("id: {}\nevent: message\ndata: {}\n\n", id, data));
  }
}

void HttpExchange::EndEvents() {
  if (!connection_ || !started_ || finished_)
    return;
  finished_ = true;
  on_gone_ = nullptr;
  HttpConnection* connection = std::exchange(connection_, nullptr);
  connection->EndStream(keep_alive_);
}

void HttpExchange::Lost() {
  connection_ = nullptr;
  if (finished_)
    return;
  finished_ = true;
  if (auto callback = std::exchange(on_gone_, nullptr))
    callback();
}

// ---- HttpServer -------------------------------------------------------------

HttpServer::HttpServer(EventLoop* loop, HttpLimits limits)
    : loop_(loop), limits_(limits) {}

HttpServer::~HttpServer() {
  if (keep_alive_timer_)
    loop_->Cancel(keep_alive_timer_);
  if (reap_timer_)
    loop_->Cancel(reap_timer_);
  if (listener_)
    loop_->RemoveFd(listener_.get());
  std::vector<HttpConnection*> open;
  for (auto& [raw, connection] : connections_)
    open.push_back(raw);
  for (HttpConnection* connection : open)
    connection->Close();
  closed_.clear();
}

Result<uint16_t> HttpServer::Listen(const ListenAddress& address) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = address.host.find(':') == std::string::npos ? AF_INET : AF_INET6;
  if (family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(address.port);
    if (::inet_pton(AF_INET, address.host.c_str(), &v4->sin_addr) != 1)
      return MakeError(ErrorCode::kInvalidArgument,
                       "not an IPv4 address: " + address.host);
    length = sizeof(sockaddr_in);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(address.port);
    if (::inet_pton(AF_INET6, address.host.c_str(), &v6->sin6_addr) != 1)
      return MakeError(ErrorCode::kInvalidArgument,
                       "not an IPv6 address: " + address.host);
    length = sizeof(sockaddr_in6);
  }
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd)
    return std::unexpected(ErrnoError("socket", errno));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  std::string where = Authority(address.host, address.port);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0)
    return std::unexpected(ErrnoError("bind " + where, errno));
  if (::listen(fd.get(), 128) != 0)
    return std::unexpected(ErrnoError("listen " + where, errno));
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&storage), &length) !=
      0) {
    return std::unexpected(ErrnoError("getsockname", errno));
  }
  uint16_t port =
      family == AF_INET
          ? ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port)
          : ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port);
  listener_ = std::move(fd);
  if (auto added = loop_->AddFd(listener_.get(), EPOLLIN,
                                [this](uint32_t) { OnAccept(); });
      !added) {
    return std::unexpected(added.error());
  }
  return port;
}

void HttpServer::Route(std::string path, HttpHandler handler) {
  routes_[std::move(path)] = std::move(handler);
}

void HttpServer::OnAccept() {
  for (;;) {
    UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        BATON_LOG_WARN("accept: {}", std::strerror(errno));
      return;
    }
    std::string busy = ResponseBytes(
        ErrorResponse(503, fmt::format("Too many connections (at most {})",
                                       limits_.max_connections)),
        false);
    if (connections_.size() >= limits_.max_connections) {
      // Full: the oldest connection without the token makes room, so that
      // connections that never sent it cannot lock a client with it out.
      HttpConnection* oldest = nullptr;
      for (const auto& [raw, connection] : connections_) {
        if (!raw->trusted() && (!oldest || raw->serial() < oldest->serial()))
          oldest = raw;
      }
      if (oldest) {
        oldest->SendNowAndClose(busy);
      } else {
        // Best effort: a full server says so and closes.
        (void)::send(fd.get(), busy.data(), busy.size(), MSG_NOSIGNAL);
        continue;
      }
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto connection =
        std::make_unique<HttpConnection>(this, std::move(fd), next_serial_++);
    HttpConnection* raw = connection.get();
    if (!connection->Start())
      continue;
    connections_[raw] = std::move(connection);
  }
}

std::optional<HttpResponse> HttpServer::Screen(const HttpRequest& head) const {
  // RFC 9112, 3.2: a request with more than one Host is answered 400, not
  // judged by whichever of them a check happens to read.
  if (head.HeaderCount("Host") > 1)
    return ErrorResponse(400,
                         "Bad Request: more than one Host header; send one");
  if (gate_)
    return gate_(head);
  return std::nullopt;
}

void HttpServer::Dispatch(const HttpRequest& request,
                          const ExchangePtr& exchange) {
  auto route = routes_.find(std::string(request.path()));
  if (route == routes_.end()) {
    return exchange->Respond(ErrorResponse(
        404,
        fmt::format("Not found: {} (MCP is served at /mcp)", request.path())));
  }
  route->second(request, exchange);
}

void HttpServer::Closed(HttpConnection* connection) {
  auto it = connections_.find(connection);
  if (it == connections_.end())
    return;
  closed_.push_back(std::move(it->second));
  connections_.erase(it);
  // Destroyed from the loop's next turn, out of the connection's callbacks
  // (a timer, not a before-sleep hook: those cannot be removed).
  if (!reap_timer_) {
    reap_timer_ = loop_->Schedule(std::chrono::steady_clock::now(), [this] {
      reap_timer_ = 0;
      closed_.clear();
    });
  }
}

void HttpServer::StreamStarted() {
  if (keep_alive_timer_)
    return;
  keep_alive_timer_ = loop_->Schedule(
      std::chrono::steady_clock::now() + limits_.keep_alive_interval,
      [this] { KeepStreamsAlive(); });
}

void HttpServer::KeepStreamsAlive() {
  keep_alive_timer_ = 0;
  bool any = false;
  std::vector<HttpConnection*> open;
  for (auto& [raw, connection] : connections_)
    open.push_back(raw);
  for (HttpConnection* connection : open)
    any = connection->KeepAlive() || any;
  // Quiet when no stream is open: an idle server never wakes.
  if (any)
    StreamStarted();
}

}  // namespace baton::serve
