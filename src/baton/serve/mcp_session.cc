#include "baton/serve/mcp_session.h"

#include <fmt/format.h>

#include <charconv>

#include "baton/mcp/modern.h"
#include "baton/serve/http_checks.h"
#include "baton/serve/mcp_headers.h"
#include "baton/util/log.h"

namespace baton::serve {
namespace {

std::string Compact(const mcp::Json& message) {
  std::string line = mcp::SerializeLine(message);
  line.pop_back();  // The newline of stdio's framing.
  return line;
}

// The HTTP status of a whole answer. The 2026-07-28 transport gives some
// JSON-RPC errors their own status (a client tells a modern server from a
// legacy one by them); the legacy era answers every JSON-RPC message 200.
int StatusOf(const mcp::Json& message, bool modern) {
  const mcp::Json* error = mcp::Member(message, "error");
  const mcp::Json* code = error ? mcp::Member(*error, "code") : nullptr;
  const auto* value =
      code ? code->get_ptr<const mcp::Json::number_integer_t*>() : nullptr;
  if (!modern || !value)
    return 200;
  switch (*value) {
    case mcp::kMethodNotFound:
      return 404;
    case mcp::kUnsupportedProtocolVersion:
    case mcp::kMissingRequiredClientCapability:
    case kHeaderMismatch:
    case mcp::kParseError:
    case mcp::kInvalidRequest:
      return 400;
    default:
      return 200;
  }
}

void End(const ExchangePtr& http, std::string_view why) {
  http->OnGone(nullptr);
  if (http->started())
    http->EndEvents();
  else
    http->Respond(ErrorResponse(404, why));
}

std::string EventId(uint64_t stream, uint64_t seq) {
  return fmt::format("{}-{}", stream, seq);
}

// "<stream>-<seq>" back into its numbers.
bool ParseEventId(std::string_view id, uint64_t* stream, uint64_t* seq) {
  size_t dash = id.find('-');
  if (dash == std::string_view::npos)
    return false;
  auto number = [](std::string_view text, uint64_t* out) {
    auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), *out);
    return !text.empty() && error == std::errc() &&
           end == text.data() + text.size();
  };
  return number(id.substr(0, dash), stream) && number(id.substr(dash + 1), seq);
}

}  // namespace

McpSession::McpSession(EventLoop* loop, const mcp::McpServerOptions& server,
                       McpSessionOptions options)
    : loop_(loop),
      options_(options),
      server_(std::make_unique<mcp::Server>(loop, server, this)) {}

McpSession::~McpSession() {
  // The server first: shutting down may still send through us.
  server_.reset();
  for (auto& [key, pending] : pending_) {
    if (pending.grace)
      loop_->Cancel(pending.grace);
    if (pending.http)
      End(pending.http, "Session ended");
  }
  if (stream_)
    End(stream_, "Session ended");
}

void McpSession::Request(mcp::Message message, std::string key,
                         const ExchangePtr& http, bool events_ok, bool modern,
                         HeaderList headers) {
  if (pending_.count(key)) {
    return http->Respond(
        ErrorResponse(400, fmt::format("Invalid Request: id {} is already in "
                                       "flight in this session; use a new id",
                                       message.id.dump())));
  }
  Pending& pending = pending_[key];
  pending.http = http;
  pending.events_ok = events_ok;
  pending.modern = modern;
  pending.headers = std::move(headers);
  http->OnGone([this, key] { Gone(key); });
  message.exchange = std::move(key);
  server_->Serve(std::move(message));
}

bool McpSession::Listen(const ExchangePtr& http) {
  if (stream_)
    return false;
  stream_ = http;
  stream_->StartEvents({});
  stream_->OnGone([this] { stream_.reset(); });
  return true;
}

