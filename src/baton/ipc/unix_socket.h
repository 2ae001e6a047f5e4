// Unix stream sockets: listen, accept with a peer-uid check, connect. All fds
// are close-on-exec.
#ifndef BATON_IPC_UNIX_SOCKET_H_
#define BATON_IPC_UNIX_SOCKET_H_

#include <sys/types.h>

#include <string>

#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton {

// Binds and listens at `path`, replacing a stale socket file. Non-blocking.
Result<UniqueFd> ListenUnix(const std::string& path);

// Accepts one connection (non-blocking fd). Refuses (closes) peers whose uid
// differs from ours: fails with kPermissionDenied. kUnavailable when there
// is nothing to accept.
Result<UniqueFd> AcceptSameUid(int listen_fd);

// Connects to `path` (blocking fd). kUnavailable when nobody listens.
Result<UniqueFd> ConnectUnix(const std::string& path);

// Who the peer is, as the kernel saw it at connect (SO_PEERCRED).
struct PeerCredentials {
  uid_t uid = 0;
  pid_t pid = 0;
};
Result<PeerCredentials> PeerOf(int fd);

Status SetNonBlocking(int fd, bool non_blocking);

}  // namespace baton

#endif  // BATON_IPC_UNIX_SOCKET_H_
