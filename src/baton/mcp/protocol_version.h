// Which MCP protocol revisions `baton mcp` speaks, and the negotiation rule
// of the legacy lifecycle (2025-11-25 basic/lifecycle): echo the client's
// version when we support it, else answer with our latest.
#ifndef BATON_MCP_PROTOCOL_VERSION_H_
#define BATON_MCP_PROTOCOL_VERSION_H_

#include <array>
#include <nlohmann/json.hpp>
#include <string_view>

namespace baton::mcp {

// Newest first.
inline constexpr std::array<std::string_view, 4> kSupportedVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// The version to put in the initialize result for the client's requested
// `protocolVersion` (any JSON: a missing or non-string one gets our latest,
// and the client decides whether it can go on).
std::string_view NegotiateProtocolVersion(const nlohmann::json& requested);

}  // namespace baton::mcp

#endif  // BATON_MCP_PROTOCOL_VERSION_H_
