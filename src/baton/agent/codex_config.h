// What the two codex adapters (app-server and exec) say to codex alike.
#ifndef BATON_AGENT_CODEX_CONFIG_H_
#define BATON_AGENT_CODEX_CONFIG_H_

#include <string>
#include <vector>

namespace baton {

// The root-level `-c` overrides for a model spec ("openai/gpt-5:high" ->
// -c model="gpt-5" -c model_reasoning_effort="high"), which every codex
// subcommand reads. Codex's efforts are none, minimal, low, medium, high
// and xhigh: "off" is none, "max" its highest. Nothing for an empty or
// invalid spec (checked before anything is spawned).
std::vector<std::string> CodexModelOverrides(const std::string& model_spec);

// `path` relative to `cwd` when it lies below it (codex reports absolute
// paths; the task's own folder is implied).
std::string StripCwd(std::string path, const std::string& cwd);

}  // namespace baton

#endif  // BATON_AGENT_CODEX_CONFIG_H_
