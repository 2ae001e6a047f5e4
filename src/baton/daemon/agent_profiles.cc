#include "baton/daemon/agent_profiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "baton/core/model_spec.h"
#include "baton/daemon/config_values.h"
#include "baton/util/byte_size.h"
#include "baton/util/duration.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/toml_precheck.h"

namespace baton {
namespace {

using namespace config_values;  // The readers of TOML values.

// A built-in profile: its name, adapter and command line.
AgentProfile Builtin(std::string name, AdapterKind adapter,
                     std::vector<std::string> command,
                     ModelArgs model_args = {}) {
  AgentProfile profile;
  profile.name = std::move(name);
  profile.adapter = adapter;
  profile.command = std::move(command);
  profile.origin = "built-in";
  profile.model_args = model_args;
  return profile;
}

const std::vector<AgentProfile>& BuiltinProfiles() {
  static const std::vector<AgentProfile> profiles = [] {
    std::vector<AgentProfile> list = {
        Builtin("claude", AdapterKind::kClaude, {"claude"}),
        Builtin("codex", AdapterKind::kCodex, {"codex"}),
        // Codex without app-server: `codex exec --json` (doc/agents.md).
        Builtin("codex-exec", AdapterKind::kCodexExec, {"codex"}),
        // DeepSeek Harness takes <provider>/<model>[:<effort>] as one
        // string (doc/agents.md).
        Builtin("dsh", AdapterKind::kCommand, {"dsh", "--profile", "headless"},
                {.style = ModelArgStyle::kSpec}),
        Builtin("gemini", AdapterKind::kAcp, {"gemini", "--acp"}),
        Builtin("opencode", AdapterKind::kAcp, {"opencode", "acp"}),
        Builtin("qwen", AdapterKind::kAcp, {"qwen", "--acp"}),
    };
    // The model providers each CLI reaches by itself; the others (dsh,
    // opencode, qwen) take many, and a config can set `providers` on any.
    for (AgentProfile& profile : list) {
      if (profile.adapter == AdapterKind::kClaude)
        profile.providers = {"anthropic"};
      else if (profile.adapter == AdapterKind::kCodex ||
               profile.adapter == AdapterKind::kCodexExec)
        profile.providers = {"openai"};
      else if (profile.name == "gemini")
        profile.providers = {"google", "gemini"};
    }
    return list;
  }();
  return profiles;
}

bool ValidName(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '-' || c == '_' || c == '.';
         });
}

std::optional<AdapterKind> Adapter(Checker& check, const toml::node& node,
                                   const std::string& key) {
  auto name = String(check, node, key);
  if (!name)
    return std::nullopt;
  auto adapter = EnumFromName<AdapterKind>(*name);
  if (!adapter) {
    check.Fail(node.source(), key,
               fmt::format("unknown adapter '{}'; adapters: {}", *name,
                           fmt::join(EnumNames<AdapterKind>(), ", ")));
  }
  return adapter;
}

// The program and its first arguments: not empty.
std::optional<std::vector<std::string>> Command(Checker& check,
                                                const toml::node& node,
                                                const std::string& key) {
  auto command = StringList(check, node, key);
  if (command && (command->empty() || (*command)[0].empty())) {
    check.Fail(node.source(), key,
               "is empty; give the program to run, e.g. [\"claude\"]");
    return std::nullopt;
  }
  return command;
}

std::optional<std::map<std::string, std::string>> Env(Checker& check,
                                                      const toml::node& node,
                                                      const std::string& key) {
  const auto* table = node.as_table();
  if (!table) {
    check.Fail(node.source(), key,
               "must be a table of strings, e.g. { NAME = \"value\" }, not " +
                   TypeName(node));
    return std::nullopt;
  }
  std::map<std::string, std::string> env;
  for (auto&& [var, value] : *table) {
    std::string var_key = key + "." + std::string(var.str());
    if (var.str().empty() || var.str().find('=') != std::string::npos ||
        var.str().find('\0') != std::string::npos) {
      check.Fail(var.source(), var_key,
                 "is not a valid environment variable name");
      return std::nullopt;
    }
    auto text = String(check, value, var_key);
    if (!text)
      return std::nullopt;
    env[std::string(var.str())] = *text;
  }
  return env;
}

