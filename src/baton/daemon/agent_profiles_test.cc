#include "baton/daemon/agent_profiles.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "baton/daemon/agent_config_file.h"

namespace baton {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;

AgentConfig ParseProfiles(const std::string& text) {
  auto config = ParseAgentConfig(text, "/cfg/config.toml");
  EXPECT_TRUE(config.has_value()) << config.error().message;
  return config.value_or(AgentConfig{});
}

// The error's code and message for a config that must be refused.
Error Refused(const std::string& text) {
  auto config = ParseAgentConfig(text, "/cfg/config.toml");
  EXPECT_FALSE(config.has_value()) << text;
  return config ? Error{} : config.error();
}

TEST(AgentProfiles, BuiltinsWithoutAFile) {
  AgentConfig config = BuiltinAgentConfig();
  EXPECT_EQ(config.default_agent, "claude");
  EXPECT_EQ(config.agent_timeout, milliseconds(minutes(30)));
  auto gemini = config.Find("gemini");
  ASSERT_TRUE(gemini);
  EXPECT_EQ(gemini->adapter, AdapterKind::kAcp);
  EXPECT_EQ(gemini->ArgvPrefix(),
            (std::vector<std::string>{"gemini", "--acp"}));
  EXPECT_EQ(gemini->origin, "built-in");
  auto missing = config.Find("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "unknown agent 'nope'; known agents: claude, codex, codex-exec, "
            "dsh, gemini, opencode, qwen");
}

// DeepSeek Harness takes the whole spec, effort included (issue 13); a
// profile can say how its CLI takes the model.
TEST(AgentProfiles, HowACliTakesTheModel) {
  auto dsh = BuiltinAgentConfig().Find("dsh");
  ASSERT_TRUE(dsh);
  EXPECT_EQ(dsh->model_args.style, ModelArgStyle::kSpec);
  EXPECT_EQ(BuiltinAgentConfig().Find("gemini")->model_args.style,
            ModelArgStyle::kModel);
  AgentConfig config = ParseProfiles(R"(
[agents.split]
adapter = "command"
command = ["split-agent"]
model_arg = "model+effort"
model_flag = "-m"
effort_flag = "--reasoning"
[agents.dsh]
model_arg = "model"
)");
  auto split = config.Find("split");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->model_args.style, ModelArgStyle::kModelAndEffort);
  EXPECT_EQ(split->model_args.model_flag, "-m");
  EXPECT_EQ(split->model_args.effort_flag, "--reasoning");
  // An override keeps the built-in's command and takes the new style.
  EXPECT_EQ(config.Find("dsh")->model_args.style, ModelArgStyle::kModel);
  EXPECT_EQ(config.Find("dsh")->command,
            (std::vector<std::string>{"dsh", "--profile", "headless"}));
}

TEST(AgentProfiles, ANewProfileAndAnOverride) {
  AgentConfig config = ParseProfiles(R"(
[defaults]
agent = "reviewer"
agent_timeout = "1h"

[agents.reviewer]
adapter = "claude"
command = ["claude"]
args = ["--append-system-prompt", "You review code."]
env = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1", MODE = "review" }
model = "anthropic/claude-sonnet-4-5:high"
timeout = 600

[agents.claude]
model = "anthropic/claude-opus-4-1"
)");
  EXPECT_EQ(config.path, "/cfg/config.toml");
  EXPECT_EQ(config.default_agent, "reviewer");
  EXPECT_EQ(config.agent_timeout, milliseconds(minutes(60)));
  auto reviewer = config.Find("reviewer");
  ASSERT_TRUE(reviewer);
  EXPECT_EQ(reviewer->adapter, AdapterKind::kClaude);
  EXPECT_EQ(reviewer->ArgvPrefix(),
            (std::vector<std::string>{"claude", "--append-system-prompt",
                                      "You review code."}));
  EXPECT_EQ(reviewer->env.at("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"), "1");
  EXPECT_EQ(reviewer->env.at("MODE"), "review");
  EXPECT_EQ(reviewer->default_model, "anthropic/claude-sonnet-4-5:high");
  EXPECT_EQ(reviewer->timeout, milliseconds(600000));
  EXPECT_EQ(reviewer->origin, "/cfg/config.toml:6");
  // An override keeps what it does not set.
  auto claude = config.Find("claude");
  ASSERT_TRUE(claude);
  EXPECT_EQ(claude->command, std::vector<std::string>{"claude"});
  EXPECT_EQ(claude->adapter, AdapterKind::kClaude);
  EXPECT_EQ(claude->default_model, "anthropic/claude-opus-4-1");
  EXPECT_EQ(claude->origin, "/cfg/config.toml:14 (over the built-in)");
  EXPECT_FALSE(claude->timeout);
  // Sorted by name; the untouched built-ins stay.
  std::vector<std::string> names;
  for (const auto& profile : config.profiles)
    names.push_back(profile.name);
  EXPECT_EQ(names, (std::vector<std::string>{"claude", "codex", "codex-exec",
                                             "dsh", "gemini", "opencode",
                                             "qwen", "reviewer"}));
}

