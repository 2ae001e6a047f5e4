// Agent profiles from baton's TOML config through the CLI against a real
// batond: a profile's command, args, env, model and the default deadline
// reach the agent (a wrapper around the scripted claude records them); a
// bad config is one clear error and changes nothing.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class AgentConfigTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (!PutFakeAgentsOnPath(env_))
      GTEST_SKIP() << "python3 (for the fake agent CLIs) is not installed";
    // A wrapper that records its argv and two variables, then runs the
    // scripted claude with the same arguments.
    wrapper_ = home_ + "/wrapper";
    std::ofstream(wrapper_)
        << "#!/bin/sh\n"
        << "printf '%s\\n' \"$@\" > " << home_ << "/argv\n"
        << "echo \"both=$BATON_T_BOTH client=$BATON_T_CLIENT\" > " << home_
        << "/env\n"
        << "exec claude \"$@\"\n";
    ::chmod(wrapper_.c_str(), 0700);
  }

  void WriteConfig(const std::string& text) {
    std::ofstream(home_ + "/config.toml") << text;
    ::chmod((home_ + "/config.toml").c_str(), 0600);
  }

  std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::map<std::string, std::string> env_;
  std::string wrapper_;
};

TEST_F(AgentConfigTest, AProfileFromTheConfigRunsTheAgent) {
  WriteConfig(R"([defaults]
agent_timeout = "45m"

[agents.reviewer]
adapter = "claude"
command = [")" +
              wrapper_ + R"("]
args = ["--append-system-prompt", "You review code."]
env = { BATON_T_BOTH = "from-profile" }
model = "anthropic/claude-sonnet-4-5:high"
)");
  auto env = env_;
  env["BATON_T_BOTH"] = "from-client";
  env["BATON_T_CLIENT"] = "from-client";
  auto started = Baton({"delegate", "--agent", "reviewer", "hello"}, env);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string id = started.out.substr(0, started.out.find('\n'));
  auto waited = Baton({"--json", "wait", "--timeout", "20s", id}, env);
  auto task = waited.json()["ended"][0];
  EXPECT_EQ(task["status"], "completed") << waited.out << waited.err;
  EXPECT_EQ(task["timeout_ms"], 45 * 60 * 1000);
  EXPECT_EQ(task["argv"][0], wrapper_);
  std::string argv = Slurp(home_ + "/argv");
  EXPECT_NE(argv.find("--append-system-prompt\nYou review code.\n-p\n"),
            std::string::npos)
      << argv;
  EXPECT_NE(argv.find("--model\nclaude-sonnet-4-5\n--effort\nhigh\n"),
            std::string::npos)
      << argv;
  // The profile's env wins over the client's; the rest is the client's.
  EXPECT_EQ(Slurp(home_ + "/env"), "both=from-profile client=from-client\n");
  EXPECT_NE(Baton({"output", id}, env).out.find("turn 1: hello"),
            std::string::npos);
  // --model and --timeout win over the profile and the defaults.
  auto again = Baton({"--json", "delegate", "--agent", "reviewer", "--model",
                      "anthropic/claude-opus-4-1", "--timeout", "5m", "hi"},
                     env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json()["task"]["timeout_ms"], 5 * 60 * 1000);
  Baton({"wait", "--timeout", "20s", again.json()["task"]["id"]}, env);
  EXPECT_NE(Slurp(home_ + "/argv").find("--model\nclaude-opus-4-1\n"),
            std::string::npos);

  auto listed = Baton({"--json", "agents"}, env_);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  nlohmann::json doc = listed.json();
  EXPECT_EQ(doc["config"], home_ + "/config.toml");
  bool found = false;
  for (const auto& agent : doc["agents"]) {
    if (agent["name"] == "reviewer") {
      found = true;
      EXPECT_EQ(agent["origin"], home_ + "/config.toml:4");
      EXPECT_EQ(agent["env"], nlohmann::json::array({"BATON_T_BOTH"}));
      EXPECT_EQ(agent["timeout_ms"], 45 * 60 * 1000);
    }
    if (agent["name"] == "claude") {
      EXPECT_EQ(agent["origin"], "built-in");
    }
  }
  EXPECT_TRUE(found) << listed.out;
  auto text = Baton({"agents"}, env_);
  // The columns line up: each profile's row starts its fields where the
  // header's do.
  std::istringstream rows(text.out);
  std::string header;
  std::vector<size_t> starts;
  for (std::string row; std::getline(rows, row);) {
    if (row.find("NAME") != std::string::npos) {
      header = row;
      for (const char* column : {"ADAPTER", "MODEL", "TIMEOUT", "COMMAND"})
        starts.push_back(row.find(column));
      continue;
    }
    if (header.empty() || row.size() < 3 || row[2] == ' ')
      continue;  // Before the header, or a row's "from" line.
    for (size_t start : starts) {
      ASSERT_LT(start, row.size()) << row;
      EXPECT_EQ(row[start - 1], ' ') << row << "\n" << header;
      EXPECT_NE(row[start], ' ') << row << "\n" << header;
    }
  }
  EXPECT_EQ(starts.size(), 4u) << text.out;
  EXPECT_NE(text.out.find("BATON_T_BOTH=... " + wrapper_ +
                          " --append-system-prompt 'You review code.'"),
            std::string::npos)
      << text.out;
}

