// batond started by systemd socket activation (batond.socket, written by
// `baton daemon install-service`; doc/install.md): the listening socket is
// systemd's, passed as descriptor 3 with LISTEN_PID and LISTEN_FDS
// (sd_listen_fds(3)). batond serves on it instead of binding its own, and
// leaves the socket file alone when it stops, so that systemd starts the
// next batond on the next connection.
#ifndef BATON_DAEMON_SOCKET_ACTIVATION_H_
#define BATON_DAEMON_SOCKET_ACTIVATION_H_

#include <string>

#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton {

// The listening socket systemd passed to this process, or an empty UniqueFd
// when none was (no LISTEN_PID naming this process). Fails, with what to
// fix, when what was passed is not one listening Unix stream socket bound to
// `socket_path` (a batond.socket written for another state folder). Clears
// the LISTEN_* variables either way, so that no child takes them as its own.
Result<UniqueFd> TakeActivatedSocket(const std::string& socket_path);

}  // namespace baton

#endif  // BATON_DAEMON_SOCKET_ACTIVATION_H_
