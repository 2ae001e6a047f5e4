// The director's loop (issue 13) through the CLI and a real batond: a
// question is noticed like an end, once, with numbered options; a wait over
// ids returns only for news.
#include <chrono>
#include <thread>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class DirectorLoopTest : public FakeAgentTest {
 protected:
  void SetUp() override {
    FakeAgentTest::SetUp();
    env_["BATON_SESSION"] = "director";
  }

  // `baton ls` in the session until its stderr holds a notice (bounded);
  // that stderr.
  std::string NextNotices() {
    for (int i = 0; i < 200; ++i) {
      auto listed = Baton({"ls"}, env_);
      if (listed.err.find("notice") != std::string::npos)
        return listed.err;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return "";
  }
};

TEST_F(DirectorLoopTest, AQuestionIsNoticedOnceWithNumberedOptions) {
  std::string id = Delegate({"please ASK me"});
  std::string notices = NextNotices();
  EXPECT_NE(notices.find("baton: notice: " + id +
                         " waiting (asks a question)\n  [DB] Which "
                         "database?\n    1. SQLite — embedded\n    2. "
                         "Postgres — server\n  answer: baton answer " +
                         id),
            std::string::npos)
      << notices;
  // Once: the next replies carry nothing.
  EXPECT_EQ(Baton({"ls"}, env_).err.find("notice"), std::string::npos);
  // status and wait show the open question with numbered options.
  auto status = Baton({"status", id}, env_);
  EXPECT_NE(status.out.find("[2] Postgres — server"), std::string::npos)
      << status.out;
  auto waited = Baton({"wait", "--timeout", "5s", id}, env_);
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  EXPECT_NE(waited.out.find("[1] SQLite — embedded"), std::string::npos)
      << waited.out;
  // A question seen by a status is not noticed afterwards.
  ASSERT_EQ(Baton({"answer", id, "2"}, env_).exit_code, 0);
  auto end = NextNotices();
  EXPECT_NE(end.find("baton: notice: " + id + " completed"), std::string::npos)
      << end;
}

TEST_F(DirectorLoopTest, AWaitAgainOnACollectedTaskBlocksUntilAnotherEnds) {
  std::string quick = Run("true", {}, env_);
  std::string slow = Run("sleep 1.5", {}, env_);
  auto first = Baton({"wait", "--timeout", "10s", quick}, env_);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  auto start = steady_clock::now();
  auto again = Baton({"wait", "--timeout", "10s", quick, slow}, env_);
  auto took = steady_clock::now() - start;
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_GE(took, milliseconds(700)) << again.out;
  EXPECT_EQ(again.out, slow + " completed (exit code: 0)\nalready collected: " +
                           quick + "\n");
  // Every one ended and was told: at once, with all of them.
  start = steady_clock::now();
  auto all_told =
      Baton({"--json", "wait", "--timeout", "10s", quick, slow}, env_);
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  EXPECT_EQ(all_told.json()["ended"].size(), 2u) << all_told.out;
  // ... and says that none of them was news, so a loop over the same ids
  // sees why it returned at once.
  EXPECT_EQ(all_told.json()["told_before"],
            nlohmann::json::array({quick, slow}))
      << all_told.out;
  auto text = Baton({"wait", "--timeout", "10s", quick, slow}, env_);
  EXPECT_NE(
      text.out.find("collected before this wait: " + quick + " " + slow + "\n"),
      std::string::npos)
      << text.out;
}

// `baton wait --turn` returns when an agent ends a turn, with its text.
TEST_F(DirectorLoopTest, WaitTurnFollowsAnAgentTurnByTurn) {
  std::string id = Delegate({"SLOW first"});
  WaitForEvent(id, "tool");
  auto sent = Baton({"send", id, "then second"}, env_);
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  auto turn = Baton({"wait", "--turn", "--timeout", "20s", id}, env_);
  EXPECT_EQ(turn.exit_code, 0) << turn.out << turn.err;
  EXPECT_EQ(turn.out, id + " running\n  ended a turn; its final text:\n    "
                           "turn 1: SLOW first\n")
      << turn.err;
  auto end = Baton({"wait", "--timeout", "20s", id}, env_);
  EXPECT_NE(end.out.find(id + " completed"), std::string::npos) << end.out;
}

// What a wait_command prints: the status, then only the last lines of a long
// output.
TEST_F(DirectorLoopTest, AWaitShowsTheStatusThenTheOutputsLastLines) {
  std::string id = Run("seq 1 500 | sed 's/^/line /'; exit 3", {}, env_);
  auto waited = Baton({"wait", "--timeout", "20s", id}, env_);
  EXPECT_EQ(waited.exit_code, 1) << waited.out << waited.err;
  std::string expected = id +
                         " failed (exit code: 3)\n"
                         "  output (last 10 lines of 4392 bytes):\n";
  for (int i = 491; i <= 500; ++i)
    expected += "    line " + std::to_string(i) + "\n";
  EXPECT_EQ(waited.out, expected);
  // Many ended at once: no tails, one line each.
  std::vector<std::string> ids;
  for (int i = 0; i < 11; ++i)
    ids.push_back(Run("echo out", {}, env_));
  std::vector<std::string> args = {"wait", "--all", "--timeout", "20s"};
  args.insert(args.end(), ids.begin(), ids.end());
  auto many = Baton(args, env_);
  EXPECT_EQ(many.out.find("output ("), std::string::npos) << many.out;
}

}  // namespace
}  // namespace baton::testing