TEST_F(AgentConfigTest, TheDefaultAgentAndAnOverriddenBuiltin) {
  WriteConfig(R"([defaults]
agent = "mine"
[agents.mine]
adapter = "claude"
command = [")" +
              wrapper_ + R"("]
[agents.claude]
model = "anthropic/claude-haiku-4-5"
)");
  auto started = Baton({"--json", "delegate", "hello"}, env_);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  auto task = started.json()["task"];
  EXPECT_EQ(task["argv"][0], wrapper_);
  EXPECT_EQ(task["timeout_ms"], 30 * 60 * 1000);
  Baton({"wait", "--timeout", "20s", task["id"]}, env_);
  auto claude = Baton({"--json", "delegate", "--agent", "claude", "x"}, env_);
  ASSERT_EQ(claude.exit_code, 0) << claude.err;
  auto argv = claude.json()["task"]["argv"];
  EXPECT_EQ(argv[0], "claude");
  EXPECT_NE(argv.dump().find("\"--model\",\"claude-haiku-4-5\""),
            std::string::npos)
      << argv;
  Baton({"wait", "--timeout", "20s", claude.json()["task"]["id"]}, env_);
}

TEST_F(AgentConfigTest, ABadConfigIsOneClearErrorAndChangesNothing) {
  ASSERT_EQ(Baton({"daemon", "start"}).exit_code, 0);
  auto pids = DaemonPids();
  std::string file = home_ + "/config.toml";
  struct Case {
    std::string config;
    std::string code;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {"[agents.reviewer]\nadapter = \"claude\"\ncolour = \"red\"\n",
            "invalid_config",
            file + ":3:1: agents.reviewer.colour: unknown key"},
           {"[agents.reviewer]\nadapter = \"claude\"\nmodel = \"sonnet\"\n",
            "invalid_model", file + ":3:9: agents.reviewer.model: "},
           {"[agents.reviewer]\nadapter = \"gpt\"\n", "invalid_config",
            file + ":2:11: agents.reviewer.adapter: unknown adapter 'gpt'"},
           {"[agents.reviewer]\nadapter = \"acp\"\ncommand = []\n",
            "invalid_config",
            file + ":3:11: agents.reviewer.command: is empty"},
           {"[agents.reviewer\n", "invalid_config", file + ":1:"},
       }) {
    WriteConfig(c.config);
    // Any agent, even a built-in the file does not touch: half a config
    // is never used.
    auto refused =
        Baton({"--json", "delegate", "--agent", "claude", "x"}, env_);
    EXPECT_EQ(refused.exit_code, 1) << c.config;
    EXPECT_EQ(refused.json()["error"]["code"], c.code) << refused.out;
    std::string message = refused.json()["error"]["message"];
    EXPECT_EQ(message.find(c.message), 0u) << message;
    auto listed = Baton({"agents"}, env_);
    EXPECT_EQ(listed.exit_code, 1);
    EXPECT_NE(listed.err.find(c.message), std::string::npos) << listed.err;
  }
  // A file named by BATON_CONFIG must exist.
  auto env = env_;
  env["BATON_CONFIG"] = home_ + "/missing.toml";
  auto missing = Baton({"delegate", "x"}, env);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("missing.toml (from BATON_CONFIG)"),
            std::string::npos)
      << missing.err;
  // Nothing was started; batond never died.
  auto all = Baton({"--json", "ls", "--all"}, env_).json();
  EXPECT_EQ(all["tasks"].size(), 0u) << all;
  EXPECT_EQ(DaemonPids(), pids);
  // The file is read afresh: once fixed, it applies without a restart.
  WriteConfig("[agents.reviewer]\nadapter = \"claude\"\ncommand = \"" +
              wrapper_ + "\"\n");
  auto fixed = Baton({"--json", "delegate", "--agent", "reviewer", "x"}, env_);
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.json()["task"]["argv"][0], wrapper_);
  Baton({"wait", "--timeout", "20s", fixed.json()["task"]["id"]}, env_);
}

}  // namespace
}  // namespace baton::testing
