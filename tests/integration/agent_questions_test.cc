// The questions of a tree of agents (doc/agents.md, "Questions of a tree of
// agents") through the real daemon and CLI, with the fake Claude Code CLI:
// a worker's sub-worker (started by a client that runs with the worker's
// BATON_TASK_ID, in a session of its own) asks, and the director, who
// started the worker, sees the question with its chain and answers it.
#include <gtest/gtest.h>

#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

class TreeQuestionsTest : public FakeAgentTest {
 protected:
  std::map<std::string, std::string> As(const std::string& session,
                                        const std::string& task = "") {
    auto env = env_;
    env["BATON_SESSION"] = session;
    if (!task.empty())
      env["BATON_TASK_ID"] = task;
    return env;
  }
};

TEST_F(TreeQuestionsTest, ASubWorkersQuestionReachesItsDirector) {
  // The director's worker, still working while its sub-worker asks.
  std::string worker = Delegate({"--agent", "claude", "SLOW20 work on"},
                                {{"BATON_SESSION", "director"}});
  // What the worker's own `baton mcp` would do: a session of its own, its
  // BATON_TASK_ID in the environment.
  std::string sub =
      Delegate({"--agent", "claude", "--label", "db", "ASK me"},
               {{"BATON_SESSION", "worker-mcp"}, {"BATON_TASK_ID", worker}});
  auto asked =
      Baton({"--json", "wait", "--timeout", "20s", sub}, As("worker-mcp"));
  ASSERT_EQ(asked.json()["ended"][0]["status"], "waiting") << asked.out;
  auto status = Baton({"--json", "status", sub}, As("worker-mcp"));
  EXPECT_EQ(status.json()["task"]["parent"], worker) << status.out;

  // The director sees it, with the chain that asked it.
  auto listed = Baton({"questions"}, As("director"));
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_TRUE(Has(listed.out, sub + " (db) (claude, asked ")) << listed.out;
  EXPECT_TRUE(Has(listed.out, "): " + worker + " > " + sub + "\n"))
      << listed.out;
  EXPECT_TRUE(Has(listed.out, "Which database?")) << listed.out;
  EXPECT_TRUE(Has(listed.out, "[2] Postgres — server")) << listed.out;
  auto json = Baton({"--json", "questions"}, As("director")).json();
  ASSERT_EQ(json["questions"].size(), 1u) << json.dump();
  EXPECT_EQ(json["questions"][0]["chain"],
            nlohmann::json::array({worker, sub}));
  EXPECT_FALSE(
      json["questions"][0]["question"]["at"].get<std::string>().empty());
  // The sub-worker's own session sees it as its own.
  auto own = Baton({"--json", "questions"}, As("worker-mcp")).json();
  ASSERT_EQ(own["questions"].size(), 1u) << own.dump();
  EXPECT_EQ(own["questions"][0]["chain"], nlohmann::json::array({sub}));

  // Another session sees nothing, and cannot answer it.
  EXPECT_EQ(Baton({"questions"}, As("stranger")).out, "no open questions\n");
  auto refused = Baton({"answer", sub, "1"}, As("stranger"));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(Has(refused.err, "belongs to another session")) << refused.err;
  // Sharing its questions gives the director nothing else of it.
  EXPECT_EQ(Baton({"kill", sub}, As("director")).exit_code, 1);

  // The director answers; the sub-worker goes on with the answer.
  auto answered = Baton({"answer", sub, "2"}, As("director"));
  EXPECT_EQ(answered.exit_code, 0) << answered.err;
  auto done =
      Baton({"--json", "wait", "--timeout", "20s", sub}, As("worker-mcp"));
  EXPECT_EQ(done.json()["ended"][0]["status"], "completed") << done.out;
  auto output = Baton({"output", sub}, As("worker-mcp")).out;
  EXPECT_TRUE(Has(output, "[answer: Postgres]")) << output;
  EXPECT_EQ(Baton({"questions"}, As("director")).out, "no open questions\n");
  Baton({"kill", worker}, As("director"));
}

// Only a live task can be named as the parent: an id from an environment
// that outlived its task (or a made-up one) links nothing.
TEST_F(TreeQuestionsTest, AParentMustBeALiveTask) {
  std::string id =
      Delegate({"--agent", "claude", "hello"},
               {{"BATON_SESSION", "a"}, {"BATON_TASK_ID", "agent-77"}});
  auto status = Baton({"--json", "status", id}, As("a"));
  EXPECT_FALSE(status.json()["task"].contains("parent")) << status.out;
}

}  // namespace
}  // namespace baton::testing
