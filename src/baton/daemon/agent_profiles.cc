#include "baton/daemon/agent_profiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "baton/agent/adapter.h"
#include "baton/core/model_spec.h"
#include "baton/util/byte_size.h"
#include "baton/util/duration.h"
#include "baton/util/file_util.h"
#include "baton/util/toml_precheck.h"

// toml++ as a header-only library compiled into this file alone (not
// Debian's libtomlplusplus.so: the binary carries no extra shared library),
// with parse errors as values, not exceptions (HOUSE-STYLE: our code does
// not throw).
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

namespace baton {
namespace {

const std::vector<AgentProfile>& BuiltinProfiles() {
  static const std::vector<AgentProfile> profiles = [] {
    std::vector<AgentProfile> list = {
        {"claude", "claude", {"claude"}, {}, {}, "", {}, "built-in"},
        {"codex", "codex", {"codex"}, {}, {}, "", {}, "built-in"},
        // Codex without app-server: `codex exec --json` (doc/agents.md).
        {"codex-exec", "codex-exec", {"codex"}, {}, {}, "", {}, "built-in"},
        // DeepSeek Harness takes <provider>/<model>[:<effort>] as one
        // string (doc/agents.md).
        {"dsh",
         "command",
         {"dsh", "--profile", "headless"},
         {},
         {},
         "",
         {},
         "built-in",
         {.style = ModelArgStyle::kSpec}},
        {"gemini", "acp", {"gemini", "--acp"}, {}, {}, "", {}, "built-in"},
        {"opencode", "acp", {"opencode", "acp"}, {}, {}, "", {}, "built-in"},
        {"qwen", "acp", {"qwen", "--acp"}, {}, {}, "", {}, "built-in"},
    };
    // The model providers each CLI reaches by itself; the others (dsh,
    // opencode, qwen) take many, and a config can set `providers` on any.
    for (AgentProfile& profile : list) {
      if (profile.adapter == "claude")
        profile.providers = {"anthropic"};
      else if (profile.adapter == "codex" || profile.adapter == "codex-exec")
        profile.providers = {"openai"};
      else if (profile.name == "gemini")
        profile.providers = {"google", "gemini"};
    }
    return list;
  }();
  return profiles;
}

// Collects the first problem; everything after it is skipped.
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }

  void Fail(const toml::source_region& where, std::string_view key,
            std::string_view what, ErrorCode code = ErrorCode::kInvalidConfig) {
    if (error_)
      return;
    error_ =
        Error{code, fmt::format("{}:{}:{}: {}: {}", path_, where.begin.line,
                                where.begin.column, key, what)};
  }

  std::string Line(const toml::source_region& where) const {
    return fmt::format("{}:{}", path_, where.begin.line);
  }

 private:
  const std::string& path_;
  std::optional<Error> error_;
};

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

std::optional<std::string> String(Checker& check, const toml::node& node,
                                  const std::string& key) {
  if (const auto* value = node.as_string())
    return value->get();
  check.Fail(node.source(), key, "must be a string, not " + TypeName(node));
  return std::nullopt;
}

std::optional<bool> Bool(Checker& check, const toml::node& node,
                         const std::string& key) {
  if (const auto* value = node.as_boolean())
    return value->get();
  check.Fail(node.source(), key,
             "must be true or false, not " + TypeName(node));
  return std::nullopt;
}

// A count of at least 1.
std::optional<int64_t> Count(Checker& check, const toml::node& node,
                             const std::string& key) {
  if (const auto* value = node.as_integer(); value && value->get() > 0)
    return value->get();
  check.Fail(node.source(), key, "must be a whole number of at least 1");
  return std::nullopt;
}

// A TOML number, whole or not (2 or 2.5); nullopt for anything else.
std::optional<double> AnyNumber(const toml::node& node) {
  if (const auto* value = node.as_integer())
    return static_cast<double>(value->get());
  if (const auto* real = node.as_floating_point())
    return real->get();
  return std::nullopt;
}

// An amount of US dollars above 0 (2 or 2.5).
std::optional<double> Dollars(Checker& check, const toml::node& node,
                              const std::string& key) {
  std::optional<double> amount = AnyNumber(node);
  if (amount && IsCostBudget(*amount))
    return amount;
  check.Fail(node.source(), key, std::string("must be ") + kCostBudgetRule);
  return std::nullopt;
}

// A share of CPUs: 0.01 to 65536, as thousandths (1.5 = 1500).
std::optional<int64_t> CpuMillis(Checker& check, const toml::node& node,
                                 const std::string& key) {
  std::optional<double> cpus = AnyNumber(node);
  if (cpus && *cpus >= 0.01 && *cpus <= 65536)
    return std::llround(*cpus * 1000);
  check.Fail(node.source(), key,
             "must be a number of CPUs from 0.01 to 65536, e.g. 1.5");
  return std::nullopt;
}

