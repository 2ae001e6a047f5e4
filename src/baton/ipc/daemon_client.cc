#include "baton/ipc/daemon_client.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "baton/ipc/unix_socket.h"
#include "baton/util/detached_process.h"
#include "baton/util/file_util.h"

namespace baton {

Result<DaemonClient> DaemonClient::Connect(const Options& options) {
  auto fd = ConnectUnix(options.paths.daemon_socket());
  if (!fd && fd.error().code == ErrorCode::kUnavailable && options.autostart) {
    if (auto prepared = options.paths.Prepare(); !prepared) {
      return std::unexpected(prepared.error());
    }
    std::string binary =
        options.baton_binary.empty() ? SelfExecutable() : options.baton_binary;
    // During `baton daemon upgrade` the next batond is the upgrading
    // baton's, whoever starts it: a waiting client that reconnects may
    // come first, and must not bring the old file back.
    if (auto next = ReadFile(options.paths.next_daemon());
        next && !next->empty() && ::access(next->c_str(), X_OK) == 0) {
      binary = *next;
    }
    auto started =
        StartDetached({binary, "daemon", "run", "--ready-fd", "{ready_fd}"},
                      options.start_timeout);
    // kAlreadyExists: another batond won a start-up race; connect to it.
    if (!started && started.error().code != ErrorCode::kAlreadyExists) {
      return MakeError(started.error().code,
                       "cannot start batond: " + started.error().message);
    }
    fd = ConnectUnix(options.paths.daemon_socket());
  }
  if (!fd) {
    if (fd.error().code == ErrorCode::kUnavailable) {
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("batond is not running ({}); start it "
                                   "with 'baton daemon start'",
                                   options.paths.daemon_socket()));
    }
    return std::unexpected(fd.error());
  }
  return DaemonClient(std::move(*fd), options.session);
}

namespace {

// A reply to no request in particular: batond refused the connection or a
// line it could not read (out of descriptors, a line over its limit).
bool IsConnectionError(const ReplyLine& reply) {
  return !reply.id && !reply.ok;
}

// Writes all of `data`; never raises SIGPIPE.
Status SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::unexpected(ErrnoError("send", errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

}  // namespace

Status DaemonClient::WriteLine(std::string line) {
  line.push_back('\n');
  if (auto written = SendAll(fd_.get(), line); !written) {
    // batond may have said why before it closed (a request over its
    // limit): that beats "connection lost".
    if (auto reply = ReadReply(std::chrono::milliseconds(500));
        reply && IsConnectionError(*reply)) {
      return std::unexpected(reply->error);
    }
    return MakeError(
        ErrorCode::kUnavailable,
        "lost the connection to batond: " + written.error().message);
  }
  return {};
}

Result<ReplyLine> DaemonClient::ReadReply(
    std::optional<std::chrono::milliseconds> timeout) {
  auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                          : std::chrono::steady_clock::time_point::max();
  // A timeout of 0 still looks once at what the socket holds.
  bool looked = false;
  for (;;) {
    size_t nl = in_.find('\n');
    if (nl != std::string::npos) {
      auto reply = DecodeReplyLine(std::string_view(in_).substr(0, nl));
      in_.erase(0, nl + 1);
      if (!reply)
        return reply;
      for (auto& notice : reply->notices)
        notices_.push_back(std::move(notice));
      reply->notices.clear();
      return reply;
    }
    int wait_ms = -1;
    if (timeout) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 && looked) {
        return MakeError(ErrorCode::kTimeout, "no reply from batond in time");
      }
      wait_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    pollfd pfd{fd_.get(), POLLIN, 0};
    int ready = ::poll(&pfd, 1, wait_ms);
    looked = true;
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      continue;
    char buf[65536];
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      return MakeError(ErrorCode::kUnavailable,
                       "batond closed the connection (did it stop or "
                       "crash? see batond.log in the state directory)");
    }
    in_.append(buf, static_cast<size_t>(n));
  }
}

Result<ReplyLine> DaemonClient::ReadReplyTo(int64_t id) {
  for (;;) {
    auto reply = ReadReply();
    if (!reply || reply->id == id)
      return reply;
    if (IsConnectionError(*reply))
      return std::unexpected(reply->error);
  }
}

Error CouldNotReconnect(const Error& lost, const Error& last) {
  return Error{
      ErrorCode::kUnavailable,
      fmt::format("lost the connection to batond while waiting ({}), and "
                  "could not bring batond back within {} s: {}; the tasks "
                  "run on under the supervisor: wait again once 'baton "
                  "daemon start' works",
                  lost.message, kReconnectWindow.count(), last.message)};
}

std::vector<Notice> DaemonClient::TakeNotices() {
  return std::exchange(notices_, {});
}

}  // namespace baton
