// The client side of the batond protocol, blocking, for the CLI (and
// tests): connects (starting batond when none runs), sends typed requests,
// reads replies. The same codec (ipc/codec.h) frames them as for the
// asynchronous client (ipc/async_daemon_client.h). Not thread-safe.
#ifndef BATON_IPC_DAEMON_CLIENT_H_
#define BATON_IPC_DAEMON_CLIENT_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/codec.h"
#include "baton/util/result.h"
#include "baton/util/state_paths.h"
#include "baton/util/unique_fd.h"

namespace baton {

// How long a client waits for a daemon it started to become ready.
inline constexpr std::chrono::seconds kDaemonStartTimeout{10};
// How long a wait whose batond went away tries to bring it back (starting
// it again) before it gives up (doc/protocol.md, "Waits across a batond
// restart").
inline constexpr std::chrono::seconds kReconnectWindow{10};

// The error of a wait that lost batond (`lost`) and could not bring it
// back within kReconnectWindow (`last`: the last attempt's error).
Error CouldNotReconnect(const Error& lost, const Error& last);

class DaemonClient {
 public:
  struct Options {
    StatePaths paths;
    std::string session;       // Sent with every request; "" = none.
    bool autostart = true;     // Start batond when nobody listens.
    std::string baton_binary;  // For autostart; default: this executable.
    // For autostart: how long the new batond may take to be ready.
    std::chrono::milliseconds start_timeout = kDaemonStartTimeout;
  };

  // Fails with kUnavailable (and the daemon's own start-up error, if it
  // could not start) when no daemon can be reached.
  static Result<DaemonClient> Connect(const Options& options);

  DaemonClient(DaemonClient&&) = default;
  DaemonClient& operator=(DaemonClient&&) = default;

  // Sends one request and returns its id; the reply comes from ReadReply.
  template <class R>
  Result<int64_t> Send(const R& request) {
    int64_t id = next_id_++;
    if (auto ok = WriteLine(EncodeRequestLine(id, session_, request)); !ok)
      return std::unexpected(ok.error());
    return id;
  }
  // The next reply (any id). kTimeout if none came within `timeout`;
  // kUnavailable if the daemon hung up. Its notices are kept for
  // TakeNotices.
  Result<ReplyLine> ReadReply(
      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Send + ReadReply for that id: the typed result, or the daemon's error.
  template <class R>
  Result<typename R::Reply> Call(const R& request) {
    auto id = Send(request);
    if (!id)
      return std::unexpected(id.error());
    auto reply = ReadReplyTo(*id);
    if (!reply)
      return std::unexpected(reply.error());
    return DecodeResult<typename R::Reply>(*reply, R::kOp);
  }

  // Notices the replies carried so far; clears them.
  std::vector<Notice> TakeNotices();

  int fd() const { return fd_.get(); }
  const std::string& session() const { return session_; }

 private:
  DaemonClient(UniqueFd fd, std::string session)
      : fd_(std::move(fd)), session_(std::move(session)) {}
  Status WriteLine(std::string line);
  Result<ReplyLine> ReadReplyTo(int64_t id);

  UniqueFd fd_;
  std::string session_;
  int64_t next_id_ = 1;
  std::string in_;
  std::vector<Notice> notices_;
};

}  // namespace baton

#endif  // BATON_IPC_DAEMON_CLIENT_H_