// <provider>/<model>[:<effort>], or "" for the CLI's own.
std::optional<std::string> Model(Checker& check, const toml::node& node,
                                 const std::string& key) {
  auto model = String(check, node, key);
  if (model && !model->empty()) {
    if (auto spec = ParseModelSpec(*model); !spec) {
      check.Fail(node.source(), key, spec.error().message,
                 ErrorCode::kInvalidModel);
      return std::nullopt;
    }
  }
  return model;
}

std::optional<ModelArgStyle> ModelArg(Checker& check, const toml::node& node,
                                      const std::string& key) {
  auto text = String(check, node, key);
  if (!text)
    return std::nullopt;
  auto style = ParseModelArgStyle(*text);
  if (!style) {
    check.Fail(node.source(), key, style.error().message);
    return std::nullopt;
  }
  return *style;
}

// A reader of a command-line flag ("--model"), `example` in its error.
auto Flag(std::string_view example) {
  return [example](Checker& check, const toml::node& node,
                   const std::string& key) -> std::optional<std::string> {
    auto text = String(check, node, key);
    if (text && (!text->starts_with("-") || text->size() < 2)) {
      check.Fail(node.source(), key,
                 fmt::format("must be a flag, e.g. \"{}\" (got \"{}\")",
                             example, *text));
      return std::nullopt;
    }
    return text;
  };
}

// At least 1 MiB, written as a size ("2G").
std::optional<int64_t> Memory(Checker& check, const toml::node& node,
                              const std::string& key) {
  auto text = String(check, node, key);
  if (!text)
    return std::nullopt;
  auto bytes = ParseByteSize(*text);
  if (!bytes || *bytes < (int64_t{1} << 20)) {
    check.Fail(node.source(), key,
               bytes ? "must be at least 1M" : bytes.error().message);
    return std::nullopt;
  }
  return *bytes;
}

// The text a command prints right before its session id.
std::optional<std::string> SessionMarker(Checker& check, const toml::node& node,
                                         const std::string& key) {
  auto text = String(check, node, key);
  if (text && text->empty()) {
    check.Fail(node.source(), key,
               "is empty; give the text the command prints right before its "
               "session id, e.g. \"session: \"");
    return std::nullopt;
  }
  return text;
}

std::optional<std::vector<std::string>> Providers(Checker& check,
                                                  const toml::node& node,
                                                  const std::string& key) {
  auto providers = StringList(check, node, key);
  if (!providers)
    return std::nullopt;
  for (const std::string& provider : *providers) {
    if (provider.empty() || provider.find('/') != std::string::npos) {
      check.Fail(node.source(), key,
                 fmt::format("'{}' is not a provider name, e.g. "
                             "\"anthropic\" (the part of a model before its "
                             "'/')",
                             provider));
      return std::nullopt;
    }
  }
  return providers;
}

// The keys of an [agents.NAME] table, each once: its reader and the field
// of the profile it sets. A key left out keeps the field as it was (the
// built-in's, for a table that changes one).
template <class V>
void ProfileKeys(V& v, AgentProfile& p) {
  v("adapter", p.adapter, Adapter);
  v("command", p.command, Command);
  v("args", p.args, StringList);
  v("env", p.env, Env);
  v("model", p.default_model, Model);
  v("model_arg", p.model_args.style, ModelArg);
  v("model_flag", p.model_args.model_flag, Flag("--model"));
  v("effort_flag", p.model_args.effort_flag, Flag("--effort"));
  v("timeout", p.timeout, Duration);
  v("worktree", p.worktree, Bool);
  v("max_turns", p.max_turns, Count);
  v("max_tokens", p.max_tokens, Count);
  v("max_cost_usd", p.max_cost_usd, Dollars);
  v("memory", p.limits.memory_bytes, Memory);
  v("cpus", p.limits.cpu_millis, CpuMillis);
  v("pids", p.limits.pids, Count);
  v("sandbox", p.sandbox, String);
  v("resume_flag", p.resume_flag, Flag("--resume"));
  v("session_id_after", p.session_id_after, SessionMarker);
  v("providers", p.providers, Providers);
}

