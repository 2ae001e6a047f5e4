// Retries of agent tasks (doc/agents.md, "Retries") through the real daemon
// and CLI, with the fake Claude Code CLI (tests/agents/fakes/claude): a
// worker that fails starts again from its brief under the same id, each
// attempt recorded and noted in its events.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

class AgentRetryTest : public FakeAgentTest {};

// Issue 37: a worker that fails once ends completed on its second attempt,
// the two linked: one id, the first attempt in `attempts`, a note in its
// events, its usage the sum of both CLIs'.
TEST_F(AgentRetryTest, AWorkerThatFailsOnceCompletesOnItsSecondAttempt) {
  std::string id = Delegate({"--agent", "claude", "--retry", "2",
                             "--retry-delay", "100ms", "FAILONCE fix it"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_NE(task["detail"].get<std::string>().find("attempt 2 of 3"),
            std::string::npos)
      << task.dump();
  ASSERT_EQ(task["attempts"].size(), 1u) << task.dump();
  EXPECT_FALSE(task["attempts"][0]["detail"].get<std::string>().empty())
      << task.dump();
  // Linked in its events: the second attempt's note, then its result.
  auto notes = EventsOfType(id, "note");
  ASSERT_EQ(notes.size(), 1u) << Events(id).dump();
  EXPECT_EQ(notes[0]["attempt"], 2);
  EXPECT_NE(
      notes[0]["text"].get<std::string>().find("attempt 2 of 3 (attempt 1: "),
      std::string::npos);
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 2u) << Events(id).dump();
  EXPECT_EQ(results[0]["ok"], false);
  EXPECT_EQ(results[1]["ok"], true);
  EXPECT_LT(results[0]["seq"], notes[0]["seq"]);
  EXPECT_LT(notes[0]["seq"], results[1]["seq"]);
  // Each CLI's stream is kept apart, the first under its number.
  std::string dir = home_ + "/tasks/" + id;
  EXPECT_TRUE(std::filesystem::exists(dir + "/stream.1.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/stream.jsonl"));
  // What both attempts spent (each CLI counts from zero).
  auto usages = EventsOfType(id, "usage");
  ASSERT_FALSE(usages.empty());
  EXPECT_GT(task["usage"]["input_tokens"].get<int64_t>(),
            usages.back()["input_tokens"].get<int64_t>())
      << task.dump();
  // The transcript reads as two attempts.
  auto output = Baton({"output", id}, env_).out;
  EXPECT_NE(output.find("attempt 2 of 3"), std::string::npos) << output;
  EXPECT_NE(output.find("turn 1: FAILONCE fix it"), std::string::npos)
      << output;
}

TEST_F(AgentRetryTest, AWorkerThatKeepsFailingFailsAfterItsLastAttempt) {
  std::string id = Delegate({"--agent", "claude", "--retry", "1",
                             "--retry-delay", "100ms", "FAIL always"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_NE(task["detail"].get<std::string>().find("attempt 2 of 2"),
            std::string::npos)
      << task.dump();
  EXPECT_EQ(task["attempts"].size(), 1u) << task.dump();
}

// A budget's stop is a kill: never retried.
TEST_F(AgentRetryTest, ABudgetStopIsNotRetried) {
  std::string id =
      Delegate({"--agent", "claude", "--retry", "2", "--retry-delay", "100ms",
                "--max-turns", "2", "LOOP on"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["attempts"].size(), 0u) << task.dump();
}

TEST_F(AgentRetryTest, BadRetriesAreRefusedAndNothingStarts) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;  // 2: a usage error; 1: refused.
    std::string message;
  };
  for (const Case& c :
       std::vector<Case>{{{"delegate", "--retry", "-1", "x"}, 2, "--retry"},
                         {{"delegate", "--retry", "101", "x"}, 2, "--retry"},
                         {{"delegate", "--retry-delay", "11m", "x"},
                          1,
                          "--retry-delay 11m is longer than 10m"}}) {
    auto result = Baton(c.args, env_);
    EXPECT_EQ(result.exit_code, c.exit_code) << result.err;
    EXPECT_TRUE(Has(result.err, c.message)) << result.err;
  }
  EXPECT_EQ(Baton({"--json", "ls", "--all"}, env_).json()["tasks"].size(), 0u);
}

}  // namespace
}  // namespace baton::testing
