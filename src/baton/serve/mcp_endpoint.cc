#include "baton/serve/mcp_endpoint.h"

#include <fmt/format.h>

#include "baton/mcp/json_rpc.h"
#include "baton/mcp/modern.h"
#include "baton/mcp/protocol_version.h"
#include "baton/serve/http_checks.h"
#include "baton/serve/mcp_headers.h"
#include "baton/serve/mcp_session.h"
#include "baton/serve/token.h"
#include "baton/util/log.h"

namespace baton::serve {
namespace {

constexpr char kSessionHeader[] = "Mcp-Session-Id";

HttpResponse RpcErrorResponse(int status, const mcp::Json& id,
                              const mcp::RpcError& error) {
  HttpResponse response;
  response.status = status;
  response.headers.emplace_back("Content-Type", "application/json");
  response.body = mcp::SerializeLine(
      mcp::MakeErrorResponse(id, error.code, error.message, error.data));
  return response;
}

}  // namespace

McpEndpoint::McpEndpoint(EventLoop* loop, McpEndpointOptions options)
    : loop_(loop), options_(std::move(options)) {
  // Streams of the 2026-07-28 era are not resumable (its transport says
  // so): closing one cancels its request.
  modern_ =
      std::make_unique<McpSession>(loop_, options_.server, McpSessionOptions{});
}

McpEndpoint::~McpEndpoint() = default;

void McpEndpoint::Start() {
  BATON_LOG_INFO("the 2026-07-28 era runs in session {}",
                 modern_->batond_session());
  modern_->Start();
}

void McpEndpoint::ReleaseRetired() {
  modern_->Release();
  for (auto& [id, session] : legacy_)
    session->Release();
}

void McpEndpoint::Handle(const HttpRequest& request,
                         const ExchangePtr& exchange) {
  if (request.method == "POST")
    return Post(request, exchange);
  if (request.method == "GET")
    return Get(request, exchange);
  if (request.method == "DELETE")
    return Delete(request, exchange);
  exchange->Respond(
      ErrorResponse(405, fmt::format("Method not allowed: {} (/mcp takes "
                                     "POST, and GET and DELETE with an "
                                     "Mcp-Session-Id)",
                                     request.method))
          .With("Allow", "GET, POST, DELETE"));
}

void McpEndpoint::Post(const HttpRequest& request,
                       const ExchangePtr& exchange) {
  if (!request.HasJsonBody()) {
    return exchange->Respond(
        ErrorResponse(415,
                      "Unsupported Media Type: POST a JSON-RPC message with "
                      "Content-Type: application/json"));
  }
  const std::string* accept = request.Header("Accept");
  if (!Accepts(accept, "application/json")) {
    return exchange->Respond(ErrorResponse(
        406,
        "Not Acceptable: the Accept header must list application/json "
        "and text/event-stream"));
  }
  bool events_ok = Accepts(accept, "text/event-stream");
  mcp::Message message = mcp::ParseMessage(request.body);
  if (message.kind == mcp::Message::Kind::kInvalid) {
    return exchange->Respond(RpcErrorResponse(
        400, message.id, {message.error_code, message.error_message, nullptr}));
  }
  const mcp::Json* meta = mcp::Member(message.params, "_meta");
  const mcp::Json* version =
      meta ? mcp::Member(*meta, mcp::kMetaProtocolVersion) : nullptr;
  if (version || message.method == "server/discover") {
    // The 2026-07-28 era: stateless, one shared server; any Mcp-Session-Id
    // is ignored, as the transport asks.
    if (version) {
      const auto* text = version->get_ptr<const std::string*>();
      std::string body_version = text ? *text : version->dump();
      if (auto mismatch = CheckModernHeaders(request, message, body_version))
        return exchange->Respond(RpcErrorResponse(400, message.id, *mismatch));
    }
    if (message.kind != mcp::Message::Kind::kRequest) {
      modern_->Notify(std::move(message));
      return exchange->Respond({202, {}, ""});
    }
    return modern_->Request(std::move(message), fmt::format("m{}", ++serial_),
                            exchange, events_ok, true, {});
  }
  if (message.method == "initialize" &&
      message.kind == mcp::Message::Kind::kRequest) {
    std::string id;
    McpSession* session = NewSession(exchange, &id);
    if (!session)
      return;
    std::string key = message.id.dump();
    return session->Request(std::move(message), std::move(key), exchange,
                            events_ok, false, {{kSessionHeader, id}});
  }
  McpSession* session = FindSession(request, exchange);
  if (!session)
    return;
  if (const std::string* given = request.Header("MCP-Protocol-Version")) {
    bool known = false;
    for (std::string_view supported : mcp::kSupportedVersions)
      known = known || *given == supported;
    if (!known) {
      return exchange->Respond(ErrorResponse(
          400, fmt::format("Bad Request: unsupported MCP-Protocol-Version "
                           "'{}' (this session speaks one of 2025-11-25, "
                           "2025-06-18, 2025-03-26, 2024-11-05)",
                           *given)));
    }
  }
  session->last_used = ++clock_;
  if (message.kind != mcp::Message::Kind::kRequest) {
    session->Notify(std::move(message));
    return exchange->Respond({202, {}, ""});
  }
  std::string key = message.id.dump();
  session->Request(std::move(message), std::move(key), exchange, events_ok,
                   false, {});
}

void McpEndpoint::Get(const HttpRequest& request, const ExchangePtr& exchange) {
  if (!request.Header(kSessionHeader)) {
    // The 2026-07-28 era has no GET stream (subscriptions/listen is its
    // stream); a legacy client opens one within its session.
    return exchange->Respond(
        ErrorResponse(405,
                      "Method not allowed: GET opens a session's stream "
                      "and needs its Mcp-Session-Id (the 2026-07-28 era "
                      "uses subscriptions/listen)")
            .With("Allow", "POST"));
  }
  McpSession* session = FindSession(request, exchange);
  if (!session)
    return;
  if (!Accepts(request.Header("Accept"), "text/event-stream")) {
    return exchange->Respond(ErrorResponse(
        406, "Not Acceptable: GET answers with text/event-stream"));
  }
  session->last_used = ++clock_;
  if (const std::string* last = request.Header("Last-Event-ID")) {
    if (!session->Resume(*last, exchange)) {
      exchange->Respond(ErrorResponse(
          404, fmt::format("Cannot resume after event '{}': no dropped "
                           "stream of this session waits for it (answered, "
                           "expired after {} s, or never ours)",
                           *last,
                           std::chrono::duration_cast<std::chrono::seconds>(
                               McpSessionOptions{}.resume_grace)
                               .count())));
    }
    return;
  }
  if (!session->Listen(exchange)) {
    exchange->Respond(
        ErrorResponse(409, "Conflict: this session's stream is already open"));
  }
}

void McpEndpoint::Delete(const HttpRequest& request,
                         const ExchangePtr& exchange) {
  const std::string* id = request.Header(kSessionHeader);
  if (!id) {
    return exchange->Respond(
        ErrorResponse(405,
                      "Method not allowed: DELETE ends a session and "
                      "needs its Mcp-Session-Id")
            .With("Allow", "POST"));
  }
  if (!FindSession(request, exchange))
    return;
  auto it = legacy_.find(*id);
  BATON_LOG_INFO("session {} ended by its client (batond session {})", *id,
                 it->second->batond_session());
  legacy_.erase(it);
  exchange->Respond({200, {}, ""});
}

McpSession* McpEndpoint::FindSession(const HttpRequest& request,
                                     const ExchangePtr& exchange) {
  const std::string* id = request.Header(kSessionHeader);
  if (!id) {
    exchange->Respond(ErrorResponse(
        400,
        "Bad Request: Mcp-Session-Id header is required (send "
        "initialize first, or name the 2026-07-28 era in the request's "
        "_meta)"));
    return nullptr;
  }
  auto it = legacy_.find(*id);
  if (it == legacy_.end()) {
    exchange->Respond(ErrorResponse(
        404,
        "Session not found: it ended or was never made here; send "
        "initialize for a new one"));
    return nullptr;
  }
  return it->second.get();
}

McpSession* McpEndpoint::NewSession(const ExchangePtr& exchange,
                                    std::string* id) {
  if (legacy_.size() >= options_.max_sessions) {
    auto oldest = legacy_.end();
    for (auto it = legacy_.begin(); it != legacy_.end(); ++it) {
      if (!it->second->busy() &&
          (oldest == legacy_.end() ||
           it->second->last_used < oldest->second->last_used)) {
        oldest = it;
      }
    }
    if (oldest == legacy_.end()) {
      exchange->Respond(ErrorResponse(
          503, fmt::format("Too many sessions in use (at most {}); end one "
                           "with DELETE",
                           options_.max_sessions)));
      return nullptr;
    }
    BATON_LOG_INFO("session {} ends to make room (least recently used)",
                   oldest->first);
    legacy_.erase(oldest);
  }
  auto random = RandomHex(16);
  auto suffix = RandomHex(4);
  if (!random || !suffix) {
    exchange->Respond(ErrorResponse(
        500, "cannot make a session id: " +
                 (random ? suffix.error() : random.error()).message));
    return nullptr;
  }
  *id = *random;
  mcp::McpServerOptions server = options_.server;
  server.session = fmt::format("{}-{}", options_.server.session, *suffix);
  McpSessionOptions resumable;
  resumable.resumable = true;
  auto session = std::make_unique<McpSession>(loop_, server, resumable);
  session->last_used = ++clock_;
  session->Start();
  BATON_LOG_INFO("session {} starts (batond session {})", *id,
                 session->batond_session());
  McpSession* raw = session.get();
  legacy_[*id] = std::move(session);
  return raw;
}

}  // namespace baton::serve
