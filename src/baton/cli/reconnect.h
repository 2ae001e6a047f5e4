// Waits and follows that outlive batond: when batond goes away mid-wait
// (a crash, a kill -9), the CLI connects again, starting batond as any
// command does, and sends the wait again with what is left of its deadline.
// The tasks live on under the supervisor, so the wait goes on for the same
// tasks. It gives up only when batond cannot be brought back within
// kReconnectWindow (doc/protocol.md, "Waits across a batond restart"). The one
// place where `wait`, `output --follow` and `events --follow` do this.
#ifndef BATON_CLI_RECONNECT_H_
#define BATON_CLI_RECONNECT_H_

#include <chrono>
#include <cstdint>
#include <optional>

#include "baton/cli/context.h"

namespace baton {

// Whether `error` (from a send or a read) means that the connection to
// batond was lost: batond stopped or died.
bool ConnectionLost(const Error& error);

// Connects again after `lost`, starting batond when none runs, trying for
// up to kReconnectWindow. Fails with kUnavailable (exit code 2) and a
// message that says batond could not be brought back.
Result<DaemonClient> Reconnect(const Context& ctx, const Error& lost);
// The same, trying until `deadline`.
Result<DaemonClient> Reconnect(const Context& ctx, const Error& lost,
                               std::chrono::steady_clock::time_point deadline);

// Calls `request` on `client`; when the connection is lost, reconnects
// (replacing `client`) and calls it again, within one kReconnectWindow for
// the loss: a batond that is still dying can accept the new connection and
// then drop it. Only for requests that can be sent twice (reads at an
// offset, events after a sequence).
template <class R>
Result<typename R::Reply> CallReconnecting(const Context& ctx,
                                           DaemonClient& client,
                                           const R& request) {
  auto reply = client.Call(request);
  if (reply || !ConnectionLost(reply.error()))
    return reply;
  auto deadline = std::chrono::steady_clock::now() + kReconnectWindow;
  for (;;) {
    auto again = Reconnect(ctx, reply.error(), deadline);
    if (!again)
      return std::unexpected(again.error());
    client = std::move(*again);
    reply = client.Call(request);
    if (reply || !ConnectionLost(reply.error()))
      return reply;
  }
}

// One wait on batond that survives its restarts. Send sends the request;
// Read reads its answer. When the connection is lost, Read reconnects and
// sends the wait again, with the time left until the deadline, and with
// `news_since_ms` (the wall time of the first send): an end that the lost
// batond told this session, whose answer never arrived, is news again
// (doc/protocol.md, "Waits across a batond restart").
class ReconnectingWait {
 public:
  // `client` is used, and replaced when batond comes back.
  ReconnectingWait(const Context& ctx, DaemonClient& client,
                   WaitRequest request);

  Status Send();
  // The answer, or kTimeout when none came within `timeout` (the wait goes
  // on; Read again). A lost connection is not an error until batond
  // cannot be brought back.
  Result<WaitReply> Read(
      std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  int fd() const { return client_->fd(); }

 private:
  // Sends the request, with the time left and (after a loss) news_since.
  Status SendNow();
  // Reconnects after `lost` and sends the wait again.
  Status Resend(const Error& lost);

  const Context* ctx_;
  DaemonClient* client_;
  WaitRequest request_;
  std::chrono::steady_clock::time_point deadline_;
  int64_t first_sent_ms_ = 0;
};

}  // namespace baton

#endif  // BATON_CLI_RECONNECT_H_
