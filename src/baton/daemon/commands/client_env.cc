#include "baton/daemon/commands/client_env.h"

#include <map>

#include "baton/util/environment.h"

namespace baton {

std::vector<std::string> ClientEnvironment(
    const std::optional<std::vector<std::string>>& base_env) {
  return base_env ? *base_env : CleanEnvironment();
}

EnvLookup ClientEnvLookup(
    const std::optional<std::vector<std::string>>& base_env) {
  std::map<std::string, std::string, std::less<>> env;
  for (const std::string& entry : ClientEnvironment(base_env)) {
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq + 1 < entry.size())
      env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return
      [env = std::move(env)](const char* name) -> std::optional<std::string> {
        auto it = env.find(std::string_view(name));
        return it == env.end() ? std::nullopt
                               : std::optional<std::string>(it->second);
      };
}

}  // namespace baton
