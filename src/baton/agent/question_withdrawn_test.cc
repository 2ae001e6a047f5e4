// question_withdrawn: each adapter says when the CLI itself resolved or
// dropped a question it asked, from the real CLIs' transcripts
// (tests/agents/transcripts/*-interrupt-asking, *-cancel-asking).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "baton/agent/acp_adapter.h"
#include "baton/agent/claude_adapter.h"
#include "baton/agent/codex_adapter.h"
#include "tests/support/adapter_sinks.h"

namespace baton {
namespace {

using testing::OfType;
using testing::RecordingSink;

// The index of the first event of `type` (events.size() when none).
size_t IndexOf(const RecordingSink& sink, std::string_view type) {
  for (size_t i = 0; i < sink.events.size(); ++i) {
    if (sink.events[i]["type"] == type)
      return i;
  }
  return sink.events.size();
}

TEST(QuestionWithdrawn, ClaudeCancelsItsOwnRequest) {
  ClaudeAdapter adapter;
  RecordingSink sink =
      testing::ReplayTranscript(adapter, "claude-interrupt-asking");
  auto questions = OfType(sink, "question");
  ASSERT_EQ(questions.size(), 1u);
  auto withdrawn = OfType(sink, "question_withdrawn");
  ASSERT_EQ(withdrawn.size(), 1u);
  EXPECT_EQ(withdrawn[0]["ref"], questions[0]["ref"]);
  EXPECT_EQ(withdrawn[0]["ref"], "7ea2c65b-1add-41da-9ed0-866329ba36ba");
  EXPECT_LT(IndexOf(sink, "question_withdrawn"), IndexOf(sink, "result"));
}

TEST(QuestionWithdrawn, ClaudeAnsweredQuestionIsNotWithdrawn) {
  ClaudeAdapter adapter;
  RecordingSink sink = testing::ReplayTranscript(adapter, "claude-ask");
  EXPECT_EQ(OfType(sink, "question").size(), 1u);
  EXPECT_TRUE(OfType(sink, "question_withdrawn").empty());
  // A cancel without an id, or of something else, says nothing wrong.
  adapter.OnLine(R"({"type":"control_cancel_request"})", sink);
  EXPECT_TRUE(OfType(sink, "question_withdrawn").empty());
}

TEST(QuestionWithdrawn, CodexInterruptWhileAnApprovalIsPending) {
  CodexAdapter adapter;
  RecordingSink sink =
      testing::ReplayTranscript(adapter, "codex-app-interrupt-asking");
  auto questions = OfType(sink, "question");
  ASSERT_EQ(questions.size(), 1u);
  // turn/completed comes before serverRequest/resolved: one withdrawal, at
  // the turn's end, before the result.
  auto withdrawn = OfType(sink, "question_withdrawn");
  ASSERT_EQ(withdrawn.size(), 1u);
  EXPECT_EQ(withdrawn[0]["ref"], 0);
  EXPECT_EQ(withdrawn[0]["reason"], "the turn ended (interrupted)");
  EXPECT_LT(IndexOf(sink, "question_withdrawn"), IndexOf(sink, "result"));
}

TEST(QuestionWithdrawn, CodexResolvedRequestIsReportedWithItsId) {
  // codex-app-tool: answered, then serverRequest/resolved. The adapter
  // cannot tell an answer from a withdrawal (it must rebuild from the
  // stream alone), so it reports it; the runtime ignores a withdrawal of
  // a question that is no longer open.
  CodexAdapter adapter;
  RecordingSink sink = testing::ReplayTranscript(adapter, "codex-app-tool");
  auto withdrawn = OfType(sink, "question_withdrawn");
  ASSERT_EQ(withdrawn.size(), 1u);
  EXPECT_EQ(withdrawn[0]["ref"], 0);
  EXPECT_EQ(withdrawn[0]["reason"], "codex resolved the request");
  EXPECT_LT(IndexOf(sink, "question_withdrawn"), IndexOf(sink, "result"));
  // A resolved id that was never asked, or asked twice: nothing more.
  adapter.OnLine(
      R"({"method":"serverRequest/resolved","params":{"requestId":0}})", sink);
  adapter.OnLine(
      R"({"method":"serverRequest/resolved","params":{"requestId":"x"}})",
      sink);
  EXPECT_EQ(OfType(sink, "question_withdrawn").size(), 1u);
}

TEST(QuestionWithdrawn, CodexStringRequestIds) {
  CodexAdapter adapter;
  RecordingSink sink;
  adapter.Begin({}, "/w", sink);
  adapter.OnLine(
      R"({"method":"item/tool/requestUserInput","id":"req-3","params":{"questions":[{"id":"db","question":"Which?","options":[{"label":"A"}]}]}})",
      sink);
  adapter.OnLine(
      R"({"method":"serverRequest/resolved","params":{"requestId":"req-3"}})",
      sink);
  auto withdrawn = OfType(sink, "question_withdrawn");
  ASSERT_EQ(withdrawn.size(), 1u);
  EXPECT_EQ(withdrawn[0]["ref"], "req-3");
}

TEST(QuestionWithdrawn, AcpCancelWhileAPermissionIsPending) {
  AcpAdapter adapter;
  RecordingSink sink =
      testing::ReplayTranscript(adapter, "gemini-acp-cancel-asking");
  auto questions = OfType(sink, "question");
  ASSERT_EQ(questions.size(), 1u);
  auto withdrawn = OfType(sink, "question_withdrawn");
  ASSERT_EQ(withdrawn.size(), 1u);
  EXPECT_EQ(withdrawn[0]["ref"], questions[0]["ref"]);
  EXPECT_EQ(withdrawn[0]["reason"], "the turn ended (cancelled)");
  EXPECT_LT(IndexOf(sink, "question_withdrawn"), IndexOf(sink, "result"));
}

TEST(QuestionWithdrawn, AcpGrantedPermissionIsNotWithdrawn) {
  // gemini-acp-write: granted, then the tool call completed.
  AcpAdapter adapter;
  RecordingSink sink = testing::ReplayTranscript(adapter, "gemini-acp-write");
  EXPECT_EQ(OfType(sink, "question").size(), 1u);
  EXPECT_TRUE(OfType(sink, "question_withdrawn").empty());
}

}  // namespace
}  // namespace baton