// Reads the keys ProfileKeys lists from one table; the first problem
// sticks (Checker), and a key it does not list is refused with the list.
class ProfileKeyReader {
 public:
  ProfileKeyReader(Checker& check, const toml::table& table, std::string prefix)
      : check_(check), table_(table), prefix_(std::move(prefix)) {}

  template <class T, class Read>
  void operator()(std::string_view name, T& field, const Read& read) {
    names_.push_back(name);
    const toml::node* node = table_.get(name);
    if (!node || check_.failed())
      return;
    if (auto value = read(check_, *node, prefix_ + "." + std::string(name)))
      field = std::move(*value);
  }

  void RefuseUnknownKeys() {
    for (auto&& [key, node] : table_) {
      if (std::find(names_.begin(), names_.end(), key.str()) != names_.end())
        continue;
      std::string names;
      for (auto name : names_)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      check_.Fail(key.source(), prefix_ + "." + std::string(key.str()),
                  "unknown key; a profile takes " + names);
      return;
    }
  }

 private:
  Checker& check_;
  const toml::table& table_;
  std::string prefix_;
  std::vector<std::string_view> names_;
};

void ParseProfile(Checker& check, const std::string& name,
                  const toml::table& table, AgentProfile& profile,
                  bool is_new) {
  std::string prefix = "agents." + name;
  ProfileKeyReader reader(check, table, prefix);
  ProfileKeys(reader, profile);
  reader.RefuseUnknownKeys();
  bool has_command = table.contains("command");
  if (check.failed())
    return;
  if (is_new && !table.contains("adapter")) {
    check.Fail(table.source(), prefix,
               fmt::format("a new profile needs an adapter ({})",
                           fmt::join(EnumNames<AdapterKind>(), ", ")));
    return;
  }
  if (profile.resume_flag.empty() != profile.session_id_after.empty()) {
    check.Fail(table.source(), prefix,
               "resume_flag and session_id_after go together: the flag "
               "that takes the session id back, and the text the command "
               "prints right before it");
    return;
  }
  if (!profile.resume_flag.empty() &&
      profile.adapter != AdapterKind::kCommand) {
    check.Fail(table.source(), prefix + ".resume_flag",
               fmt::format("is for the command adapter; the {} adapter "
                           "resumes through its own protocol",
                           EnumName(profile.adapter)));
    return;
  }
  if (profile.model_args.style == ModelArgStyle::kModelAndEffort &&
      profile.model_args.effort_flag.empty()) {
    check.Fail(table.source(), prefix + ".model_arg",
               "\"model+effort\" needs effort_flag, the CLI's flag for the "
               "effort (e.g. effort_flag = \"--effort\")");
    return;
  }
  if (is_new && !has_command) {
    // The built-in of the adapter's own name knows its program.
    auto builtin =
        std::find_if(BuiltinProfiles().begin(), BuiltinProfiles().end(),
                     [&](const AgentProfile& p) {
                       return p.name == EnumName(profile.adapter);
                     });
    if (builtin == BuiltinProfiles().end()) {
      check.Fail(table.source(), prefix,
                 fmt::format("a profile with adapter '{}' needs a command, "
                             "e.g. command = [\"my-agent\", \"--acp\"]",
                             EnumName(profile.adapter)));
    } else {
      profile.command = builtin->command;
    }
  }
}

}  // namespace

