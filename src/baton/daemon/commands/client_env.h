// The environment a client sent with its request (`base_env`), as batond
// uses it: for the task to inherit, and to find the client's config file.
// A client that sent none gets the clean environment (util/environment.h),
// never batond's own, which belongs to whichever client started batond.
#ifndef BATON_DAEMON_COMMANDS_CLIENT_ENV_H_
#define BATON_DAEMON_COMMANDS_CLIENT_ENV_H_

#include <optional>
#include <string>
#include <vector>

#include "baton/daemon/agent_config_file.h"

namespace baton {

// `base_env`, or the clean environment when the client sent none.
std::vector<std::string> ClientEnvironment(
    const std::optional<std::vector<std::string>>& base_env);

// Look-ups of names in that environment.
EnvLookup ClientEnvLookup(
    const std::optional<std::vector<std::string>>& base_env);

}  // namespace baton

#endif  // BATON_DAEMON_COMMANDS_CLIENT_ENV_H_
