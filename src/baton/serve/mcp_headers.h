// The headers the 2026-07-28 Streamable HTTP transport of MCP mirrors from
// a request's body (doc/serve.md): their encoding and their check against
// the body. Only /mcp's route needs them; the HTTP server knows no MCP.
#ifndef BATON_SERVE_MCP_HEADERS_H_
#define BATON_SERVE_MCP_HEADERS_H_

#include <optional>
#include <string>
#include <string_view>

#include "baton/mcp/json_rpc.h"
#include "baton/mcp/modern.h"
#include "baton/serve/http_message.h"

namespace baton::serve {

// HeaderMismatch of the 2026-07-28 Streamable HTTP transport.
inline constexpr int kHeaderMismatch = -32020;

// A header value as the client meant it: the `=?base64?...?=` sentinel of
// the 2026-07-28 transport decoded, a plain value as is; nullopt when the
// value has characters a header may not carry or bad base64.
std::optional<std::string> DecodeHeaderValue(std::string_view value);

// A modern request's mirrored headers against its body: MCP-Protocol-Version
// (= the body's _meta version), Mcp-Method (= method) and Mcp-Name (=
// params.name of tools/call and prompts/get, params.uri of resources/read;
// checked when sent for tasks/*, whose taskId clients mirror too). The
// HeaderMismatch error, or nullopt when they agree.
std::optional<mcp::RpcError> CheckModernHeaders(const HttpRequest& request,
                                                const mcp::Message& message,
                                                std::string_view body_version);

}  // namespace baton::serve

#endif  // BATON_SERVE_MCP_HEADERS_H_
