// Named agent profiles: which adapter and command line run an agent, with
// what environment, default model and deadline. Built-in: claude, codex,
// codex-exec, gemini, opencode, qwen, dsh; baton's TOML config file adds
// profiles and overrides built-ins (doc/agents.md, "Configuration"). Holds no
// state: where the file is and when it is read again is
// agent_config_file.h.
#ifndef BATON_DAEMON_AGENT_PROFILES_H_
#define BATON_DAEMON_AGENT_PROFILES_H_

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/model_spec.h"
#include "baton/core/task.h"
#include "baton/ipc/slurm_request.h"
#include "baton/util/result.h"

namespace baton {

// The deadline of an agent task when neither the director, the profile nor
// the config sets one.
inline constexpr std::chrono::minutes kDefaultAgentTimeout{30};

struct AgentProfile {
  std::string name;
  AdapterKind adapter = AdapterKind::kClaude;
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
  // The sandbox its tasks run in unless a delegate names one
  // (doc/sandbox.md); "" = none.
  std::string sandbox;

  // The model providers its CLI reaches (`providers` in the config); a
  // model of another is refused before anything starts (doc/agents.md,
  // "Models and providers"). Empty: any.
  std::vector<std::string> providers;

  // `command` then `args`: what the adapter's flags are appended to.
  std::vector<std::string> ArgvPrefix() const;
  // kInvalidModel naming what it reaches, for a model of another provider.
  Status CheckProvider(const ModelSpec& model) const;
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
  // `[sandbox.NAME]`: sandbox profiles besides (or over) the built-ins
  // (doc/sandbox.md).
  std::vector<SandboxProfile> sandboxes;

  // kInvalidArgument naming the known profiles when there is none.
  Result<AgentProfile> Find(std::string_view name) const;
};

// The built-in profiles and defaults, without any file.
AgentConfig BuiltinAgentConfig();

// The built-ins overlaid with `text`, the TOML of the file at `path` (named
// in errors). Fails, taking nothing from the file, with kInvalidConfig (or
// kInvalidModel for a malformed model) and the message
// "<path>:<line>:<column>: <key>: <what is wrong>".
Result<AgentConfig> ParseAgentConfig(std::string_view text,
                                     const std::string& path);

// Per-agent rules for resuming an ended agent task's session at `now_ms`
// (wall time): kInvalidArgument, saying when to try again, where the CLI
// that wrote the session would lose it. Today one rule: gemini and qwen
// (ACP) cannot load a session in the UTC minute it was last written in.
Status CheckResumeAllowed(const TaskRecord& ended, int64_t now_ms);

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_PROFILES_H_
