// `baton mcp`: an MCP server on stdio (one JSON-RPC message a line; only MCP
// on stdout, logs on stderr) that is one owner session of batond. It keeps
// one attached connection for the life of the process, so the session's
// tasks live on under the lease after it exits. One thread, one EventLoop:
// stdin, the daemon connections and the progress timers all wake it, so a
// pending wait never stops it from serving pings, other calls and
// cancellations.
#ifndef BATON_MCP_MCP_SERVER_H_
#define BATON_MCP_MCP_SERVER_H_

#include <chrono>
#include <string>

#include "baton/util/state_paths.h"

namespace baton::mcp {

struct McpServerOptions {
  StatePaths paths;
  // The owner session; "" = generate "mcp-<pid>-<random>".
  std::string session;
  std::string baton_binary;  // Default: this executable.
  std::string baton_home;    // $BATON_HOME as given, for wait_command.
  std::chrono::milliseconds progress_interval{3000};
  int in_fd = 0;
  int out_fd = 1;
  // Start batond when none runs. Off only where no process may be started
  // (the fuzz target of the server, fuzz/mcp_server_fuzz.cc).
  bool autostart = true;
};

// Serves until stdin ends (or stdout breaks). Returns the exit code.
int RunMcpServer(const McpServerOptions& options);

// Reads the environment (BATON_HOME, BATON_SESSION) and serves.
int RunMcpServerFromEnvironment();

// The initialize result's `instructions`.
extern const char* const kInstructions;

}  // namespace baton::mcp

#endif  // BATON_MCP_MCP_SERVER_H_