// A list of strings; a lone string is a list of one.
std::optional<std::vector<std::string>> StringList(Checker& check,
                                                   const toml::node& node,
                                                   const std::string& key) {
  if (const auto* value = node.as_string())
    return std::vector<std::string>{value->get()};
  const auto* array = node.as_array();
  if (!array) {
    check.Fail(node.source(), key,
               "must be a list of strings, not " + TypeName(node));
    return std::nullopt;
  }
  std::vector<std::string> list;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    const auto* value = item.as_string();
    if (!value) {
      check.Fail(item.source(), fmt::format("{}[{}]", key, i),
                 "must be a string, not " + TypeName(item));
      return std::nullopt;
    }
    list.push_back(value->get());
  }
  return list;
}

// "30m", "1h30m", or a number of seconds.
std::optional<std::chrono::milliseconds> Duration(Checker& check,
                                                  const toml::node& node,
                                                  const std::string& key) {
  std::optional<std::chrono::milliseconds> duration;
  // The bound ParseDuration keeps (1e15 ms), so that no conversion to
  // milliseconds overflows.
  constexpr int64_t kMaxSeconds = 1'000'000'000'000;
  if (const auto* seconds = node.as_integer()) {
    if (seconds->get() > 0 && seconds->get() <= kMaxSeconds)
      duration = std::chrono::seconds(seconds->get());
  } else if (const auto* text = node.as_string()) {
    if (auto parsed = ParseDuration(text->get()); parsed && parsed->count() > 0)
      duration = *parsed;
  }
  if (!duration) {
    check.Fail(node.source(), key,
               "must be a positive duration such as \"30m\", \"1h30m\" or a "
               "number of seconds");
  }
  return duration;
}

bool ValidName(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '-' || c == '_' || c == '.';
         });
}

// model_arg, model_flag, effort_flag: how the CLI takes the model. False
// when `field` is none of them.
bool ParseModelArgField(Checker& check, std::string_view field,
                        const toml::node& node, const std::string& key,
                        ModelArgs& args) {
  if (field != "model_arg" && field != "model_flag" && field != "effort_flag")
    return false;
  auto text = String(check, node, key);
  if (!text)
    return true;
  if (field == "model_arg") {
    if (auto style = ParseModelArgStyle(*text))
      args.style = *style;
    else
      check.Fail(node.source(), key, style.error().message);
  } else if (!text->starts_with("-") || text->size() < 2) {
    check.Fail(
        node.source(), key,
        fmt::format("must be a flag, e.g. \"{}\" (got \"{}\")",
                    field == "model_flag" ? "--model" : "--effort", *text));
  } else {
    (field == "model_flag" ? args.model_flag : args.effort_flag) = *text;
  }
  return true;
}