Status AgentProfile::CheckProvider(const ModelSpec& model) const {
  if (providers.empty() ||
      std::ranges::find(providers, model.provider) != providers.end()) {
    return {};
  }
  std::string reaches;
  for (const std::string& provider : providers)
    reaches += (reaches.empty() ? "" : ", ") + provider;
  return MakeError(
      ErrorCode::kInvalidModel,
      fmt::format("model '{}' is from provider '{}', which agent '{}' does "
                  "not reach (it takes models of {}); give one of those, "
                  "pick another agent ('baton agents' lists them), or add "
                  "the provider to `providers` of [agents.{}] in the config",
                  model.ToString(), model.provider, name, reaches, name));
}

std::vector<std::string> AgentProfile::ArgvPrefix() const {
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Result<AgentProfile> AgentConfig::Find(std::string_view name) const {
  std::string known;
  for (const auto& profile : profiles) {
    if (profile.name == name)
      return profile;
    known += (known.empty() ? "" : ", ") + profile.name;
  }
  return MakeError(
      ErrorCode::kInvalidArgument,
      fmt::format("unknown agent '{}'; known agents: {}{}", name, known,
                  path.empty() ? "" : " (built-in and from " + path + ")"));
}

AgentConfig BuiltinAgentConfig() {
  AgentConfig config;
  config.profiles = BuiltinProfiles();
  return config;
}

// `[sandbox.NAME]` tables (doc/sandbox.md): network, writable, grant,
// env, required.
void ParseSandboxes(Checker& check, const toml::node& node,
                    std::vector<SandboxProfile>& sandboxes) {
  const auto* tables = node.as_table();
  if (!tables) {
    check.Fail(
        node.source(), "sandbox",
        "must be a table of profiles ([sandbox.NAME]), not " + TypeName(node));
    return;
  }
  for (auto&& [name_key, table_node] : *tables) {
    std::string prefix = "sandbox." + std::string(name_key.str());
    const auto* table = table_node.as_table();
    if (!ValidName(std::string(name_key.str())) || !table) {
      check.Fail(name_key.source(), prefix,
                 "must be a table [sandbox.NAME], NAME of letters, digits, "
                 "'-', '_' or '.'");
      return;
    }
    SandboxProfile profile{.name = std::string(name_key.str())};
    for (auto&& [field_key, value] : *table) {
      std::string field = prefix + "." + std::string(field_key.str());
      std::string_view name = field_key.str();
      if (name == "network") {
        auto text = String(check, value, field);
        if (!text)
          return;
        auto mode = EnumFromName<SandboxNetwork>(*text);
        if (!mode) {
          check.Fail(value.source(), field,
                     fmt::format("'{}' is not a network mode; none (its own "
                                 "loopback only, nothing of the host's) or "
                                 "full",
                                 *text));
          return;
        }
        profile.network = *mode;
      } else if (name == "writable" || name == "grant" || name == "env") {
        auto list = StringList(check, value, field);
        if (!list)
          return;
        for (const std::string& item : *list) {
          bool path_ok = item.starts_with('/') || item.starts_with("~/") ||
                         (name == "grant" && item == "$BATON_HOME");
          if (name != "env" && !path_ok) {
            check.Fail(value.source(), field,
                       fmt::format("'{}' is not an absolute path or one "
                                   "under ~/",
                                   item));
            return;
          }
        }
        (name == "writable" ? profile.writable
         : name == "grant"  ? profile.grant
                            : profile.env) = std::move(*list);
      } else if (name == "required") {
        auto required = Bool(check, value, field);
        if (!required)
          return;
        profile.required = *required;
      } else {
        check.Fail(field_key.source(), field,
                   "unknown key; a sandbox takes network, writable, grant, "
                   "env, required");
        return;
      }
    }
    std::erase_if(sandboxes, [&](const SandboxProfile& known) {
      return known.name == profile.name;
    });
    sandboxes.push_back(std::move(profile));
  }
}

// Each agent profile's `sandbox` names a built-in or a [sandbox.NAME].
void CheckProfileSandboxes(Checker& check, const toml::table& root,
                           const AgentConfig& config) {
  for (const AgentProfile& profile : config.profiles) {
    if (check.failed() || profile.sandbox.empty())
      continue;
    if (auto found = FindSandboxProfile(profile.sandbox, config.sandboxes);
        !found) {
      check.Fail(root.source(), "agents." + profile.name + ".sandbox",
                 found.error().message);
    }
  }
}

// `[executors.slurm]` (doc/slurm.md, "Config").
void ParseExecutors(Checker& check, const toml::node& node,
                    SlurmRequest& slurm) {
  const auto* executors = node.as_table();
  if (!executors) {
    check.Fail(node.source(), "executors",
               "must be a table ([executors.slurm]), not " + TypeName(node));
    return;
  }
  for (auto&& [name_key, executor] : *executors) {
    std::string prefix = "executors." + std::string(name_key.str());
    const auto* table = executor.as_table();
    if (name_key.str() != "slurm" || !table) {
      check.Fail(name_key.source(), prefix,
                 "unknown executor; the one to configure is "
                 "[executors.slurm]");
      return;
    }
    for (auto&& [field_key, value] : *table) {
      std::string field = prefix + "." + std::string(field_key.str());
      std::string_view name = field_key.str();
      if (name == "partition" || name == "account" || name == "shared_dir") {
        auto text = String(check, value, field);
        if (!text)
          return;
        if (name == "shared_dir" && !text->starts_with('/')) {
          check.Fail(value.source(), field,
                     "must be an absolute path (a folder every node sees)");
          return;
        }
        (name == "partition" ? slurm.partition
         : name == "account" ? slurm.account
                             : slurm.shared_dir) = *text;
      } else if (name == "sbatch_args") {
        auto args = StringList(check, value, field);
        if (!args)
          return;
        slurm.sbatch_args = std::move(*args);
      } else if (name == "time_limit") {
        auto limit = Duration(check, value, field);
        if (!limit)
          return;
        slurm.time_limit_s = (limit->count() + 999) / 1000;
      } else {
        check.Fail(field_key.source(), field,
                   "unknown key; [executors.slurm] takes partition, account, "
                   "time_limit, sbatch_args, shared_dir");
        return;
      }
    }
  }
}

Result<AgentConfig> ParseAgentConfig(std::string_view text,
                                     const std::string& path) {
  if (auto hazard = PrecheckTomlText(text)) {
    return MakeError(ErrorCode::kInvalidConfig,
                     fmt::format("{}:{}:{}: {}", path, hazard->line,
                                 hazard->column, hazard->description));
  }
  toml::parse_result parsed = toml::parse(text, path);
  if (!parsed) {
    const toml::parse_error& error = parsed.error();
    return MakeError(
        ErrorCode::kInvalidConfig,
        fmt::format("{}:{}:{}: {}", path, error.source().begin.line,
                    error.source().begin.column, error.description()));
  }
  const toml::table& root = parsed.table();
  AgentConfig config = BuiltinAgentConfig();
  config.path = path;
  Checker check(path);
  std::optional<std::pair<std::string, toml::source_region>> default_agent;
  for (auto&& [key_name, node] : root) {
    std::string key(key_name.str());
    if (key == "agents") {
      const auto* agents = node.as_table();
      if (!agents) {
        check.Fail(node.source(), key,
                   "must be a table of profiles ([agents.NAME]), not " +
                       TypeName(node));
        break;
      }
      for (auto&& [name_key, profile_node] : *agents) {
        std::string name(name_key.str());
        std::string profile_key = "agents." + name;
        if (!ValidName(name)) {
          check.Fail(name_key.source(), profile_key,
                     "a profile name is letters, digits, '-', '_' or '.'");
          break;
        }
        const auto* table = profile_node.as_table();
        if (!table) {
          check.Fail(profile_node.source(), profile_key,
                     "must be a table ([" + profile_key + "]), not " +
                         TypeName(profile_node));
          break;
        }
        auto existing =
            std::find_if(config.profiles.begin(), config.profiles.end(),
                         [&](const AgentProfile& p) { return p.name == name; });
        AgentProfile profile;
        bool is_new = existing == config.profiles.end();
        if (!is_new)
          profile = *existing;
        profile.name = name;
        ParseProfile(check, name, *table, profile, is_new);
        if (check.failed())
          break;
        profile.origin = check.Line(name_key.source()) +
                         (is_new ? "" : " (over the built-in)");
        if (is_new) {
          config.profiles.push_back(std::move(profile));
        } else {
          *existing = std::move(profile);
        }
      }
    } else if (key == "defaults") {
      const auto* defaults = node.as_table();
      if (!defaults) {
        check.Fail(node.source(), key,
                   "must be a table ([defaults]), not " + TypeName(node));
        break;
      }
      for (auto&& [field_key, value] : *defaults) {
        std::string field = "defaults." + std::string(field_key.str());
        if (field_key.str() == "agent") {
          if (auto name = String(check, value, field))
            default_agent.emplace(*name, value.source());
        } else if (field_key.str() == "agent_timeout") {
          if (auto timeout = Duration(check, value, field))
            config.agent_timeout = *timeout;
        } else {
          check.Fail(field_key.source(), field,
                     "unknown key; [defaults] takes agent, agent_timeout");
        }
      }
    } else if (key == "executors") {
      ParseExecutors(check, node, config.slurm);
    } else if (key == "sandbox") {
      ParseSandboxes(check, node, config.sandboxes);
    } else {
      check.Fail(key_name.source(), key,
                 "unknown key; the config takes [defaults], [agents.NAME], "
                 "[sandbox.NAME] and [executors.slurm]");
    }
    if (check.failed())
      break;
  }
  if (!check.failed() && default_agent) {
    auto found = config.Find(default_agent->first);
    if (!found) {
      check.Fail(default_agent->second, "defaults.agent",
                 found.error().message);
    } else {
      config.default_agent = default_agent->first;
    }
  }
  CheckProfileSandboxes(check, root, config);
  if (check.failed())
    return std::unexpected(check.error());
  std::sort(config.profiles.begin(), config.profiles.end(),
            [](const AgentProfile& a, const AgentProfile& b) {
              return a.name < b.name;
            });
  return config;
}

Status CheckResumeAllowed(const TaskRecord& ended, int64_t now_ms) {
  // gemini-cli (0.61.0, and qwen, its fork) names a session's file by the
  // UTC minute: a session/load in the minute the session was written
  // re-creates that file and the history is lost (doc/agent-testing.md).
  // The rule follows the CLI that wrote the session, whatever its profile
  // is called.
  constexpr std::string_view kSessionPerMinuteClis[] = {"gemini", "qwen"};
  if (!ended.spec.agent || ended.spec.agent->adapter != AdapterKind::kAcp ||
      ended.spec.argv.empty()) {
    return {};
  }
  const std::string& program = ended.spec.argv[0];
  std::string name = program.substr(program.rfind('/') + 1);
  if (std::ranges::find(kSessionPerMinuteClis, name) ==
          std::end(kSessionPerMinuteClis) ||
      now_ms / 60000 != ended.ended_ms / 60000) {
    return {};
  }
  std::string id = ended.id.ToString();
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("{} cannot load a session in the UTC minute it "
                               "was last written in (it would lose its "
                               "history); resume {} in {} s",
                               name, id, 60 - (now_ms / 1000) % 60));
}

}  // namespace baton