bool McpSession::Resume(const std::string& last_event_id,
                        const ExchangePtr& http) {
  uint64_t stream = 0, seq = 0;
  if (!options_.resumable || !ParseEventId(last_event_id, &stream, &seq))
    return false;
  auto it = pending_.begin();
  while (it != pending_.end() && it->second.stream != stream)
    ++it;
  if (it == pending_.end() || it->second.http)
    return false;
  Pending& pending = it->second;
  // The client saw `seq`: replaying must start right after it.
  if (!pending.events.empty() && pending.events.front().first > seq + 1)
    return false;
  if (pending.grace) {
    loop_->Cancel(pending.grace);
    pending.grace = 0;
  }
  BATON_LOG_INFO("stream {} resumed after event {}", stream, seq);
  std::string key = it->first;
  pending.http = http;
  http->OnGone([this, key] { Gone(key); });
  http->StartEvents({});
  for (const auto& [number, data] : pending.events) {
    if (number > seq)
      http->SendEvent(data, EventId(stream, number));
  }
  if (pending.answered && pending.http) {
    pending.http->EndEvents();
    Drop(it);
  }
  return true;
}

void McpSession::Send(const mcp::Json& message, const std::string& key) {
  bool final = mcp::Member(message, "id") && (mcp::Member(message, "result") ||
                                              mcp::Member(message, "error"));
  auto it = key.empty() ? pending_.end() : pending_.find(key);
  if (it == pending_.end()) {
    if (final || !key.empty())
      return;  // Answers a request gone meanwhile.
    // About no request in flight: the session's stream, when open.
    if (stream_)
      return stream_->SendEvent(Compact(message));
    // A request of ours (a form for the person) must reach the client:
    // without the session's stream, on the stream of a request in flight
    // that takes one (a wait, most likely).
    if (mcp::Member(message, "method") && mcp::Member(message, "id")) {
      for (auto& [other, pending] : pending_) {
        if (pending.events_ok && pending.http && !pending.answered)
          return Send(message, other);
      }
      BATON_LOG_WARN(
          "no stream open to send {}: the client must open the "
          "session's GET stream",
          Compact(message));
    }
    return;
  }
  Pending& pending = it->second;
  if (final && pending.stream == 0) {
    // Nothing came before: a whole JSON answer.
    ExchangePtr http = pending.http;
    HttpResponse response;
    response.status = StatusOf(message, pending.modern);
    response.headers = std::move(pending.headers);
    response.headers.emplace_back("Content-Type", "application/json");
    response.body = Compact(message);
    pending_.erase(it);
    if (http)
      http->Respond(std::move(response));
    return;
  }
  if (!final && !pending.events_ok)
    return;  // No stream for this client: notifications are dropped.
  if (pending.stream == 0) {
    pending.stream = ++streams_;
    pending.http->StartEvents(std::move(pending.headers));
  }
  Event(pending, Compact(message));
  if (!final)
    return;
  pending.answered = true;
  if (pending.http) {
    pending.http->EndEvents();
    Drop(it);
  }
  // Else kept until the client resumes the stream or the grace ends.
}

void McpSession::Event(Pending& pending, std::string data) {
  uint64_t seq = pending.next_seq++;
  if (!options_.resumable) {
    pending.http->SendEvent(data);
    return;
  }
  if (pending.http)
    pending.http->SendEvent(data, EventId(pending.stream, seq));
  pending.events.emplace_back(seq, std::move(data));
  if (pending.events.size() > options_.max_replay_events)
    pending.events.pop_front();
}

void McpSession::Gone(const std::string& key) {
  auto it = pending_.find(key);
  if (it == pending_.end())
    return;
  Pending& pending = it->second;
  pending.http = nullptr;
  if (!options_.resumable || pending.stream == 0) {
    // No event id reached the client: it cannot resume.
    Drop(it);
    server_->CancelExchange(key);
    return;
  }
  pending.grace =
      loop_->Schedule(std::chrono::steady_clock::now() + options_.resume_grace,
                      [this, key] { Expire(key); });
}

void McpSession::Expire(const std::string& key) {
  auto it = pending_.find(key);
  if (it == pending_.end())
    return;
  it->second.grace = 0;
  BATON_LOG_INFO("stream {} was not resumed in time; its request ends",
                 it->second.stream);
  Drop(it);
  server_->CancelExchange(key);
}

void McpSession::Drop(std::map<std::string, Pending>::iterator it) {
  if (it->second.grace)
    loop_->Cancel(it->second.grace);
  if (it->second.http)
    it->second.http->OnGone(nullptr);
  pending_.erase(it);
}

}  // namespace baton::serve