TEST(AgentProfiles, SandboxProfilesAndAnAgentsDefaultSandbox) {
  AgentConfig config = ParseProfiles(R"([sandbox.web]
network = "full"
writable = ["~/.npm", "/srv/fixtures"]
grant = ["~/.netrc", "$BATON_HOME"]
env = ["NPM_TOKEN", "NODE_*"]
required = false
[agents.claude]
sandbox = "web"
[agents.codex]
sandbox = "strict"
)");
  ASSERT_EQ(config.sandboxes.size(), 1u);
  const SandboxProfile& web = config.sandboxes[0];
  EXPECT_EQ(web.name, "web");
  EXPECT_EQ(web.network, SandboxNetwork::kFull);
  EXPECT_EQ(web.writable,
            (std::vector<std::string>{"~/.npm", "/srv/fixtures"}));
  EXPECT_EQ(web.grant, (std::vector<std::string>{"~/.netrc", "$BATON_HOME"}));
  EXPECT_EQ(web.env, (std::vector<std::string>{"NPM_TOKEN", "NODE_*"}));
  EXPECT_FALSE(web.required);
  EXPECT_EQ(config.Find("claude")->sandbox, "web");
  EXPECT_EQ(config.Find("codex")->sandbox, "strict");  // A built-in.
  // A [sandbox.NAME] that names no key is the strictest: no network.
  AgentConfig bare = ParseProfiles("[sandbox.bare]\n");
  ASSERT_EQ(bare.sandboxes.size(), 1u);
  EXPECT_EQ(bare.sandboxes[0].network, SandboxNetwork::kNone);
  EXPECT_TRUE(bare.sandboxes[0].required);

  for (const auto& [text, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"[sandbox.x]\nnetwork = \"loopback\"\n",
            "sandbox.x.network: 'loopback' is not a network mode; none"},
           {"[sandbox.x]\nwritable = [\"cache\"]\n",
            "sandbox.x.writable: 'cache' is not an absolute path or one "
            "under ~/"},
           {"[sandbox.x]\ncolour = 1\n",
            "sandbox.x.colour: unknown key; a sandbox takes network, "
            "writable, grant, env, required"},
           {"[agents.claude]\nsandbox = \"nosuch\"\n",
            "agents.claude.sandbox: no sandbox profile 'nosuch'"}}) {
    Error error = Refused(text);
    EXPECT_EQ(error.code, ErrorCode::kInvalidConfig) << text;
    EXPECT_NE(error.message.find(message), std::string::npos)
        << text << " -> " << error.message;
  }
}

TEST(AgentProfiles, TheSlurmExecutorsDefaults) {
  AgentConfig config = ParseProfiles(R"(
[executors.slurm]
partition = "batch"
account = "proj42"
time_limit = "1h30m"
sbatch_args = ["--qos=normal", "--requeue"]
shared_dir = "/shared/baton"
)");
  EXPECT_EQ(config.slurm.partition, "batch");
  EXPECT_EQ(config.slurm.account, "proj42");
  EXPECT_EQ(config.slurm.time_limit_s, 5400);
  EXPECT_EQ(config.slurm.sbatch_args,
            (std::vector<std::string>{"--qos=normal", "--requeue"}));
  EXPECT_EQ(config.slurm.shared_dir, "/shared/baton");
  EXPECT_EQ(BuiltinAgentConfig().slurm, SlurmRequest{});
}

