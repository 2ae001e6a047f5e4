#include "baton/daemon/socket_activation.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "baton/ipc/unix_socket.h"

namespace baton {
namespace {

// The first descriptor systemd passes (SD_LISTEN_FDS_START).
constexpr int kFirstPassedFd = 3;

bool ParseNumber(const char* text, long long& value) {
  if (!text)
    return false;
  std::string_view view(text);
  auto [end, error] =
      std::from_chars(view.data(), view.data() + view.size(), value);
  return error == std::errc() && end == view.data() + view.size();
}

}  // namespace

Result<UniqueFd> TakeActivatedSocket(const std::string& socket_path) {
  long long pid = 0;
  long long count = 0;
  const bool for_us = ParseNumber(std::getenv("LISTEN_PID"), pid) &&
                      pid == static_cast<long long>(::getpid());
  const bool counted = ParseNumber(std::getenv("LISTEN_FDS"), count);
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  if (!for_us)
    return UniqueFd();
  auto refuse = [&](std::string why) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "systemd passed " + why + "; batond serves one Unix stream socket at " +
            socket_path +
            ": set ListenStream= to it in batond.socket, or write the units "
            "again with `baton daemon install-service`");
  };
  if (!counted || count != 1)
    return refuse(std::to_string(count) + " sockets");
  UniqueFd fd(kFirstPassedFd);
  int type = 0;
  int listening = 0;
  socklen_t size = sizeof type;
  sockaddr_un address{};
  socklen_t address_size = sizeof address;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &size) != 0 ||
      type != SOCK_STREAM) {
    return refuse("a descriptor that is not a stream socket");
  }
  size = sizeof listening;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) !=
          0 ||
      !listening) {
    return refuse("a socket that does not listen");
  }
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address),
                    &address_size) != 0 ||
      address.sun_family != AF_UNIX) {
    return refuse("a socket that is not a Unix socket");
  }
  std::string bound(address.sun_path,
                    ::strnlen(address.sun_path, sizeof address.sun_path));
  if (bound != socket_path)
    return refuse("a socket at " + bound);
  // Ours now: not inherited by the supervisor or the tasks, and accept()
  // must not block the loop.
  if (::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) != 0)
    return std::unexpected(ErrnoError("fcntl", errno));
  if (auto set = SetNonBlocking(fd.get(), true); !set)
    return std::unexpected(set.error());
  return fd;
}

}  // namespace baton
