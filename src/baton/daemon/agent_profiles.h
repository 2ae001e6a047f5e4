// Named agent profiles: which adapter and command line run an agent, and
// its default model. Built-in: claude, codex, gemini, opencode, qwen, dsh.
#ifndef BATON_DAEMON_AGENT_PROFILES_H_
#define BATON_DAEMON_AGENT_PROFILES_H_

#include <string>
#include <vector>

#include "baton/util/result.h"

namespace baton {

struct AgentProfile {
  std::string name;
  std::string adapter;               // claude, codex, acp, command
  std::vector<std::string> command;  // argv prefix, e.g. {"gemini", "--acp"}
  std::string default_model;         // "" = the CLI's own
};

// kNotFound with the list of known names.
Result<AgentProfile> FindAgentProfile(const std::string& name);

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_PROFILES_H_
