// ACP agent tasks end to end through a real batond, against the scripted
// Agent Client Protocol agent tests/agents/fakes/acp-agent (which speaks
// the lines of tests/agents/transcripts/gemini-acp-*.jsonl), run as a
// profile of the test's config (`adapter = "acp"`, command `acp-agent`).
#include <filesystem>

#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

class AcpAgentTest : public FakeAgentTest {
 protected:
  void SetUp() override {
    FakeAgentTest::SetUp();
    if (IsSkipped())
      return;
    std::ofstream(home_ + "/config.toml")
        << "[agents.fakeacp]\nadapter = \"acp\"\ncommand = [\"acp-agent\"]\n";
  }
};

TEST_F(AcpAgentTest, ToolTextAndCompletion) {
  std::string id = Delegate({"--agent", "fakeacp", "TOOL run it"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_FALSE(task.value("agent_session", "").empty());
  auto tools = EventsOfType(id, "tool");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["name"], "execute");
  EXPECT_EQ(tools[0]["input"], "echo hello-from-tool");
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["text"], "mock final answer");
  EXPECT_EQ(results[0]["usage"]["input_tokens"], 200);
  // Unknown update kinds and notifications make no error.
  EXPECT_TRUE(EventsOfType(id, "error").empty()) << Events(id).dump();
}

TEST_F(AcpAgentTest, PermissionsByNumberLabelAndSkip) {
  std::string allow_dir = work_ + "/allow";
  std::string reject_dir = work_ + "/reject";
  std::filesystem::create_directories(allow_dir);
  std::filesystem::create_directories(reject_dir);
  auto in = [&](const std::string& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"--cwd", dir, "--agent", "fakeacp"});
    return Delegate(args);
  };
  std::string allow = in(allow_dir, {"WRITE a file"});
  std::string reject = in(reject_dir, {"WRITE a file"});
  std::string skip = in(work_, {"WRITE STRINGID a file"});
  for (const auto& id : {allow, reject, skip})
    ASSERT_TRUE(WaitForEvent(id, "question").is_object()) << id;
  auto question = EventsOfType(allow, "question")[0];
  EXPECT_EQ(question["kind"], "permission");
  EXPECT_EQ(question["items"][0]["prompt"], "Allow edit: Writing to out.txt?");
  ASSERT_EQ(question["items"][0]["options"].size(), 3u);
  EXPECT_EQ(EventsOfType(skip, "question")[0]["ref"], "perm-0");
  EXPECT_EQ(Baton({"answer", allow, "2"}, env_).exit_code, 0);  // Allow
  EXPECT_EQ(Baton({"answer", reject, "reject"}, env_).exit_code, 0);
  EXPECT_EQ(Baton({"answer", skip, "skip"}, env_).exit_code, 0);
  EXPECT_EQ(WaitEnd(allow)["status"], "completed");
  EXPECT_TRUE(std::filesystem::exists(allow_dir + "/out.txt"));
  EXPECT_TRUE(Has(Texts(allow), "mock final answer [proceed_once]"));
  EXPECT_EQ(WaitEnd(reject)["status"], "completed");
  EXPECT_FALSE(std::filesystem::exists(reject_dir + "/out.txt"));
  EXPECT_TRUE(Has(Texts(reject), "mock final answer [cancel]"));
  // A skipped permission is a "cancelled" outcome: the prompt stops.
  auto skipped = WaitEnd(skip);
  EXPECT_EQ(skipped["status"], "failed");
  EXPECT_EQ(skipped["detail"], "cancelled");
  EXPECT_FALSE(std::filesystem::exists(work_ + "/out.txt"));
  // Answered questions are not withdrawn afterwards.
  for (const auto& id : {allow, reject, skip})
    EXPECT_TRUE(EventsOfType(id, "question_withdrawn").empty()) << id;
}

TEST_F(AcpAgentTest, SteerIsQueuedAsTheNextPrompt) {
  std::string id = Delegate({"--agent", "fakeacp", "SLOW work"});
  ASSERT_TRUE(WaitForEvent(id, "tool").is_object());
  auto steer = Baton({"send", "--steer", id, "also this"}, env_);
  EXPECT_EQ(steer.exit_code, 0) << steer.err;
  EXPECT_TRUE(Has(steer.out, "queued: this agent cannot be steered"))
      << steer.out;
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 2u) << Events(id).dump();
  EXPECT_EQ(results[0]["text"], "mock final answer");
  EXPECT_EQ(results[1]["text"],
            "mock final answer [history: 1 earlier prompts]");
}

