#include "baton/serve/mcp_headers.h"

#include <fmt/format.h>

#include <cstdint>

#include "baton/serve/http_checks.h"

namespace baton::serve {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  while (!text.empty() && text.back() == '=')
    text.remove_suffix(1);
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    int value = Base64Value(c);
    if (value < 0)
      return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

mcp::RpcError Mismatch(std::string message) {
  return {kHeaderMismatch, "Header mismatch: " + std::move(message), nullptr};
}

// The body field that Mcp-Name mirrors for `method`, and whether the
// transport requires the header for it.
struct NameSource {
  const char* field;
  bool required;
};

std::optional<NameSource> NameSourceOf(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get")
    return NameSource{"name", true};
  if (method == "resources/read")
    return NameSource{"uri", true};
  if (method == "tasks/get" || method == "tasks/update" ||
      method == "tasks/cancel") {
    return NameSource{"taskId", false};
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> DecodeHeaderValue(std::string_view value) {
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte > 0x7e)
      return std::nullopt;
  }
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (value.size() >= kPrefix.size() + kSuffix.size() &&
      value.substr(0, kPrefix.size()) == kPrefix &&
      value.substr(value.size() - kSuffix.size()) == kSuffix) {
    return DecodeBase64(value.substr(
        kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size()));
  }
  return std::string(value);
}

std::optional<mcp::RpcError> CheckModernHeaders(const HttpRequest& request,
                                                const mcp::Message& message,
                                                std::string_view body_version) {
  const std::string* version = request.Header("MCP-Protocol-Version");
  if (!version)
    return Mismatch("the MCP-Protocol-Version header is missing");
  if (TrimHeaderValue(*version) != body_version) {
    return Mismatch(fmt::format(
        "MCP-Protocol-Version header value '{}' does not match body value "
        "'{}'",
        TrimHeaderValue(*version), body_version));
  }
  if (message.kind != mcp::Message::Kind::kRequest)
    return std::nullopt;  // Notifications are exempt.
  const std::string* method = request.Header("Mcp-Method");
  if (!method)
    return Mismatch("the Mcp-Method header is missing");
  if (TrimHeaderValue(*method) != message.method) {
    return Mismatch(fmt::format(
        "Mcp-Method header value '{}' does not match body value '{}'",
        TrimHeaderValue(*method), message.method));
  }
  auto source = NameSourceOf(message.method);
  if (!source)
    return std::nullopt;
  const std::string* name = request.Header("Mcp-Name");
  if (!name) {
    if (!source->required)
      return std::nullopt;
    return Mismatch(fmt::format("the Mcp-Name header is missing ({} needs it)",
                                message.method));
  }
  auto decoded = DecodeHeaderValue(TrimHeaderValue(*name));
  if (!decoded)
    return Mismatch("the Mcp-Name header has invalid characters");
  const mcp::Json* field = mcp::Member(message.params, source->field);
  const auto* body = field ? field->get_ptr<const std::string*>() : nullptr;
  if (!body || *body != *decoded) {
    return Mismatch(
        fmt::format("Mcp-Name header value '{}' does not match body value '{}'",
                    *decoded, body ? *body : std::string("(none)")));
  }
  return std::nullopt;
}

}  // namespace baton::serve
