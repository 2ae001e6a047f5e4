#include "baton/agent/json_rpc_util.h"

#include <fmt/format.h>

#include <random>

namespace baton {

std::string MethodOfId(const nlohmann::json& id) {
  if (!id.is_string())
    return "";
  const std::string& text = id.get_ref<const std::string&>();
  size_t hash = text.find('#');
  return hash == std::string::npos ? "" : text.substr(0, hash);
}

std::string RequestIdPrefix() {
  // Seeded from the system: a rebuilt adapter must not repeat the ids of
  // the process it replaces.
  std::random_device device;
  return fmt::format("{:08x}", device());
}

}  // namespace baton
