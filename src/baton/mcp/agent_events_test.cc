#include "baton/mcp/agent_events.h"

#include <gtest/gtest.h>

namespace baton::mcp {
namespace {

using Json = nlohmann::json;

OpenQuestion OpenQuestionOf(int64_t seq, const std::string& prompt,
                            bool multi_select = false) {
  QuestionItem item{.prompt = prompt,
                    .header = "DB",
                    .options = {{"SQLite", "embedded"}, {"Postgres", "server"}},
                    .multi_select = multi_select};
  return {.seq = seq, .items = {item}};
}

TEST(AgentEventsTest, ToleratesOddShapes) {
  EXPECT_EQ(LastAgentText({}), "");
  EXPECT_TRUE(ToolNamesUsed({}).empty());
  // Events of other shapes than the documented ones are skipped, never
  // read with a throwing getter.
  std::vector<Json> events = {3,
                              "x",
                              {{"type", 5}},
                              {{"type", "tool"}, {"name", {1, 2}}},
                              {{"type", "tool"}, {"name", "Bash"}},
                              {{"type", "text"}, {"text", {{"a", 1}}}}};
  EXPECT_EQ(LastAgentText(events), "");
  EXPECT_EQ(ToolNamesUsed(events), (std::vector<std::string>{"Bash"}));
}

TEST(AgentEventsTest, LastTextAndToolNames) {
  std::vector<Json> events = {
      {{"type", "tool"}, {"name", "Bash"}, {"input", "ls"}},
      {{"type", "text"}, {"text", "first"}},
      {{"type", "tool"}, {"name", "Edit"}},
      {{"type", "tool"}, {"name", "Bash"}},
      {{"type", "text"}, {"text", "second"}},
      {{"type", "result"}, {"text", "not a text event"}},
  };
  EXPECT_EQ(LastAgentText(events), "second");
  EXPECT_EQ(ToolNamesUsed(events), (std::vector<std::string>{"Bash", "Edit"}));
}

TEST(AgentEventsTest, QuestionsJsonHasTheDocumentedShape) {
  QuestionItem bare{.prompt = "Go on?"};
  bare.options.push_back({.label = "Yes"});
  Json json = QuestionsJson(
      {OpenQuestionOf(4, "Which port?"), {.seq = 6, .items = {bare}}});
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["seq"], 4);
  EXPECT_EQ(json[0]["items"][0]["prompt"], "Which port?");
  EXPECT_EQ(json[0]["items"][0]["header"], "DB");
  EXPECT_EQ(json[0]["items"][0]["options"][1]["label"], "Postgres");
  EXPECT_EQ(json[0]["items"][0]["options"][1]["description"], "server");
  EXPECT_EQ(json[0]["items"][0]["multi_select"], false);
  // Empty header and description are there, as "" (the schema's shape).
  EXPECT_EQ(json[1]["items"][0]["header"], "");
  EXPECT_EQ(json[1]["items"][0]["options"][0]["description"], "");
  EXPECT_TRUE(QuestionsJson({}).is_array());
  EXPECT_TRUE(QuestionsJson({}).empty());
}

TEST(AgentEventsTest, QuestionsTextNumbersOptionsAndSaysHowToAnswer) {
  std::string text =
      PendingQuestionsText("agent-1", {OpenQuestionOf(3, "Which?")});
  EXPECT_NE(text.find("agent-1 asks (DB): Which?"), std::string::npos) << text;
  EXPECT_NE(text.find("[1] SQLite — embedded"), std::string::npos) << text;
  EXPECT_NE(text.find("[2] Postgres — server"), std::string::npos) << text;
  EXPECT_NE(text.find("task_answer {\"task_id\": \"agent-1\", \"answers\": "
                      "[\"1\"]}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("several may be chosen"), std::string::npos) << text;
  EXPECT_EQ(text.find("first open question"), std::string::npos) << text;
  EXPECT_EQ(PendingQuestionsText("agent-1", {}), "");
}

TEST(AgentEventsTest, QuestionsTextForSeveralAndMultiSelect) {
  std::string text = PendingQuestionsText(
      "agent-2",
      {OpenQuestionOf(3, "Which?", true), OpenQuestionOf(5, "And?")});
  EXPECT_NE(text.find("several may be chosen"), std::string::npos) << text;
  EXPECT_NE(text.find("agent-2 asks (DB): And?"), std::string::npos) << text;
  EXPECT_NE(text.find("An answer goes to the first open question."),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace baton::mcp
