#include "baton/mcp/protocol_version.h"

namespace baton::mcp {

std::string_view NegotiateProtocolVersion(const nlohmann::json& requested) {
  if (requested.is_string()) {
    const auto& text = requested.get_ref<const std::string&>();
    for (std::string_view version : kSupportedVersions) {
      if (text == version)
        return version;
    }
  }
  return kSupportedVersions.front();
}

}  // namespace baton::mcp
