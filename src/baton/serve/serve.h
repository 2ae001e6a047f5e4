// `baton serve`: MCP over Streamable HTTP (doc/serve.md). One process, a
// client of batond as `baton mcp` is, on one EventLoop: the HTTP server,
// its gate (Host, Origin, bearer token or the board's cookie) and its
// routes (/mcp, and the board: board.h).
#ifndef BATON_SERVE_SERVE_H_
#define BATON_SERVE_SERVE_H_

#include <optional>
#include <string>
#include <vector>

#include "baton/serve/http_checks.h"
#include "baton/serve/http_message.h"
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

// The checks before any route (HttpServer's gate): Host and Origin
// against DNS rebinding, then the token: as a bearer header for /mcp, as
// the login cookie (and a same-origin request to change anything) for the
// board. The refusal, or nullopt to let the request on.
std::optional<HttpResponse> ServeGate(const HostPolicy& policy,
                                      const std::string& token,
                                      const std::string& cookie_name,
                                      const HttpRequest& request);

// The arguments after `serve`. Unknown or malformed ones are refused with
// what to write instead.
Result<ServeOptions> ParseServeArgs(const std::vector<std::string>& args);

// `baton serve ARGS` (argv after "serve"): serves until SIGINT or SIGTERM.
// Returns the exit code.
int RunServeMain(int argc, char** argv);

}  // namespace baton::serve

#endif  // BATON_SERVE_SERVE_H_
