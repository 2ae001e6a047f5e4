// JSON-RPC 2.0 as MCP's stdio transport carries it: one message a line, no
// batches. Parses (with a depth limit) and classifies an incoming line, and
// builds replies. Pure: no I/O, never throws on any input.
#ifndef BATON_MCP_JSON_RPC_H_
#define BATON_MCP_JSON_RPC_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace baton::mcp {

using Json = nlohmann::json;

// The standard codes (jsonrpc.org/specification#error_object).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// One incoming line, classified.
struct Message {
  enum class Kind {
    kRequest,       // has "method" and an id: must be answered.
    kNotification,  // has "method", no id: never answered.
    kResponse,      // a reply to a request of ours (elicitation/create).
    kInvalid,       // answer with `error_code` / `error_message` to `id`.
  };
  Kind kind = Kind::kInvalid;
  Json id;  // String or integer; null when absent or unreadable.
  std::string method;
  Json params;  // Object (or null when absent).
  int error_code = 0;
  std::string error_message;
  // A response's "result", or its "error" object (then `failed`).
  Json result;
  bool failed = false;
  // Set by the transport, not the parser: the name under which replies and
  // notifications about this request go back (Server, Transport). Empty:
  // id.dump(), as on stdio, where ids are unique among requests in flight.
  // HTTP names each exchange itself: clients sharing a server may reuse ids.
  std::string exchange;
};

// Parses one line. Malformed JSON, and JSON nested deeper than
// kMaxMessageDepth, is kParseError; valid JSON that is not a JSON-RPC 2.0
// message (not an object, wrong "jsonrpc", an id that is null,
// fractional, boolean or structured, a non-string method, params that are
// not an object or array) is kInvalidRequest. The id is kept whenever it is
// readable, so the error can name the request.
Message ParseMessage(std::string_view line);

// How deep objects and arrays may nest in one message. MCP's own messages
// and our tools' arguments stay under 10; the limit keeps a hostile line
// from overflowing the stack of anything that walks the document.
inline constexpr size_t kMaxMessageDepth = 64;

// `value` as a request id (a string or an integer; an integral float such
// as 3.0 becomes 3), or nullopt when it cannot be one.
std::optional<Json> RequestId(const Json& value);

// The member `key` of `object`, or nullptr when `object` is not an object
// or has no such member.
const Json* Member(const Json& object, std::string_view key);

// A success or error reply, ready to dump.
Json MakeResult(const Json& id, Json result);
Json MakeErrorResponse(const Json& id, int code, std::string_view message,
                       const Json& data = nullptr);
Json MakeNotification(std::string_view method, Json params);

// One line of stdout: compact JSON (invalid UTF-8 replaced, so a task's
// binary output cannot break the framing) plus '\n'.
std::string SerializeLine(const Json& message);

}  // namespace baton::mcp

#endif  // BATON_MCP_JSON_RPC_H_