TEST(AgentProfiles, CommandDefaultsToTheAdaptersBuiltinAndTakesAString) {
  AgentConfig config = ParseProfiles(R"(
[agents.quick]
adapter = "codex"
[agents.mine]
adapter = "acp"
command = "/opt/agent/bin/agent"
[agents.empty-env]
adapter = "claude"
env = {}
)");
  EXPECT_EQ(config.Find("quick")->command, std::vector<std::string>{"codex"});
  EXPECT_EQ(config.Find("mine")->command,
            std::vector<std::string>{"/opt/agent/bin/agent"});
  EXPECT_TRUE(config.Find("empty-env")->env.empty());
  // An empty file is the built-ins.
  EXPECT_EQ(ParseProfiles("").profiles.size(),
            BuiltinAgentConfig().profiles.size());
}

TEST(AgentProfiles, EveryMistakeIsOneErrorWithFileLineAndKey) {
  struct Case {
    std::string text;
    ErrorCode code;
    std::string message;
  };
  const ErrorCode kConfig = ErrorCode::kInvalidConfig;
  for (const auto& c : std::vector<Case>{
           {"[agents.x]\nadapter = \"claude\"\ncolour = \"red\"\n", kConfig,
            "/cfg/config.toml:3:1: agents.x.colour: unknown key; a profile "
            "takes adapter, command, args, env, model, model_arg, "
            "model_flag, effort_flag, timeout, worktree"},
           {"[agents.x]\nadapter = \"command\"\ncommand = \"x\"\n"
            "model_arg = \"whole\"\n",
            kConfig,
            "/cfg/config.toml:4:13: agents.x.model_arg: 'whole' is no way to "
            "pass the model; give \"model\""},
           {"[agents.x]\nadapter = \"command\"\ncommand = \"x\"\n"
            "model_arg = \"model+effort\"\n",
            kConfig, "agents.x.model_arg: \"model+effort\" needs effort_flag"},
           {"[agents.x]\nadapter = \"command\"\ncommand = \"x\"\n"
            "effort_flag = \"effort\"\n",
            kConfig,
            "/cfg/config.toml:4:15: agents.x.effort_flag: must be a flag, "
            "e.g. \"--effort\" (got \"effort\")"},
           // Refused before toml++ reads them (util/toml_precheck.h).
           {"[agents.x]\nadapt\xC3\xA9r = \"claude\"\n", kConfig,
            "/cfg/config.toml:2:6: a non-ASCII character outside a quoted "
            "string or comment; quote the key"},
           {"[[[ = \n", kConfig,
            "/cfg/config.toml:1:3: a table header must start with its name"},
           {"[agents.x]\nadapter = \"gpt\"\n", kConfig,
            "/cfg/config.toml:2:11: agents.x.adapter: unknown adapter 'gpt'; "
            "adapters: claude, codex, codex-exec, acp, command"},
           {"[agents.x]\nadapter = \"claude\"\nmodel = \"sonnet\"\n",
            ErrorCode::kInvalidModel, "/cfg/config.toml:3:9: agents.x.model: "},
           {"[agents.x]\nadapter = \"acp\"\ncommand = []\n", kConfig,
            "/cfg/config.toml:3:11: agents.x.command: is empty; give the "
            "program to run, e.g. [\"claude\"]"},
           {"[agents.x]\nadapter = \"acp\"\ncommand = [\"\"]\n", kConfig,
            "agents.x.command: is empty"},
           {"[agents.x]\nadapter = \"claude\"\nargs = [\"a\", 3]\n", kConfig,
            "/cfg/config.toml:3:14: agents.x.args[1]: must be a string, not "
            "an integer"},
           {"[agents.x]\nadapter = 7\n", kConfig,
            "/cfg/config.toml:2:11: agents.x.adapter: must be a string, not "
            "an integer"},
           {"[agents.x]\nadapter = \"claude\"\nenv = { A = 1 }\n", kConfig,
            "agents.x.env.A: must be a string, not an integer"},
           {"[agents.x]\nadapter = \"claude\"\nenv = [\"A=1\"]\n", kConfig,
            "agents.x.env: must be a table of strings"},
           {"[agents.x]\nadapter = \"claude\"\ntimeout = \"soon\"\n", kConfig,
            "/cfg/config.toml:3:11: agents.x.timeout: must be a positive "
            "duration"},
           {"[agents.x]\nadapter = \"claude\"\ntimeout = 0\n", kConfig,
            "agents.x.timeout: must be a positive duration"},
           {"[agents.x]\nadapter = \"claude\"\nworktree = \"yes\"\n", kConfig,
            "/cfg/config.toml:3:12: agents.x.worktree: must be true or false, "
            "not a string"},
           // A fuzz finding: seconds to milliseconds overflowed.
           {"[defaults]\nagent_timeout = 10000000000000000\n", kConfig,
            "/cfg/config.toml:2:17: defaults.agent_timeout: must be a "
            "positive duration"},
           {"[agents.x]\ncommand = [\"x\"]\n", kConfig,
            "/cfg/config.toml:1:1: agents.x: a new profile needs an adapter"},
           {"[agents.x]\nadapter = \"command\"\n", kConfig,
            "agents.x: a profile with adapter 'command' needs a command"},
           {"[agents.\"a b\"]\nadapter = \"claude\"\n", kConfig,
            "agents.a b: a profile name is letters"},
           {"agents = 3\n", kConfig,
            "/cfg/config.toml:1:10: agents: must be a table of profiles"},
           {"[executors.slurm]\nqueue = \"x\"\n", kConfig,
            "/cfg/config.toml:2:1: executors.slurm.queue: unknown key; "
            "[executors.slurm] takes partition, account, time_limit, "
            "sbatch_args, shared_dir"},
           {"[executors.slurm]\nshared_dir = \"rel\"\n", kConfig,
            "executors.slurm.shared_dir: must be an absolute path"},
           {"[executors.pbs]\n", kConfig,
            "executors.pbs: unknown executor; the one to configure is "
            "[executors.slurm]"},
           {"[agent.x]\n", kConfig,
            "/cfg/config.toml:1:2: agent: unknown key; the config takes "
            "[defaults], [agents.NAME], [sandbox.NAME] and "
            "[executors.slurm]"},
           {"[defaults]\nagent = \"nope\"\n", kConfig,
            "/cfg/config.toml:2:9: defaults.agent: unknown agent 'nope'"},
           {"[defaults]\ntimeout = \"5m\"\n", kConfig,
            "/cfg/config.toml:2:1: defaults.timeout: unknown key; [defaults] "
            "takes agent, agent_timeout"},
           {"[agents.x\n", kConfig, "/cfg/config.toml:1:"},
           {"[agents.x]\nadapter = \"claude\"\nadapter = \"codex\"\n", kConfig,
            "/cfg/config.toml:3:"},
       }) {
    Error error = Refused(c.text);
    EXPECT_EQ(error.code, c.code) << c.text << error.message;
    EXPECT_NE(error.message.find(c.message), std::string::npos)
        << c.text << "\n  got: " << error.message;
  }
}

