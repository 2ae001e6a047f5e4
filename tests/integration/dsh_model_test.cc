// Plain commands as agents (adapter "command", doc/agents.md, "Plain
// commands"), through a real batond and the CLI. DeepSeek Harness (`dsh`)
// takes `<provider>/<model>[:<effort>]` as one string (issue 13): a
// stand-in `dsh` that prints its arguments shows the whole spec, effort
// included. A command whose profile says how it resumes resumes.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class DshModelTest : public FakeAgentTest {};

TEST_F(DshModelTest, TheWholeModelSpecGoesToDsh) {
  std::string bin = home_ + "/dsh-bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin + "/dsh");
    script << "#!/bin/sh\necho \"args: $*\"\n";
  }
  ASSERT_EQ(::chmod((bin + "/dsh").c_str(), 0755), 0);
  env_["PATH"] = bin + ":" + env_["PATH"];
  std::string id = Delegate(
      {"--agent", "dsh", "--model", "deepseek/deepseek-v4-pro:max", "hi"});
  EXPECT_EQ(WaitEnd(id)["status"], "completed");
  std::string output = Baton({"output", id}, env_).out;
  EXPECT_NE(output.find("args: --profile headless --model "
                        "deepseek/deepseek-v4-pro:max"),
            std::string::npos)
      << output;
}

// A stand-in for a CLI that documents `--resume <session>`: it prints a
// new session id (or the one it resumes) and what it was given.
TEST_F(DshModelTest, APlainCommandWhoseProfileSaysHowResumes) {
  std::string bin = home_ + "/notes-bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin + "/notes-agent");
    script << "#!/bin/sh\n"
              "brief=$(cat)\n"
              "if [ \"$1\" = --resume ]; then echo \"resuming $2\"; "
              "echo \"session: $2, continued\"; else echo \"session: "
              "s-$$ (new)\"; fi\n"
              "echo \"answer to: $brief\"\n";
  }
  ASSERT_EQ(::chmod((bin + "/notes-agent").c_str(), 0755), 0);
  env_["PATH"] = bin + ":" + env_["PATH"];
  UseConfig(R"([agents.notes]
adapter = "command"
command = ["notes-agent"]
resume_flag = "--resume"
session_id_after = "session: "

[agents.mute]
adapter = "command"
command = ["notes-agent"]
)");
  std::string first = Delegate({"--agent", "notes", "--label", "notes", "hi"});
  auto ended = WaitEnd(first);
  EXPECT_EQ(ended["status"], "completed") << ended.dump();
  std::string session = ended["agent_session"];
  ASSERT_TRUE(session.starts_with("s-")) << ended.dump();
  EXPECT_EQ(session.find(' '), std::string::npos) << session;
  // Resumed by task id: the same session, given back with the flag.
  std::string second = Delegate({"--resume", first, "go on"});
  auto resumed = WaitEnd(second);
  EXPECT_EQ(resumed["status"], "completed") << resumed.dump();
  EXPECT_EQ(resumed["agent"]["profile"], "notes");
  EXPECT_EQ(resumed["label"], "notes");
  EXPECT_EQ(resumed["agent_session"], session);
  std::string output = Baton({"output", second}, env_).out;
  EXPECT_NE(output.find("resuming " + session), std::string::npos) << output;
  EXPECT_NE(output.find("answer to: go on"), std::string::npos) << output;
  // A plain command whose profile does not say how cannot resume.
  auto refused = Baton({"delegate", "--cwd", work_, "--agent", "mute",
                        "--resume", "s-1", "go on"},
                       env_);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("mute is a plain command that cannot resume a "
                             "session; give its profile resume_flag and "
                             "session_id_after"),
            std::string::npos)
      << refused.err;
  // The two keys go together.
  UseConfig(R"([agents.half]
adapter = "command"
command = ["notes-agent"]
resume_flag = "--resume"
)");
  auto bad = Baton({"delegate", "--cwd", work_, "--agent", "half", "x"}, env_);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("resume_flag and session_id_after go together"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace baton::testing
