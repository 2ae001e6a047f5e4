#include "baton/serve/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "baton/loop/event_loop.h"
#include "baton/util/unique_fd.h"

namespace baton::serve {
namespace {

// A server on a free loopback port and raw clients of it, all driven from
// the test's thread: each wait turns the loop until the client has what it
// expects (or two seconds passed).
class HttpServerTest : public ::testing::Test {
 protected:
  // A gate that lets only requests with an Authorization header on.
  void RequireAuthorization() {
    server_->SetGate(
        [](const HttpRequest& request) -> std::optional<HttpResponse> {
          if (!request.Header("Authorization"))
            return ErrorResponse(401, "Unauthorized");
          return std::nullopt;
        });
  }
  void SetUp() override {
    limits_.max_body_bytes = 1024;
    limits_.max_header_bytes = 1024;
    limits_.max_connections = 3;
    server_ = std::make_unique<HttpServer>(&loop_, limits_);
    auto port = server_->Listen({"127.0.0.1", 0});
    ASSERT_TRUE(port) << port.error().message;
    port_ = *port;
    server_->Route("/echo",
                   [](const HttpRequest& request, const ExchangePtr& exchange) {
                     HttpResponse response;
                     response.body = request.method + " " + request.body;
                     exchange->Respond(response);
                   });
    server_->Route("/later",
                   [this](const HttpRequest&, const ExchangePtr& exchange) {
                     held_ = exchange;
                     exchange->OnGone([this] { gone_ = true; });
                   });
  }

  UniqueFd Connect() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address),
                        sizeof address),
              0);
    return fd;
  }

  void Send(const UniqueFd& fd, std::string_view data) {
    ASSERT_EQ(::send(fd.get(), data.data(), data.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(data.size()));
  }

  // Reads until `want` has arrived (or the peer closed, or 2 s).
  std::string ReadUntil(const UniqueFd& fd, std::string_view want,
                        bool* closed = nullptr) {
    std::string got;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline &&
           got.find(want) == std::string::npos) {
      (void)loop_.RunOnce(std::chrono::milliseconds(10));
      char buf[4096];
      ssize_t n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0)
        got.append(buf, static_cast<size_t>(n));
      if (n == 0) {
        if (closed)
          *closed = true;
        break;
      }
    }
    return got;
  }

  void Turn(int times = 20) {
    for (int i = 0; i < times; ++i)
      (void)loop_.RunOnce(std::chrono::milliseconds(5));
  }

  EventLoop loop_;
  HttpLimits limits_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  ExchangePtr held_;
  bool gone_ = false;
};

