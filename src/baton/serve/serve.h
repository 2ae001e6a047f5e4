// `baton serve`: MCP over Streamable HTTP (doc/serve.md). One process, a
// client of batond as `baton mcp` is, on one EventLoop: the HTTP server,
// its gate (Host, Origin, bearer token or the board's cookie) and its
// routes (/mcp, and the board: board.h).
#ifndef BATON_SERVE_SERVE_H_
#define BATON_SERVE_SERVE_H_

#include <string>
#include <vector>

#include "baton/serve/http_checks.h"
#include "baton/util/result.h"

namespace baton::serve {

inline constexpr uint16_t kDefaultPort = 7420;

struct ServeOptions {
  ListenAddress listen{"127.0.0.1", kDefaultPort};
  std::vector<std::string> allowed_hosts;  // --allow-host, repeatable.
  bool print_token = false;
  bool help = false;
  // Internal (`baton board` starts serve detached): where to say "ready"
  // once serve.json is written, or why it could not start.
  int ready_fd = -1;
};

// The arguments after `serve`. Unknown or malformed ones are refused with
// what to write instead.
Result<ServeOptions> ParseServeArgs(const std::vector<std::string>& args);

// `baton serve ARGS` (argv after "serve"): serves until SIGINT or SIGTERM.
// Returns the exit code.
int RunServeMain(int argc, char** argv);

}  // namespace baton::serve

#endif  // BATON_SERVE_SERVE_H_
