// The client side of the batond protocol, blocking, for the CLI and the MCP
// server: connects (starting batond when none runs), sends requests, reads
// replies. Not thread-safe.
#ifndef BATON_IPC_DAEMON_CLIENT_H_
#define BATON_IPC_DAEMON_CLIENT_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/protocol.h"
#include "baton/util/result.h"
#include "baton/util/state_paths.h"
#include "baton/util/unique_fd.h"

namespace baton {

class DaemonClient {
 public:
  struct Options {
    StatePaths paths;
    std::string session;       // Sent with every request; "" = none.
    bool autostart = true;     // Start batond when nobody listens.
    std::string baton_binary;  // For autostart; default: this executable.
  };

  // Fails with kUnavailable (and the daemon's own start-up error, if it
  // could not start) when no daemon can be reached.
  static Result<DaemonClient> Connect(const Options& options);

  DaemonClient(DaemonClient&&) = default;
  DaemonClient& operator=(DaemonClient&&) = default;

  // Sends one request and returns its id; the reply comes from ReadReply.
  Result<int64_t> Send(std::string_view op, Json args = Json::object());
  // The next reply (any id), as the whole object. kTimeout if none came
  // within `timeout`; kUnavailable if the daemon hung up.
  Result<Json> ReadReply(
      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Send + ReadReply for that id: the "result", or the daemon's error.
  Result<Json> Call(std::string_view op, Json args = Json::object());

  // Notices the replies carried so far; clears them.
  std::vector<Json> TakeNotices();

  int fd() const { return fd_.get(); }
  const std::string& session() const { return session_; }

 private:
  DaemonClient(UniqueFd fd, std::string session)
      : fd_(std::move(fd)), session_(std::move(session)) {}

  UniqueFd fd_;
  std::string session_;
  int64_t next_id_ = 1;
  std::string in_;
  std::vector<Json> notices_;
};

// How long a client waits for a daemon it started to become ready.
inline constexpr std::chrono::seconds kDaemonStartTimeout{10};

}  // namespace baton

#endif  // BATON_IPC_DAEMON_CLIENT_H_
