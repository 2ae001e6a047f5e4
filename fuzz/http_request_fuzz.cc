// Fuzzes how `baton serve` reads a request and judges it before a route
// sees it (serve/http_parse.h, serve/http_checks.h, ServeGate): the input
// is what a client sent on one connection, arriving in two reads split
// where the first byte says (a connection parses what it has, then more).
// Requests are parsed as HttpConnection::ParseBuffered parses them (Beast's
// parser under the server's limits, pipelined requests one after another),
// screened on their head by HttpServer::Screen with the real gate, and each
// whole request is run through the pure checks the routes use. A refused
// request or one that fails to parse is answered 4xx with a JSON body; one
// let through has exactly one allowed Host, an allowed Origin and the token
// (bearer for /mcp, the board's cookie otherwise); a body never exceeds the
// limit and matches its Content-Length.
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "baton/mcp/json_rpc.h"
#include "baton/mcp/modern.h"
#include "baton/serve/board_access.h"
#include "baton/serve/http_checks.h"
#include "baton/serve/http_parse.h"
#include "baton/serve/http_server.h"
#include "baton/serve/mcp_headers.h"
#include "baton/serve/serve.h"
#include "fuzz/fuzz_checks.h"

namespace {

using baton::serve::HttpRequest;
using baton::serve::HttpResponse;

// The seeds use these, so that the fuzzer starts past the gate.
constexpr uint16_t kPort = 7420;
constexpr char kToken[] = "fuzz-token-0123456789abcdef";

// Smaller than serve's, so that inputs of a few kilobytes reach the 413
// and 431 answers.
baton::serve::HttpLimits FuzzLimits() {
  baton::serve::HttpLimits limits;
  limits.max_header_bytes = 2048;
  limits.max_body_bytes = 4096;
  return limits;
}

struct Gatekeeper {
  baton::serve::HostPolicy policy{{"127.0.0.1", kPort}, kPort, {"baton.test"}};
  std::string token = kToken;
  std::string cookie_name = baton::serve::BoardCookieName(kPort);
  // No loop: Screen and the gate need none, and nothing listens.
  baton::serve::HttpServer server{nullptr, FuzzLimits()};

