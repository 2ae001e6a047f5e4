#include "baton/ipc/unix_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace baton {
namespace {

Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Status SetNonBlocking(int fd, bool non_blocking) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0)
    return std::unexpected(ErrnoError("fcntl", errno));
  flags = non_blocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (::fcntl(fd, F_SETFL, flags) != 0) {
    return std::unexpected(ErrnoError("fcntl", errno));
  }
  return {};
}

Result<UniqueFd> ListenUnix(const std::string& path) {
  auto addr = Address(path);
  if (!addr)
    return std::unexpected(addr.error());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd)
    return std::unexpected(ErrnoError("socket", errno));
  // The caller holds the lock that makes it the only listener, so a socket
  // file left here is stale.
  ::unlink(path.c_str());
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) !=
      0) {
    return std::unexpected(ErrnoError("bind " + path, errno));
  }
  ::chmod(path.c_str(), 0600);
  if (::listen(fd.get(), 512) != 0) {
    return std::unexpected(ErrnoError("listen " + path, errno));
  }
  return fd;
}

Result<PeerCredentials> PeerOf(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return std::unexpected(ErrnoError("SO_PEERCRED", errno));
  }
  return PeerCredentials{.uid = cred.uid, .pid = cred.pid};
}

Result<UniqueFd> AcceptSameUid(int listen_fd) {
  UniqueFd fd(
      ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
        errno == ECONNABORTED) {
      return MakeError(ErrorCode::kUnavailable, "nothing to accept");
    }
    return std::unexpected(ErrnoError("accept", errno));
  }
  auto peer = PeerOf(fd.get());
  if (!peer)
    return std::unexpected(peer.error());
  if (peer->uid != ::geteuid()) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "refused a peer with uid " + std::to_string(peer->uid));
  }
  return fd;
}

Result<UniqueFd> ConnectUnix(const std::string& path) {
  auto addr = Address(path);
  if (!addr)
    return std::unexpected(addr.error());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd)
    return std::unexpected(ErrnoError("socket", errno));
  while (::connect(fd.get(), reinterpret_cast<sockaddr*>(&*addr),
                   sizeof *addr) != 0) {
    if (errno == EINTR)
      continue;
    int err = errno;
    if (err == ENOENT || err == ECONNREFUSED) {
      return MakeError(ErrorCode::kUnavailable, "nobody listens on " + path,
                       err);
    }
    return std::unexpected(ErrnoError("connect " + path, err));
  }
  return fd;
}

}  // namespace baton
