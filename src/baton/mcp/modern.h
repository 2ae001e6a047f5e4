// The modern era of MCP (2026-07-28, doc/mcp.md "Two eras"): no initialize,
// every request carries its protocol version, client capabilities and client
// info in `_meta`, and every result carries `resultType` (and the server's
// identity in its `_meta`). Reads a request's `_meta` and decorates results.
// Pure: no I/O, never throws on any input.
#ifndef BATON_MCP_MODERN_H_
#define BATON_MCP_MODERN_H_

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace baton::mcp {

using Json = nlohmann::json;

inline constexpr std::string_view kModernVersion = "2026-07-28";
inline constexpr std::string_view kTasksExtension =
    "io.modelcontextprotocol/tasks";

inline constexpr char kMetaProtocolVersion[] =
    "io.modelcontextprotocol/protocolVersion";
inline constexpr char kMetaClientCapabilities[] =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr char kMetaClientInfo[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";
inline constexpr char kMetaSubscriptionId[] =
    "io.modelcontextprotocol/subscriptionId";

// The error codes the 2026-07-28 specification reserves (basic/index).
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// A JSON-RPC error to answer a request with.
struct RpcError {
  int code = 0;
  std::string message;
  Json data;  // Null: no data.
};

// What a request's `_meta` says about its client.
struct RequestMeta {
  // The request carried io.modelcontextprotocol/protocolVersion: it is served
  // in the modern era (resultType, serverInfo). Otherwise every other field
  // is empty and the request is served as the legacy era serves it.
  bool modern = false;
  std::string protocol_version;
  Json client_capabilities = Json::object();
  Json client_info;  // Object, or null when not given.

  // The client declared the extension `id` in its capabilities.
  bool HasExtension(std::string_view id) const;
  // The client can answer elicitation forms (`elicitation: {}` or with
  // `form`).
  bool ElicitationForm() const;
};

// Client capabilities (initialize's, or a modern request's) that declare
// elicitation forms: `elicitation: {}` or `elicitation: {form: ...}`.
bool DeclaresElicitationForm(const Json& capabilities);

// Reads `params._meta`. A request without a protocol version is legacy. A
// modern one must name a version we serve (else kUnsupportedProtocolVersion,
// with the versions we serve in `data.supported`) and carry its client
// capabilities as an object (else -32602); client info is optional.
std::expected<RequestMeta, RpcError> ReadRequestMeta(const Json& params);

// `result` as the modern era answers it: `resultType` (kept when set) and
// the server's identity in `_meta`.
Json ModernResult(Json result, std::string_view result_type = "complete");

// The server's identity (Implementation).
Json ServerInfo();

// The -32021 error for a request that needs the tasks extension.
RpcError MissingTasksExtension(std::string_view what);

}  // namespace baton::mcp

#endif  // BATON_MCP_MODERN_H_
