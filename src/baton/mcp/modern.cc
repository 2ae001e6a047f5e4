#include "baton/mcp/modern.h"

#include <fmt/format.h>

#include "baton/mcp/json_rpc.h"
#include "baton/mcp/protocol_version.h"
#include "baton/util/version.h"

namespace baton::mcp {

bool RequestMeta::HasExtension(std::string_view id) const {
  const Json* extensions = Member(client_capabilities, "extensions");
  return extensions && Member(*extensions, id) != nullptr;
}

bool RequestMeta::ElicitationForm() const {
  return DeclaresElicitationForm(client_capabilities);
}

bool DeclaresElicitationForm(const Json& capabilities) {
  const Json* elicitation = Member(capabilities, "elicitation");
  if (!elicitation || !elicitation->is_object())
    return false;
  // `{}` alone means form (the spec keeps that for compatibility).
  return elicitation->empty() || Member(*elicitation, "form") != nullptr;
}

std::expected<RequestMeta, RpcError> ReadRequestMeta(const Json& params) {
  RequestMeta meta;
  const Json* given = Member(params, "_meta");
  const Json* version = given ? Member(*given, kMetaProtocolVersion) : nullptr;
  if (!version)
    return meta;
  const auto* text = version->get_ptr<const std::string*>();
  if (!text || *text != kModernVersion) {
    // Legacy versions are spoken through initialize only; naming one here
    // is as unsupported as naming an unknown one.
    return std::unexpected(RpcError{
        kUnsupportedProtocolVersion,
        fmt::format("Unsupported protocol version: {} (per-request _meta "
                    "speaks {}; older versions go through initialize)",
                    version->dump(), kModernVersion),
        {{"supported", Json::array({kModernVersion})},
         {"requested", *version}}});
  }
  meta.modern = true;
  meta.protocol_version = *text;
  const Json* capabilities = Member(*given, kMetaClientCapabilities);
  if (!capabilities || !capabilities->is_object()) {
    return std::unexpected(RpcError{
        kInvalidParams,
        fmt::format("Invalid params: _meta[\"{}\"] must be an object (the "
                    "client's capabilities for this request, {{}} when none)",
                    kMetaClientCapabilities),
        nullptr});
  }
  meta.client_capabilities = *capabilities;
  if (const Json* info = Member(*given, kMetaClientInfo);
      info && info->is_object()) {
    meta.client_info = *info;
  }
  return meta;
}

Json ServerInfo() {
  return {{"name", "baton"},
          {"title", "baton: background tasks"},
          {"version", kBatonVersion}};
}

Json ModernResult(Json result, std::string_view result_type) {
  if (!result.is_object())
    result = Json::object();
  if (!result.contains("resultType"))
    result["resultType"] = result_type;
  result["_meta"][kMetaServerInfo] = ServerInfo();
  return result;
}

RpcError MissingTasksExtension(std::string_view what) {
  return {
      kMissingRequiredClientCapability,
      fmt::format("Missing required client capability: {} needs the "
                  "tasks extension; declare {{\"extensions\": {{\"{}\": "
                  "{{}}}}}} in _meta[\"{}\"]",
                  what, kTasksExtension, kMetaClientCapabilities),
      {{"requiredCapabilities",
        {{"extensions", {{std::string(kTasksExtension), Json::object()}}}}}}};
}

}  // namespace baton::mcp