void ParseProfile(Checker& check, const std::string& name,
                  const toml::table& table, AgentProfile& profile,
                  bool is_new) {
  std::string prefix = "agents." + name;
  bool has_command = false;
  for (auto&& [key_name, node] : table) {
    std::string key = prefix + "." + std::string(key_name.str());
    std::string_view field = key_name.str();
    if (field == "adapter") {
      auto adapter = String(check, node, key);
      if (adapter && !MakeAdapter(*adapter)) {
        check.Fail(node.source(), key,
                   fmt::format("unknown adapter '{}'; adapters: claude, "
                               "codex, codex-exec, acp, command",
                               *adapter));
      } else if (adapter) {
        profile.adapter = *adapter;
      }
    } else if (field == "command") {
      auto command = StringList(check, node, key);
      if (command && (command->empty() || (*command)[0].empty())) {
        check.Fail(node.source(), key,
                   "is empty; give the program to run, e.g. [\"claude\"]");
      } else if (command) {
        profile.command = std::move(*command);
        has_command = true;
      }
    } else if (field == "args") {
      if (auto args = StringList(check, node, key))
        profile.args = std::move(*args);
    } else if (field == "env") {
      const auto* env = node.as_table();
      if (!env) {
        check.Fail(node.source(), key,
                   "must be a table of strings, e.g. { NAME = \"value\" }, "
                   "not " +
                       TypeName(node));
        continue;
      }
      profile.env.clear();
      for (auto&& [var, value] : *env) {
        std::string var_key = key + "." + std::string(var.str());
        if (var.str().empty() || var.str().find('=') != std::string::npos ||
            var.str().find('\0') != std::string::npos) {
          check.Fail(var.source(), var_key,
                     "is not a valid environment variable name");
          continue;
        }
        if (auto text = String(check, value, var_key))
          profile.env[std::string(var.str())] = *text;
      }
    } else if (field == "model") {
      auto model = String(check, node, key);
      if (!model)
        continue;
      if (!model->empty()) {
        if (auto spec = ParseModelSpec(*model); !spec) {
          check.Fail(node.source(), key, spec.error().message,
                     ErrorCode::kInvalidModel);
          continue;
        }
      }
      profile.default_model = *model;
    } else if (field == "timeout") {
      if (auto timeout = Duration(check, node, key))
        profile.timeout = *timeout;
    } else if (field == "worktree") {
      if (auto worktree = Bool(check, node, key))
        profile.worktree = *worktree;
    } else if (field == "max_turns") {
      if (auto turns = Count(check, node, key))
        profile.max_turns = *turns;
    } else if (field == "max_tokens") {
      if (auto tokens = Count(check, node, key))
        profile.max_tokens = *tokens;
    } else if (field == "max_cost_usd") {
      if (auto dollars = Dollars(check, node, key))
        profile.max_cost_usd = *dollars;
    } else if (field == "memory") {
      auto text = String(check, node, key);
      if (!text)
        continue;
      auto bytes = ParseByteSize(*text);
      if (!bytes || *bytes < (int64_t{1} << 20)) {
        check.Fail(node.source(), key,
                   bytes ? "must be at least 1M" : bytes.error().message);
      } else {
        profile.limits.memory_bytes = *bytes;
      }
    } else if (field == "cpus") {
      if (auto millis = CpuMillis(check, node, key))
        profile.limits.cpu_millis = *millis;
    } else if (field == "pids") {
      if (auto pids = Count(check, node, key))
        profile.limits.pids = *pids;
    } else if (field == "resume_flag") {
      auto flag = String(check, node, key);
      if (flag && (!flag->starts_with("-") || flag->size() < 2)) {
        check.Fail(node.source(), key,
                   fmt::format("must be a flag, e.g. \"--resume\" (got "
                               "\"{}\")",
                               *flag));
      } else if (flag) {
        profile.resume_flag = *flag;
      }
    } else if (field == "session_id_after") {
      auto text = String(check, node, key);
      if (text && text->empty()) {
        check.Fail(node.source(), key,
                   "is empty; give the text the command prints right "
                   "before its session id, e.g. \"session: \"");
      } else if (text) {
        profile.session_id_after = *text;
      }
    } else if (field == "providers") {
      auto providers = StringList(check, node, key);
      if (!providers)
        continue;
      for (const std::string& provider : *providers) {
        if (provider.empty() || provider.find('/') != std::string::npos) {
          check.Fail(node.source(), key,
                     fmt::format("'{}' is not a provider name, e.g. "
                                 "\"anthropic\" (the part of a model "
                                 "before its '/')",
                                 provider));
        }
      }
      profile.providers = std::move(*providers);
    } else if (!ParseModelArgField(check, field, node, key,
                                   profile.model_args)) {
      check.Fail(
          key_name.source(), key,
          "unknown key; a profile takes adapter, command, args, env, "
          "model, model_arg, model_flag, effort_flag, timeout, worktree, "
          "max_turns, max_tokens, max_cost_usd, memory, cpus, pids, "
          "resume_flag, session_id_after, providers");
    }
  }
  if (check.failed())
    return;
  if (profile.resume_flag.empty() != profile.session_id_after.empty()) {
    check.Fail(table.source(), prefix,
               "resume_flag and session_id_after go together: the flag "
               "that takes the session id back, and the text the command "
               "prints right before it");
    return;
  }
  if (!profile.resume_flag.empty() && !profile.adapter.empty() &&
      profile.adapter != "command") {
    check.Fail(table.source(), prefix + ".resume_flag",
               fmt::format("is for the command adapter; the {} adapter "
                           "resumes through its own protocol",
                           profile.adapter));
    return;
  }
  if (profile.model_args.style == ModelArgStyle::kModelAndEffort &&
      profile.model_args.effort_flag.empty()) {
    check.Fail(table.source(), prefix + ".model_arg",
               "\"model+effort\" needs effort_flag, the CLI's flag for the "
               "effort (e.g. effort_flag = \"--effort\")");
    return;
  }
  if (is_new && profile.adapter.empty()) {
    check.Fail(table.source(), prefix,
               "a new profile needs an adapter (claude, codex, "
               "codex-exec, acp or command)");
  } else if (is_new && !has_command) {
    // The built-in of the adapter's own name knows its program.
    auto builtin = std::find_if(
        BuiltinProfiles().begin(), BuiltinProfiles().end(),
        [&](const AgentProfile& p) { return p.name == profile.adapter; });
    if (builtin == BuiltinProfiles().end()) {
      check.Fail(table.source(), prefix,
                 fmt::format("a profile with adapter '{}' needs a command, "
                             "e.g. command = [\"my-agent\", \"--acp\"]",
                             profile.adapter));
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
    } else {
      check.Fail(key_name.source(), key,
                 "unknown key; the config takes [defaults], [agents.NAME] "
                 "and [executors.slurm]");
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
  if (!ended.spec.agent || ended.spec.agent->adapter != "acp" ||
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
