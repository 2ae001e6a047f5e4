// Named agent profiles: which adapter and command line run an agent, with
// what environment, default model and deadline. Built-in: claude, codex,
// codex-exec, gemini, opencode, qwen, dsh; baton's TOML config file adds
// profiles and overrides built-ins (doc/agents.md, "Configuration"). Holds no
// state: batond keeps the parse while the file is unchanged
// (agent_config_cache.h).
#ifndef BATON_DAEMON_AGENT_PROFILES_H_
#define BATON_DAEMON_AGENT_PROFILES_H_

#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

// The deadline of an agent task when neither the director, the profile nor
// the config sets one.
inline constexpr std::chrono::minutes kDefaultAgentTimeout{30};

struct AgentProfile {
  std::string name;
  std::string adapter;               // claude, codex, codex-exec, acp, command
  std::vector<std::string> command;  // argv prefix, e.g. {"gemini", "--acp"}
  std::vector<std::string> args;     // After `command`, before the adapter's
  std::map<std::string, std::string> env;  // Over the client's environment.
  std::string default_model;               // "" = the CLI's own
  // The deadline; unset = the config's agent_timeout.
  std::optional<std::chrono::milliseconds> timeout;
  std::string origin;  // "built-in", or "<file>:<line>" of its table.
  // How its CLI takes the model (`model_arg`, `model_flag`, `effort_flag`
  // in the config); the `command` adapter follows it.
  ModelArgs model_args;
  // How a plain command resumes (`resume_flag`, `session_id_after`; the
  // command adapter only): both set, or neither (it cannot resume).
  std::string resume_flag;
  std::string session_id_after;
  // Its tasks run in worktrees of their own unless a delegate says
  // otherwise (doc/agents.md, "Worktrees").
  bool worktree = false;
  // Its tasks' budget unless a delegate gives one (doc/agents.md,
  // "Budgets"); unset = no limit.
  std::optional<int64_t> max_turns;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
  // Its tasks' hard limits unless a delegate gives one (`memory`, `cpus`,
  // `pids`; doc/limits.md); 0 = none.
  ResourceLimits limits;

  // `command` then `args`: what the adapter's flags are appended to.
  std::vector<std::string> ArgvPrefix() const;
};

// The effective agent settings: the built-ins overlaid with the file.
struct AgentConfig {
  std::string path;                    // The file read; "" when none.
  std::vector<AgentProfile> profiles;  // Sorted by name.
  std::string default_agent = "claude";
  std::chrono::milliseconds agent_timeout = kDefaultAgentTimeout;
  // `[executors.slurm]`: what a task on Slurm gets where it asks for
  // nothing else (partition, account, time_limit_s, sbatch_args put before
  // its own, shared_dir; doc/slurm.md).
  SlurmRequest slurm;

  // kInvalidArgument naming the known profiles when there is none.
  Result<AgentProfile> Find(std::string_view name) const;
};

// The built-in profiles and defaults, without any file.
AgentConfig BuiltinAgentConfig();

// Where the config file is. `required` when a variable named the file
// itself: then a missing file is an error, not "no config".
struct ConfigFile {
  std::string path;
  bool required = false;
};

// An environment lookup: the value, or nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;

// $BATON_CONFIG; else $BATON_HOME/config.toml when BATON_HOME is set (a
// self-contained baton, as in tests); else $XDG_CONFIG_HOME/baton/config.toml;
// else $HOME/.config/baton/config.toml. path "" when none applies (no HOME).
ConfigFile FindConfigFile(const EnvLookup& env);

// The built-ins overlaid with `text`, the TOML of the file at `path` (named
// in errors). Fails, taking nothing from the file, with kInvalidConfig (or
// kInvalidModel for a malformed model) and the message
// "<path>:<line>:<column>: <key>: <what is wrong>".
Result<AgentConfig> ParseAgentConfig(std::string_view text,
                                     const std::string& path);

// Reads `file` and parses it. A missing file that is not required gives the
// built-ins; one that is required, unreadable, or writable by others
// (it names commands to run) is kInvalidConfig. batond loads it through
// its AgentConfigCache (agent_config_cache.h).
Result<AgentConfig> LoadAgentConfig(const ConfigFile& file);

// LoadAgentConfig's two halves: the checks on the file's stat (nullopt:
// no file applies, the built-ins do), and the read and parse of a checked
// file.
Result<std::optional<struct stat>> CheckConfigFile(const ConfigFile& file);
Result<AgentConfig> ReadAgentConfig(const std::string& path);

// Per-agent rules for resuming an ended agent task's session at `now_ms`
// (wall time): kInvalidArgument, saying when to try again, where the CLI
// that wrote the session would lose it. Today one rule: gemini and qwen
// (ACP) cannot load a session in the UTC minute it was last written in.
Status CheckResumeAllowed(const TaskRecord& ended, int64_t now_ms);

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_PROFILES_H_
