#include "baton/daemon/agent_profiles.h"

#include <fmt/format.h>

namespace baton {
namespace {

const std::vector<AgentProfile>& BuiltinProfiles() {
  static const std::vector<AgentProfile> profiles = {
      {"claude", "claude", {"claude"}, ""},
      {"codex", "codex", {"codex"}, ""},
      {"gemini", "acp", {"gemini", "--acp"}, ""},
      {"opencode", "acp", {"opencode", "acp"}, ""},
      {"qwen", "acp", {"qwen", "--acp"}, ""},
      {"dsh", "command", {"dsh", "--profile", "headless"}, ""},
  };
  return profiles;
}

}  // namespace

Result<AgentProfile> FindAgentProfile(const std::string& name) {
  std::string known;
  for (const auto& profile : BuiltinProfiles()) {
    if (profile.name == name)
      return profile;
    known += (known.empty() ? "" : ", ") + profile.name;
  }
  return MakeError(
      ErrorCode::kInvalidArgument,
      fmt::format("unknown agent '{}'; known agents: {}", name, known));
}

}  // namespace baton
