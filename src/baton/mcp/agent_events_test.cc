#include "baton/mcp/agent_events.h"

#include <gtest/gtest.h>

namespace baton::mcp {
namespace {

using Json = nlohmann::json;

Json Question(int64_t seq, const std::string& prompt) {
  return {{"type", "question"},
          {"seq", seq},
          {"kind", "ask"},
          {"items",
           {{{"prompt", prompt},
             {"header", "DB"},
             {"options",
              {{{"label", "SQLite"}, {"description", "embedded"}},
               {{"label", "Postgres"}, {"description", "server"}}}},
             {"multi_select", false}}}}};
}

TEST(AgentEventsTest, PendingQuestionsDropAnsweredOnes) {
  Json events = Json::array({
      {{"type", "session"}, {"seq", 1}, {"session_id", "s"}},
      Question(2, "Which database?"),
      {{"type", "answer"}, {"seq", 3}, {"question", 2}, {"answers", {"x"}}},
      Question(4, "Which port?"),
  });
  Json pending = PendingQuestions(events);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0]["seq"], 4);
  EXPECT_EQ(pending[0]["items"][0]["prompt"], "Which port?");
  EXPECT_EQ(pending[0]["items"][0]["options"][1]["label"], "Postgres");
  EXPECT_EQ(pending[0]["items"][0]["multi_select"], false);
  // The protocol's own input is not echoed.
  EXPECT_FALSE(pending[0].contains("kind"));
}

TEST(AgentEventsTest, AnswerWithoutSeqAnswersEverythingBefore) {
  Json events = Json::array(
      {Question(1, "a"), Question(2, "b"), {{"type", "answer"}, {"seq", 3}}});
  EXPECT_TRUE(PendingQuestions(events).empty());
  events.push_back(Question(4, "c"));
  EXPECT_EQ(PendingQuestions(events).size(), 1u);
}

TEST(AgentEventsTest, ToleratesOddShapes) {
  EXPECT_TRUE(PendingQuestions(Json()).empty());
  EXPECT_TRUE(PendingQuestions(Json::object()).empty());
  Json events = Json::array({{{"type", "question"}, {"seq", 1}}, 3, "x"});
  Json pending = PendingQuestions(events);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_TRUE(pending[0]["items"].empty());
  EXPECT_EQ(LastAgentText(Json(5)), "");
  EXPECT_TRUE(ToolNamesUsed(Json()).empty());
}

TEST(AgentEventsTest, LastTextAndToolNames) {
  Json events = Json::array({
      {{"type", "tool"}, {"name", "Bash"}, {"input", "ls"}},
      {{"type", "text"}, {"text", "first"}},
      {{"type", "tool"}, {"name", "Edit"}},
      {{"type", "tool"}, {"name", "Bash"}},
      {{"type", "text"}, {"text", "second"}},
      {{"type", "result"}, {"text", "not a text event"}},
  });
  EXPECT_EQ(LastAgentText(events), "second");
  EXPECT_EQ(ToolNamesUsed(events), (std::vector<std::string>{"Bash", "Edit"}));
}

TEST(AgentEventsTest, QuestionsTextNumbersOptionsAndSaysHowToAnswer) {
  Json pending = PendingQuestions(Json::array({Question(3, "Which?")}));
  std::string text = PendingQuestionsText("agent-1", pending);
  EXPECT_NE(text.find("agent-1 asks (DB): Which?"), std::string::npos) << text;
  EXPECT_NE(text.find("[1] SQLite — embedded"), std::string::npos) << text;
  EXPECT_NE(text.find("[2] Postgres — server"), std::string::npos) << text;
  EXPECT_NE(text.find("task_answer {\"task_id\": \"agent-1\", \"answers\": "
                      "[\"1\"]}"),
            std::string::npos)
      << text;
  EXPECT_EQ(PendingQuestionsText("agent-1", Json::array()), "");
}

}  // namespace
}  // namespace baton::mcp
