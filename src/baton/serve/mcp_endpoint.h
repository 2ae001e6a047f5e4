// /mcp of `baton serve`: MCP's Streamable HTTP transport (doc/serve.md) over
// the mcp library's Server, the same one `baton mcp` runs on stdio. Both
// eras: a 2025-11-25 client gets a session of its own (Mcp-Session-Id from
// initialize, GET for the session's stream or to resume a dropped one,
// DELETE to end it), and with it its own owner session in batond, as one
// `baton mcp` process has; a 2026-07-28 request (its _meta names the
// version) is stateless and served by one shared server, whose batond
// session is the serve process's. What a server says goes to its request's
// exchange (McpSession).
#ifndef BATON_SERVE_MCP_ENDPOINT_H_
#define BATON_SERVE_MCP_ENDPOINT_H_

#include <map>
#include <memory>
#include <string>

#include "baton/loop/event_loop.h"
#include "baton/mcp/mcp_server.h"
#include "baton/serve/http_message.h"
#include "baton/serve/http_server.h"
#include "baton/serve/mcp_session.h"

namespace baton::serve {

struct McpEndpointOptions {
  // `session` names the batond session of the modern era; each legacy
  // session gets "<session>-<random>".
  mcp::McpServerOptions server;
  size_t max_sessions = 256;
};

class McpEndpoint {
 public:
  McpEndpoint(EventLoop* loop, McpEndpointOptions options);
  ~McpEndpoint();
  McpEndpoint(const McpEndpoint&) = delete;
  McpEndpoint& operator=(const McpEndpoint&) = delete;

  // Attaches the modern era's session.
  void Start();
  void Handle(const HttpRequest& request, const ExchangePtr& exchange);
  // Before the loop sleeps: destroys the sessions' retired connections.
  void ReleaseRetired();
  size_t legacy_sessions() const { return legacy_.size(); }

 private:
  void Post(const HttpRequest& request, const ExchangePtr& exchange);
  void Get(const HttpRequest& request, const ExchangePtr& exchange);
  void Delete(const HttpRequest& request, const ExchangePtr& exchange);
  // The legacy session the request names, or nullptr after answering 400
  // (no Mcp-Session-Id) or 404 (not ours, or ended).
  McpSession* FindSession(const HttpRequest& request,
                          const ExchangePtr& exchange);
  // A new legacy session (the least recently used idle one makes room when
  // all are taken), or nullptr after answering 503.
  McpSession* NewSession(const ExchangePtr& exchange, std::string* id);

  EventLoop* loop_;
  McpEndpointOptions options_;
  std::unique_ptr<McpSession> modern_;
  // By session id.
  std::map<std::string, std::unique_ptr<McpSession>> legacy_;
  uint64_t serial_ = 0;  // Names the modern era's exchanges.
  uint64_t clock_ = 0;   // Orders the legacy sessions' last uses.
};

}  // namespace baton::serve

#endif  // BATON_SERVE_MCP_ENDPOINT_H_