TEST(AgentProfiles, WhereTheFileIs) {
  auto lookup = [](std::map<std::string, std::string> env) -> EnvLookup {
    return [env](const char* name) -> std::optional<std::string> {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt
                             : std::optional<std::string>(it->second);
    };
  };
  ConfigFile file = FindConfigFile(lookup({{"BATON_CONFIG", "/etc/b.toml"},
                                           {"BATON_HOME", "/h"},
                                           {"HOME", "/home/u"}}));
  EXPECT_EQ(file.path, "/etc/b.toml");
  EXPECT_TRUE(file.required);
  file = FindConfigFile(lookup(
      {{"BATON_HOME", "/h"}, {"XDG_CONFIG_HOME", "/x"}, {"HOME", "/home/u"}}));
  EXPECT_EQ(file.path, "/h/config.toml");
  EXPECT_FALSE(file.required);
  file = FindConfigFile(lookup({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/u"}}));
  EXPECT_EQ(file.path, "/x/baton/config.toml");
  // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
  file = FindConfigFile(lookup({{"XDG_CONFIG_HOME", "x"}, {"HOME", "/u"}}));
  EXPECT_EQ(file.path, "/u/.config/baton/config.toml");
  EXPECT_EQ(FindConfigFile(lookup({})).path, "");
}

TEST(AgentProfiles, LoadingTheFile) {
  char dir_template[] = "/tmp/baton-config-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  std::string path = dir + "/config.toml";
  // Missing: the built-ins, unless a variable named the file.
  auto missing = LoadAgentConfig({path, false});
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->path, "");
  auto required = LoadAgentConfig({path, true});
  ASSERT_FALSE(required);
  EXPECT_EQ(required.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(required.error().message.find("(from BATON_CONFIG)"),
            std::string::npos);
  std::ofstream(path) << "[agents.r]\nadapter = \"claude\"\n";
  ::chmod(path.c_str(), 0600);
  auto loaded = LoadAgentConfig({path, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->Find("r")->origin, path + ":1");
  ::chmod(path.c_str(), 0602);
  auto open = LoadAgentConfig({path, false});
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("writable by others"), std::string::npos);
  auto folder = LoadAgentConfig({dir, true});
  ASSERT_FALSE(folder);
  EXPECT_NE(folder.error().message.find("not a regular file"),
            std::string::npos);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(AgentProfiles, AModelOfAProviderTheAgentDoesNotReachIsRefused) {
  AgentConfig builtins = BuiltinAgentConfig();
  auto claude = builtins.Find("claude");
  ASSERT_TRUE(claude);
  EXPECT_TRUE(claude->CheckProvider(*ParseModelSpec("anthropic/claude-x")));
  auto refused = claude->CheckProvider(*ParseModelSpec("openai/gpt-5"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidModel);
  EXPECT_EQ(refused.error().message,
            "model 'openai/gpt-5' is from provider 'openai', which agent "
            "'claude' does not reach (it takes models of anthropic); give one "
            "of those, pick another agent ('baton agents' lists them), or add "
            "the provider to `providers` of [agents.claude] in the config");
  EXPECT_FALSE(builtins.Find("codex-exec")
                   ->CheckProvider(*ParseModelSpec("anthropic/claude-x")));
  // dsh takes any provider; a config says otherwise for a profile.
  EXPECT_TRUE(builtins.Find("dsh")->CheckProvider(*ParseModelSpec("x/y")));
  auto config = ParseAgentConfig(
      "[agents.claude]\nproviders = [\"anthropic\", \"bedrock\"]\n"
      "[agents.dsh]\nproviders = [\"deepseek\"]\n",
      "c.toml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(
      config->Find("claude")->CheckProvider(*ParseModelSpec("bedrock/m")));
  EXPECT_FALSE(config->Find("dsh")->CheckProvider(*ParseModelSpec("x/y")));
  auto bad =
      ParseAgentConfig("[agents.dsh]\nproviders = [\"a/b\"]\n", "c.toml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "c.toml:2:13: agents.dsh.providers: 'a/b' is not a provider name, "
            "e.g. \"anthropic\" (the part of a model before its '/')");
}

// An agent task that ended at 12:00:10 UTC (in ms), run by `program`.
TaskRecord Ended(AdapterKind adapter, const std::string& program) {
  TaskRecord task;
  task.id = TaskId{TaskKind::kAgent, 7};
  task.spec.kind = TaskKind::kAgent;
  task.spec.agent.emplace();
  task.spec.agent->adapter = adapter;
  task.spec.argv = {program, "--acp"};
  task.ended_ms = 1'700'000'000'000 - 1'700'000'000'000 % 60'000 + 10'000;
  return task;
}

TEST(AgentProfiles, GeminiAndQwenCannotResumeInTheMinuteTheSessionWasWritten) {
  TaskRecord gemini = Ended(AdapterKind::kAcp, "gemini");
  int64_t same_minute = gemini.ended_ms + 5'000;  // :15
  auto refused = CheckResumeAllowed(gemini, same_minute);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message,
            "gemini cannot load a session in the UTC minute it was last "
            "written in (it would lose its history); resume agent-7 in 45 s");
  EXPECT_TRUE(CheckResumeAllowed(gemini, gemini.ended_ms + 50'000));  // 1:00
  // The CLI decides, by its program name, not the profile's.
  EXPECT_FALSE(CheckResumeAllowed(Ended(AdapterKind::kAcp, "/opt/bin/qwen"),
                                  same_minute));
  // Other CLIs and adapters keep their sessions apart.
  EXPECT_TRUE(
      CheckResumeAllowed(Ended(AdapterKind::kAcp, "opencode"), same_minute));
  EXPECT_TRUE(
      CheckResumeAllowed(Ended(AdapterKind::kClaude, "gemini"), same_minute));
  TaskRecord no_argv = Ended(AdapterKind::kAcp, "gemini");
  no_argv.spec.argv.clear();
  EXPECT_TRUE(CheckResumeAllowed(no_argv, same_minute));
}

}  // namespace
}  // namespace baton
