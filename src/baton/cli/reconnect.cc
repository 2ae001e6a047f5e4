#include "baton/cli/reconnect.h"

#include <algorithm>
#include <thread>

#include "baton/util/clock.h"

namespace baton {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

bool ConnectionLost(const Error& error) {
  // The client reports a hang-up, a reset and a failed send as
  // kUnavailable; batond's own errors carry other codes.
  return error.code == ErrorCode::kUnavailable;
}

Result<DaemonClient> Reconnect(const Context& ctx, const Error& lost) {
  return Reconnect(ctx, lost, steady_clock::now() + kReconnectWindow);
}

Result<DaemonClient> Reconnect(const Context& ctx, const Error& lost,
                               steady_clock::time_point deadline) {
  Error last = lost;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline -
                                                         steady_clock::now());
    if (left.count() <= 0)
      break;
    // The start of a new batond counts against the same window.
    auto client = ctx.Connect(true, left);
    if (client)
      return client;
    last = client.error();
    // The old batond may still hold its lock for a moment, or the start
    // failed: try again shortly, until the window closes.
    std::this_thread::sleep_for(std::min(milliseconds(100), left));
  }
  return std::unexpected(CouldNotReconnect(lost, last));
}

ReconnectingWait::ReconnectingWait(const Context& ctx, DaemonClient& client,
                                   WaitRequest request)
    : ctx_(&ctx),
      client_(&client),
      request_(std::move(request)),
      deadline_(request_.timeout ? steady_clock::now() + *request_.timeout
                                 : steady_clock::time_point::max()) {}

Status ReconnectingWait::Send() {
  first_sent_ms_ = WallMillis();
  if (auto sent = SendNow(); !sent) {
    if (!ConnectionLost(sent.error()))
      return sent;
    return Resend(sent.error());
  }
  return {};
}

Status ReconnectingWait::SendNow() {
  if (request_.timeout) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline_ -
                                                         steady_clock::now());
    request_.timeout = std::max(milliseconds(0), left);
  }
  auto sent = client_->Send(request_);
  if (!sent)
    return std::unexpected(sent.error());
  return {};
}

Status ReconnectingWait::Resend(const Error& lost) {
  Error error = lost;
  // One window for the loss, also when a batond that came back goes away
  // again before the wait could be sent.
  auto deadline = steady_clock::now() + kReconnectWindow;
  for (;;) {
    auto client = Reconnect(*ctx_, error, deadline);
    if (!client)
      return std::unexpected(client.error());
    *client_ = std::move(*client);
    request_.news_since_ms = first_sent_ms_;
    auto sent = SendNow();
    if (sent || !ConnectionLost(sent.error()))
      return sent;
    error = sent.error();
  }
}

Result<WaitReply> ReconnectingWait::Read(std::optional<milliseconds> timeout) {
  for (;;) {
    auto line = client_->ReadReply(timeout);
    if (!line) {
      if (!ConnectionLost(line.error()))
        return std::unexpected(line.error());
      if (auto sent = Resend(line.error()); !sent)
        return std::unexpected(sent.error());
      continue;
    }
    // A line of no request (batond refused the connection) is not ours.
    if (!line->id && !line->ok)
      return std::unexpected(line->error);
    return DecodeResult<WaitReply>(*line, WaitRequest::kOp);
  }
}

}  // namespace baton
