#include "baton/ipc/event_text.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using Json = nlohmann::json;

Json QuestionEvent() {
  return {{"type", "question"},
          {"seq", 4},
          {"items",
           {{{"prompt", "Which database?"},
             {"header", "DB"},
             {"options",
              {{{"label", "SQLite"}, {"description", "embedded"}},
               {{"label", "Postgres"}}}},
             {"multi_select", true}}}}};
}

TEST(EventText, OneLinePerEventForTheCli) {
  EXPECT_EQ(EventLine({{"type", "text"}, {"seq", 1}, {"text", "hi"}}),
            "   1 text      hi");
  EXPECT_EQ(
      EventLine(
          {{"type", "tool"}, {"seq", 2}, {"name", "Bash"}, {"input", "ls"}}),
      "   2 tool      Bash: ls");
  EXPECT_EQ(EventLine({{"type", "result"},
                       {"seq", 12},
                       {"ok", true},
                       {"detail", "turn ended"},
                       {"text", "Done"}}),
            "  12 result    ok: turn ended — Done");
  EXPECT_EQ(EventLine({{"type", "result"}, {"seq", 3}, {"detail", "x"}}),
            "   3 result    failed: x");
  EXPECT_EQ(EventLine(QuestionEvent()),
            "   4 question  Which database? [1] SQLite [2] Postgres");
  EXPECT_EQ(EventLine({{"type", "question_withdrawn"},
                       {"seq", 5},
                       {"question", 4},
                       {"reason", "resolved"}}),
            "   5 question_withdrawn question 4: resolved");
  // Other types show their fields.
  EXPECT_EQ(EventLine({{"type", "answer"},
                       {"seq", 6},
                       {"at", "t"},
                       {"question", 4},
                       {"answers", {"1"}}}),
            R"(   6 answer    {"answers":["1"],"question":4})");
}

TEST(EventText, TheTranscriptOfEachType) {
  EXPECT_EQ(TranscriptText({{"type", "text"}, {"text", "hi"}}), "hi\n");
  EXPECT_EQ(TranscriptText({{"type", "tool"}, {"input", "ls"}}), "> ?: ls\n");
  EXPECT_EQ(TranscriptText(QuestionEvent()),
            "? Which database?\n  [1] SQLite — embedded\n  [2] Postgres\n");
  EXPECT_EQ(TranscriptText({{"type", "answer"}, {"answers", {"Postgres"}}}),
            "= answered: Postgres\n");
  EXPECT_EQ(TranscriptText({{"type", "answer"},
                            {"answers", Json::parse(R"([["a","b"],"skip"])")}}),
            "= answered: a, b; skipped\n");
  EXPECT_EQ(TranscriptText({{"type", "question_withdrawn"}, {"reason", "r"}}),
            "= withdrawn: r\n");
  EXPECT_EQ(TranscriptText({{"type", "delivered"}, {"text", "next"}}),
            "< followup (delivered): next\n");
  EXPECT_EQ(TranscriptText({{"type", "message"},
                            {"mode", "steer"},
                            {"delivery", "steered"},
                            {"text", "go"}}),
            "< steer (steered): go\n");
  EXPECT_EQ(TranscriptText({{"type", "result"}, {"ok", true}, {"text", "t"}}),
            "[result] t\n");
  EXPECT_EQ(TranscriptText({{"type", "result"}, {"detail", "d"}}),
            "[failed] d\n");
  EXPECT_EQ(TranscriptText({{"type", "error"}, {"message", "m"}}),
            "[error] m\n");
  EXPECT_EQ(TranscriptText({{"type", "note"}, {"text", "n"}}), "[note] n\n");
  EXPECT_EQ(TranscriptText({{"type", "session"}, {"session_id", "s"}}), "");
}

TEST(EventText, AQuestionForWhoAnswersIt) {
  std::vector<QuestionItem> items;
  ASSERT_TRUE(DecodeValue(QuestionEvent()["items"], items, {}, "items"));
  EXPECT_EQ(AskedItemsText("agent-1", items),
            "agent-1 asks (DB): Which database?\n"
            "  [1] SQLite — embedded\n"
            "  [2] Postgres\n"
            "  (several may be chosen: separate them with commas)\n");
  EXPECT_EQ(AskedItemsText("agent-1", {}), "");
}

TEST(EventText, OddShapesReadAsEmptyAndNeverThrow) {
  Json odd = {{"type", "tool"}, {"seq", "7"}, {"name", 3}, {"input", {1}}};
  EXPECT_EQ(EventLine(odd), "   0 tool      : ");
  EXPECT_EQ(TranscriptText(odd), "> ?: \n");
  EXPECT_EQ(EventLine(Json(5)), "   0           {}");
  EXPECT_EQ(TranscriptText(Json("x")), "");
  Json items = Json::array({3, {{"options", "none"}}});
  EXPECT_EQ(TranscriptText({{"type", "question"}, {"items", items}}),
            "? \n? \n");
}

}  // namespace
}  // namespace baton
