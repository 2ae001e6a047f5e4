// A question Claude Code withdraws itself (control_cancel_request when it
// is interrupted while asking, transcript claude-interrupt-asking), end to
// end through batond with the scripted claude (tests/agents/fakes/claude).
// The codex and ACP cases are in agent_codex_test.cc and agent_acp_test.cc.
#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

class ClaudeWithdrawTest : public FakeAgentTest {};

TEST_F(ClaudeWithdrawTest, KillWhileAskingWithdrawsTheQuestion) {
  std::string id = Delegate({"--agent", "claude", "please ASK me"});
  auto question = WaitForEvent(id, "question");
  ASSERT_TRUE(question.is_object());
  EXPECT_EQ(Status(id, env_)["status"], "waiting");
  auto withdrawn = KillWhileAsking(id);
  ASSERT_TRUE(withdrawn.is_object());
  EXPECT_EQ(withdrawn["ref"], question["ref"]);
  EXPECT_EQ(withdrawn["question"], question["seq"]);
  EXPECT_EQ(withdrawn["reason"], "claude withdrew its request");
  auto output = Baton({"output", id}, env_).out;
  EXPECT_NE(output.find("= withdrawn: claude withdrew its request"),
            std::string::npos)
      << output;
  EXPECT_TRUE(EventsOfType(id, "answer").empty());
  auto events = Baton({"events", id}, env_).out;
  EXPECT_NE(events.find("question_withdrawn question " +
                        std::to_string(question["seq"].get<int>()) +
                        ": claude withdrew its request"),
            std::string::npos)
      << events;
}

}  // namespace
}  // namespace baton::testing