  Gatekeeper() {
    server.SetGate([this](const HttpRequest& request) {
      return baton::serve::ServeGate(policy, token, cookie_name, request);
    });
  }
};

Gatekeeper& Gate() {
  static Gatekeeper* gate = new Gatekeeper();
  return *gate;
}

// A refusal says why: as JSON, or, to a browser that asked for the board's
// page without its cookie, as the sign-in page (serve/board_access.h).
void CheckRefusal(const HttpResponse& refusal) {
  FUZZ_CHECK(refusal.status >= 400 && refusal.status < 500,
             "a refused request is answered 4xx");
  bool html = false;
  for (const auto& [name, value] : refusal.headers)
    html = html || (name == "Content-Type" && value.starts_with("text/html"));
  if (html) {
    FUZZ_CHECK(
        refusal.status == 401 && refusal.body.starts_with("<!doctype html>"),
        "an HTML refusal is the sign-in page");
    return;
  }
  FUZZ_CHECK(nlohmann::json::accept(refusal.body), "a refusal's body is JSON");
}

// What the gate promises of a request it lets on.
void CheckLetThrough(const HttpRequest& head) {
  const Gatekeeper& gate = Gate();
  FUZZ_CHECK(head.HeaderCount("Host") == 1, "a request let on has one Host");
  FUZZ_CHECK(gate.policy.HostAllowed(*head.Header("Host")),
             "a request let on names an allowed Host");
  FUZZ_CHECK(gate.policy.OriginAllowed(head.Header("Origin")),
             "a request let on has no Origin or an allowed one");
  if (head.path() == "/mcp") {
    FUZZ_CHECK(baton::serve::BearerTokenMatches(head.Header("Authorization"),
                                                gate.token),
               "an /mcp request let on has the bearer token");
  } else {
    FUZZ_CHECK(
        !baton::serve::CheckBoardAccess(head, gate.token, gate.cookie_name),
        "a board request let on passes the board's checks");
  }
}

// The checks the routes make on a whole request: none may throw or crash,
// and each refusal is a 4xx with a reason.
void CheckWholeRequest(const HttpRequest& request) {
  const Gatekeeper& gate = Gate();
  FUZZ_CHECK(request.body.size() <= FuzzLimits().max_body_bytes,
             "a body is within the limit");
  if (const std::string* length = request.Header("Content-Length");
      length && !request.Header("Transfer-Encoding")) {
    uint64_t declared = 0;
    auto [end, error] = std::from_chars(
        length->data(), length->data() + length->size(), declared);
    if (error == std::errc() && end == length->data() + length->size()) {
      FUZZ_CHECK(request.body.size() == declared,
                 "a body is as long as its Content-Length");
    }
  }
  if (auto refused = baton::serve::CheckBoardAccess(request, gate.token,
                                                    gate.cookie_name)) {
    FUZZ_CHECK(refused->status >= 400 && refused->status < 500,
               "the board refuses with a 4xx");
    FUZZ_CHECK(!refused->message.empty(), "the board says why it refuses");
  }
  if (baton::serve::BoardLoginCode(request)) {
    FUZZ_CHECK(request.method == "GET" && request.path() == "/",
               "a login is a GET of the page");
    FUZZ_CHECK(
        !baton::serve::CheckBoardAccess(request, gate.token, gate.cookie_name),
        "a login reaches the page, which claims its code");
  }
  (void)baton::serve::CookieValue(request.Header("Cookie"), gate.cookie_name);
  (void)baton::serve::QueryValue(request.target, "task");
  (void)baton::serve::Accepts(request.Header("Accept"), "application/json");
  (void)baton::serve::Accepts(request.Header("Accept"), "text/event-stream");
  for (const auto& [name, value] : request.headers)
    (void)baton::serve::DecodeHeaderValue(value);
  if (!request.HasJsonBody())
    return;
  // As the /mcp endpoint reads a modern request (mcp_endpoint.cc).
  baton::mcp::Message message = baton::mcp::ParseMessage(request.body);
  if (message.kind == baton::mcp::Message::Kind::kInvalid)
    return;
  const baton::mcp::Json* meta = baton::mcp::Member(message.params, "_meta");
  const baton::mcp::Json* version =
      meta ? baton::mcp::Member(*meta, baton::mcp::kMetaProtocolVersion)
           : nullptr;
  if (!version)
    return;
  const auto* text = version->get_ptr<const std::string*>();
  std::string body_version = text ? *text : version->dump();
  if (auto mismatch =
          baton::serve::CheckModernHeaders(request, message, body_version)) {
    FUZZ_CHECK(mismatch->code == baton::serve::kHeaderMismatch,
               "a header that disagrees with the body is HeaderMismatch");
    FUZZ_CHECK(!mismatch->message.empty(), "a HeaderMismatch says which");
  }
}

// One connection's reading of requests, as HttpConnection::ParseBuffered
// does it, with the answers left out: the connection closes after a
// refusal before the body, a parse error, or a request without keep-alive.
class ConnectionReader {
 public:
  void Arrive(std::string_view bytes) {
    if (closed_)
      return;
    buffered_.append(bytes);
    ParseBuffered();
  }

 private:
  void ParseBuffered() {
    namespace http = boost::beast::http;
    while (!closed_ && !buffered_.empty()) {
      if (!parser_) {
        parser_.emplace();
        baton::serve::LimitRequestParser(*parser_, FuzzLimits());
        screened_ = false;
        refused_ = false;
      }
      boost::system::error_code error;
      size_t used = parser_->put(
          boost::asio::buffer(buffered_.data(), buffered_.size()), error);
      buffered_.erase(0, used);
      if ((!error || error == http::error::need_more) &&
          parser_->is_header_done() && !screened_) {
        screened_ = true;
        HttpRequest head = baton::serve::HeadOf(parser_->get());
        auto refusal = Gate().server.Screen(head);
        if (refusal)
          CheckRefusal(*refusal);
        else
          CheckLetThrough(head);
        refused_ = refusal.has_value();
        if (refused_ && !parser_->is_done()) {
          closed_ = true;
          return;
        }
      }
      if (error == http::error::need_more)
        return;  // Waits for the next read.
      if (error) {
        int status = baton::serve::StatusOfParseError(error);
        FUZZ_CHECK(status >= 400 && status < 500,
                   "a request that fails to parse is answered 4xx");
        closed_ = true;
        return;
      }
      if (!parser_->is_done())
        return;
      HttpRequest request = baton::serve::HeadOf(parser_->get());
      request.body = std::move(parser_->get().body());
      bool keep_alive = parser_->keep_alive();
      parser_.reset();
      CheckWholeRequest(request);
      if (!keep_alive)
        closed_ = true;
    }
  }

  std::string buffered_;
  std::optional<baton::serve::RequestParser> parser_;
  bool screened_ = false;
  bool refused_ = false;
  bool closed_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t split = input.empty() ? 0 : data[0] % (input.size() + 1);
  ConnectionReader reader;
  reader.Arrive(input.substr(0, split));
  reader.Arrive(input.substr(split));
  return 0;
}