TEST_F(AcpAgentTest, KillWhileAskingCancelsAndWithdrawsTheQuestion) {
  std::string id = Delegate({"--agent", "fakeacp", "WRITE a file"});
  ASSERT_TRUE(WaitForEvent(id, "question").is_object());
  EXPECT_EQ(Status(id, env_)["status"], "waiting");
  auto withdrawn = KillWhileAsking(id);
  ASSERT_TRUE(withdrawn.is_object());
  EXPECT_EQ(withdrawn["reason"], "the turn ended (cancelled)");
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["detail"], "cancelled");
  EXPECT_FALSE(std::filesystem::exists(work_ + "/out.txt"));
}

TEST_F(AcpAgentTest, KillMidTurnCancels) {
  std::string id = Delegate({"--agent", "fakeacp", "SLOW work"});
  ASSERT_TRUE(WaitForEvent(id, "tool").is_object());
  Baton({"kill", "--grace", "5s", id}, env_);
  EXPECT_EQ(WaitEnd(id)["status"], "killed");
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 1u) << Events(id).dump();
  EXPECT_EQ(results[0]["detail"], "cancelled");
}

TEST_F(AcpAgentTest, ResumeByTaskIdAndBySessionSkipsTheReplay) {
  std::string first = Delegate({"--agent", "fakeacp", "hello"});
  auto task = WaitEnd(first);
  ASSERT_EQ(task["status"], "completed");
  std::string session = task.value("agent_session", "");
  ASSERT_FALSE(session.empty());
  std::string second =
      Delegate({"--agent", "fakeacp", "--resume", first, "again"});
  auto resumed = WaitEnd(second);
  EXPECT_EQ(resumed["status"], "completed") << resumed.dump();
  EXPECT_EQ(resumed["agent_session"], session);
  // Only the new turn's text: the replayed history is not shown again.
  auto texts = EventsOfType(second, "text");
  ASSERT_EQ(texts.size(), 1u) << Events(second).dump();
  EXPECT_EQ(texts[0]["text"], "mock final answer [history: 1 earlier prompts]");
  std::string third =
      Delegate({"--agent", "fakeacp", "--resume", session, "once more"});
  EXPECT_EQ(WaitEnd(third)["status"], "completed");
  EXPECT_TRUE(Has(Texts(third), "[history: 2 earlier prompts]"))
      << Texts(third);
  std::string bad =
      Delegate({"--agent", "fakeacp", "--resume", "no-such-session", "x"});
  auto failed = WaitEnd(bad);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_TRUE(Has(failed.value("detail", ""), "resume of no-such-session"))
      << failed.dump();
}

TEST_F(AcpAgentTest, CrashFailureGarbageAndNoCli) {
  std::string crash = Delegate({"--agent", "fakeacp", "CRASH now"});
  std::string fail = Delegate({"--agent", "fakeacp", "FAIL please"});
  std::string garbage = Delegate({"--agent", "fakeacp", "GARBAGE then fine"});
  auto crashed = WaitEnd(crash);
  EXPECT_EQ(crashed["status"], "failed");
  EXPECT_EQ(crashed["detail"],
            "exit code: 3; stderr: fake acp agent: crashed mid-turn");
  auto failed = WaitEnd(fail);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["detail"],
            "Internal error: {\"details\":\"mock upstream failure\"}");
  EXPECT_EQ(WaitEnd(garbage)["status"], "completed");
  auto errors = EventsOfType(garbage, "error");
  ASSERT_EQ(errors.size(), 1u) << Events(garbage).dump();
  EXPECT_TRUE(Has(errors[0]["message"], "unreadable line from the agent"));
  auto missing = Baton({"delegate", "--agent", "fakeacp", "x"},
                       {{"PATH", "/usr/bin:/bin"}});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Has(missing.err,
                  "agent fakeacp: its CLI `acp-agent` is not installed (not "
                  "found on PATH)"))
      << missing.err;
}

}  // namespace
}  // namespace baton::testing
