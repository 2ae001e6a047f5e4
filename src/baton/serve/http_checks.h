// The checks `baton serve` makes on a request before a route sees it, and
// on the 2026-07-28 era's request headers (doc/serve.md, "Security" and
// "Protocol"): the listen address, the Host and Origin it accepts (against
// DNS rebinding), the bearer token, what the client accepts, and the
// headers that mirror the JSON-RPC body. Pure: no I/O, never throws.
#ifndef BATON_SERVE_HTTP_CHECKS_H_
#define BATON_SERVE_HTTP_CHECKS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "baton/serve/http_message.h"
#include "baton/util/result.h"

namespace baton::serve {

struct ListenAddress {
  std::string host;   // An IP literal (IPv6 without brackets).
  uint16_t port = 0;  // 0: the system picks one.
};

// "HOST:PORT", "[IPv6]:PORT" or "localhost:PORT" (read as 127.0.0.1). The
// host must be an IP literal: a name would need a lookup and could change.
Result<ListenAddress> ParseListenAddress(std::string_view text);

bool IsLoopbackHost(std::string_view host);

// "host:port" as a Host header or an Origin names it ("[::1]:7420").
std::string Authority(std::string_view host, uint16_t port);

// Which Host headers and Origins are ours: the loopback names (localhost,
// 127.0.0.1, [::1]) and the listen address, each with the bound port, plus
// the names given with --allow-host. A page from any other origin that
// reaches the port (DNS rebinding) is refused.
class HostPolicy {
 public:
  HostPolicy(const ListenAddress& listen, uint16_t bound_port,
             const std::vector<std::string>& extra_hosts);
  bool HostAllowed(std::string_view host) const;
  // No Origin (a client that is not a browser) passes; one that is sent
  // must be http://<an allowed authority>. "null" is refused.
  bool OriginAllowed(const std::string* origin) const;

 private:
  std::set<std::string> authorities_;  // Lower case.
};

// `given` equals `token` (not empty), compared in constant time.
bool TokenEquals(std::string_view given, std::string_view token);

// `authorization` is "Bearer <token>" (the scheme in any case). Compares in
// constant time.
bool BearerTokenMatches(const std::string* authorization,
                        std::string_view token);

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or nullopt.
std::optional<std::string> CookieValue(const std::string* cookie,
                                       std::string_view name);

// The value of `name` in the query of `target` ("/x?a=1&b=%41" gives "A"
// for b), percent-decoded and '+' read as a space; nullopt when absent or
// badly encoded.
std::optional<std::string> QueryValue(std::string_view target,
                                      std::string_view name);

// A header value without the blanks (spaces, tabs) around it (RFC 9110's
// OWS).
std::string_view TrimHeaderValue(std::string_view value);

// The Accept header lists `media_type` (or */*, or type/*). No Accept
// header accepts everything (RFC 9110).
bool Accepts(const std::string* accept, std::string_view media_type);

}  // namespace baton::serve

#endif  // BATON_SERVE_HTTP_CHECKS_H_
