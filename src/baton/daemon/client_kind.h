// What kind of client a connection is, for the audit trail (doc/audit.md):
// told by the peer process's command line, which batond reads once when
// the client connects. The protocol carries no field for it, so clients of
// every version are told apart the same way, and an older batond never
// sees a field it would refuse.
#ifndef BATON_DAEMON_CLIENT_KIND_H_
#define BATON_DAEMON_CLIENT_KIND_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace baton {

// The kind of a client from its command line: for baton itself by its
// verb, `mcp` (`baton mcp`), `serve` (`baton serve` or `baton board`:
// MCP over HTTP and the board) or `cli` (any other verb); for another
// program, its file name (`python3`), at most 64 bytes; "" for none.
std::string ClientKindFromCommandLine(const std::vector<std::string>& argv);

// ClientKindFromCommandLine of process `pid` (/proc/PID/cmdline); "" when
// it cannot be read (the process is gone).
std::string ClientKindOf(pid_t pid);

}  // namespace baton

#endif  // BATON_DAEMON_CLIENT_KIND_H_