TEST_F(HttpServerTest, AnswersAndKeepsTheConnectionAlive) {
  UniqueFd client = Connect();
  Send(client,
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  std::string first = ReadUntil(client, "POST hello");
  EXPECT_NE(first.find("HTTP/1.1 200 OK"), std::string::npos) << first;
  EXPECT_NE(first.find("Content-Length: 10"), std::string::npos) << first;
  // Two pipelined requests on the same connection: both, in order.
  Send(client,
       "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n"
       "POST /echo?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  std::string next = ReadUntil(client, "POST abc");
  EXPECT_LT(next.find("GET "), next.find("POST abc")) << next;
}

TEST_F(HttpServerTest, UnknownPathIs404WithAJsonRpcBody) {
  UniqueFd client = Connect();
  Send(client, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string reply = ReadUntil(client, "}");
  EXPECT_NE(reply.find("HTTP/1.1 404"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\"jsonrpc\":\"2.0\""), std::string::npos) << reply;
  EXPECT_NE(reply.find("Not found: /nope"), std::string::npos) << reply;
}

// Issue 35, finding 9: two Host headers are refused whatever they say, and
// every answer tells the browser not to sniff its type.
TEST_F(HttpServerTest, TwoHostHeadersAre400AndEveryAnswerSaysNoSniff) {
  UniqueFd client = Connect();
  Send(client, "GET /echo HTTP/1.1\r\nHost: x\r\nHost: evil.example\r\n\r\n");
  std::string reply = ReadUntil(client, "}");
  EXPECT_NE(reply.find("HTTP/1.1 400"), std::string::npos) << reply;
  EXPECT_NE(reply.find("more than one Host header"), std::string::npos)
      << reply;
  Send(client, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  reply = ReadUntil(client, "}");
  EXPECT_NE(reply.find("X-Content-Type-Options: nosniff"), std::string::npos)
      << reply;
  Send(client, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  reply = ReadUntil(client, "GET ");
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply;
  EXPECT_NE(reply.find("X-Content-Type-Options: nosniff"), std::string::npos)
      << reply;
}

// Issue 35, finding 6: a request the gate refuses is answered on its head,
// before its body is read or kept, and the connection closed.
TEST_F(HttpServerTest, TheGateRefusesBeforeTheBodyIsRead) {
  RequireAuthorization();
  UniqueFd client = Connect();
  // A body announced and never sent: the answer does not wait for it.
  Send(client,
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
  bool closed = false;
  std::string reply = ReadUntil(client, "\n\n-", &closed);
  EXPECT_NE(reply.find("HTTP/1.1 401"), std::string::npos) << reply;
  EXPECT_TRUE(closed);
  // With the token, the same request waits for its body and is served.
  UniqueFd allowed = Connect();
  Send(allowed,
       "POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: y\r\n"
       "Content-Length: 3\r\n\r\n");
  Send(allowed, "abc");
  EXPECT_NE(ReadUntil(allowed, "POST abc").find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, TheGateAnswersFirst) {
  RequireAuthorization();
  UniqueFd client = Connect();
  Send(client, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadUntil(client, "}").find("HTTP/1.1 401"), std::string::npos);
  Send(client, "GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: y\r\n\r\n");
  EXPECT_NE(ReadUntil(client, "GET ").find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, BodyAndHeaderLimitsAnswer413And431ThenClose) {
  UniqueFd big_body = Connect();
  Send(big_body,
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
  bool closed = false;
  std::string reply = ReadUntil(big_body, "\n\n-", &closed);
  EXPECT_NE(reply.find("HTTP/1.1 413"), std::string::npos) << reply;
  EXPECT_NE(reply.find("at most 1024 bytes"), std::string::npos) << reply;
  EXPECT_TRUE(closed);

  UniqueFd big_header = Connect();
  Send(big_header, "GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " +
                       std::string(2000, 'a') + "\r\n\r\n");
  closed = false;
  reply = ReadUntil(big_header, "\n\n-", &closed);
  EXPECT_NE(reply.find("HTTP/1.1 431"), std::string::npos) << reply;
  EXPECT_TRUE(closed);

  UniqueFd garbage = Connect();
  Send(garbage, "NOT HTTP AT ALL\r\n\r\n");
  closed = false;
  reply = ReadUntil(garbage, "\n\n-", &closed);
  EXPECT_NE(reply.find("HTTP/1.1 400"), std::string::npos) << reply;
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, AnEventStreamIsChunkedAndEnds) {
  UniqueFd client = Connect();
  Send(client, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  Turn();
  ASSERT_TRUE(held_);
  held_->StartEvents({{"Mcp-Session-Id", "s1"}});
  held_->SendEvent(R"({"a":1})");
  std::string head = ReadUntil(client, "{\"a\":1}");
  EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos);
  EXPECT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(head.find("Mcp-Session-Id: s1"), std::string::npos);
  EXPECT_NE(head.find("event: message\ndata: {\"a\":1}\n\n"),
            std::string::npos);
  held_->EndEvents();
  EXPECT_NE(ReadUntil(client, "0\r\n\r\n").find("0\r\n\r\n"),
            std::string::npos);
  EXPECT_FALSE(gone_);
  // The connection serves the next request.
  Send(client, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadUntil(client, "GET ").find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, ABodyInPiecesIsSentAsEachPieceIsWritten) {
  // Keep-alive comments often: none may go into a body.
  limits_.keep_alive_interval = std::chrono::milliseconds(5);
  SetUp();
  UniqueFd events = Connect();
  Send(events, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  Turn();
  ASSERT_TRUE(held_);
  ExchangePtr stream = std::exchange(held_, nullptr);
  stream->StartEvents({});
  UniqueFd client = Connect();
  Send(client, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  Turn();
  ASSERT_TRUE(held_);
  held_->StartBody({{"Content-Type", "text/plain"}});
  held_->Send("first piece,");
  auto drained = std::make_shared<int>(0);
  held_->OnDrained([drained] { ++*drained; });
  // From the loop once written, never inside the call.
  EXPECT_EQ(*drained, 0);
  std::string reply = ReadUntil(client, "first piece,");
  Turn();  // Several keep-alive intervals.
  EXPECT_EQ(*drained, 1);
  held_->Send("second piece");
  held_->EndEvents();
  reply += ReadUntil(client, "0\r\n\r\n");
  EXPECT_NE(reply.find("Content-Type: text/plain"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("event-stream"), std::string::npos) << reply;
  EXPECT_NE(reply.find("first piece,\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("second piece\r\n0\r\n\r\n"), std::string::npos)
      << reply;
  EXPECT_EQ(reply.find(":\n\n"), std::string::npos) << reply;
  // The event stream did get them.
  EXPECT_NE(ReadUntil(events, ":\n\n").find(":\n\n"), std::string::npos);
}

TEST_F(HttpServerTest, AClientThatGoesAwayIsToldOnce) {
  {
    UniqueFd client = Connect();
    Send(client, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
    Turn();
    ASSERT_TRUE(held_);
  }
  Turn();
  EXPECT_TRUE(gone_);
  EXPECT_TRUE(held_->gone());
  // Answering the departed does nothing.
  held_->Respond(HttpResponse{});
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(HttpServerTest, ConnectionsAreBounded) {
  RequireAuthorization();
  UniqueFd a = Connect(), b = Connect(), c = Connect();
  for (const UniqueFd* fd : {&a, &b, &c}) {
    Send(*fd, "GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: t\r\n\r\n");
    ReadUntil(*fd, "GET ");
  }
  EXPECT_EQ(server_->connections(), 3u);
  UniqueFd d = Connect();
  bool closed = false;
  std::string reply = ReadUntil(d, "\n\n-", &closed);
  EXPECT_NE(reply.find("HTTP/1.1 503"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Too many connections (at most 3)"), std::string::npos);
  EXPECT_EQ(server_->connections(), 3u);
}

// Issue 35, finding 6: connections without the token held every slot, and
// a client with it got 503. The oldest of them now makes room.
TEST_F(HttpServerTest, ConnectionsWithoutTheTokenMakeRoomForOneWithIt) {
  RequireAuthorization();
  UniqueFd idle[3] = {Connect(), Connect(), Connect()};
  Turn();
  EXPECT_EQ(server_->connections(), 3u);
  UniqueFd client = Connect();
  Turn();
  Send(client, "GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: t\r\n\r\n");
  std::string reply = ReadUntil(client, "GET ");
  EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply;
  // The oldest idle one was told and closed; the others stay.
  bool closed = false;
  EXPECT_NE(ReadUntil(idle[0], "\n\n-", &closed).find("503"),
            std::string::npos);
  EXPECT_TRUE(closed);
  EXPECT_EQ(server_->connections(), 3u);
}

TEST_F(HttpServerTest, AConnectionWithoutTheTokenHasLessTimeThanOneWithIt) {
  server_.reset();
  limits_.request_timeout = std::chrono::milliseconds(2000);
  limits_.untrusted_timeout = std::chrono::milliseconds(50);
  server_ = std::make_unique<HttpServer>(&loop_, limits_);
  auto port = server_->Listen({"127.0.0.1", 0});
  ASSERT_TRUE(port);
  port_ = *port;
  server_->Route("/echo",
                 [](const HttpRequest& request, const ExchangePtr& exchange) {
                   exchange->Respond(HttpResponse{.body = request.method});
                 });
  RequireAuthorization();
  UniqueFd idle = Connect();
  UniqueFd trusted = Connect();
  Send(trusted, "GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: t\r\n\r\n");
  ReadUntil(trusted, "GET");
  bool closed = false;
  ReadUntil(idle, "never", &closed);
  EXPECT_TRUE(closed) << "the connection without the token is still open";
  Turn();
  EXPECT_EQ(server_->connections(), 1u) << "the one with it was closed too";
}

TEST_F(HttpServerTest, AnIdleConnectionIsClosedAfterTheRequestTimeout) {
  server_.reset();
  limits_.request_timeout = std::chrono::milliseconds(50);
  limits_.untrusted_timeout = std::chrono::milliseconds(50);
  server_ = std::make_unique<HttpServer>(&loop_, limits_);
  auto port = server_->Listen({"127.0.0.1", 0});
  ASSERT_TRUE(port);
  port_ = *port;
  UniqueFd client = Connect();
  Send(client, "GET /ec");  // Never finished.
  bool closed = false;
  ReadUntil(client, "never", &closed);
  EXPECT_TRUE(closed);
}

}  // namespace
}  // namespace baton::serve
