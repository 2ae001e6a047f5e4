#include "baton/agent/codex_exec_adapter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/adapter_sinks.h"

namespace baton {
namespace {

using testing::OfType;
using testing::RecordingSink;

// Feeds a transcript of the real `codex exec --json` (0.171.0).
RecordingSink ReplayCodexExec(const std::string& name) {
  CodexExecAdapter adapter;
  return testing::ReplayTranscript(adapter, name);
}

TEST(CodexExecAdapter, ArgvPutsTheBriefOnStdinAndResumesByThread) {
  CodexExecAdapter adapter;
  EXPECT_FALSE(adapter.interactive());
  EXPECT_FALSE(adapter.can_steer());
  AgentSpec spec;
  spec.brief = "-rf looks like a flag";
  EXPECT_EQ(adapter.Argv({"codex"}, spec),
            (std::vector<std::string>{"codex", "exec", "--json",
                                      "--skip-git-repo-check", "-"}));
  spec.model = "openai/gpt-5.5:high";
  spec.resume_session = "01a227bb-2900-7782-a19b-07ef0faba203";
  EXPECT_EQ(adapter.Argv({"/opt/codex"}, spec),
            (std::vector<std::string>{"/opt/codex", "-c", "model=\"gpt-5.5\"",
                                      "-c", "model_reasoning_effort=\"high\"",
                                      "exec", "resume",
                                      "01a227bb-2900-7782-a19b-07ef0faba203",
                                      "--json", "--skip-git-repo-check", "-"}));
  // Begin writes nothing: the brief is the process's stdin file.
  RecordingSink sink;
  adapter.Begin(spec, "/w", sink);
  EXPECT_TRUE(sink.lines.empty());
}

TEST(CodexExecAdapter, ToolTurnOfTheRealCli) {
  RecordingSink sink = ReplayCodexExec("codex-exec-tool");
  auto sessions = OfType(sink, "session");
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0]["session_id"], "01a227bb-2900-7782-a19b-07ef0faba203");
  auto tools = OfType(sink, "tool");
  ASSERT_EQ(tools.size(), 1u);  // item.started and .completed: one tool.
  EXPECT_EQ(tools[0]["name"], "shell");
  EXPECT_EQ(tools[0]["input"], "echo hello-from-tool");
  auto texts = OfType(sink, "text");
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0]["text"], "mock final answer");
  auto results = OfType(sink, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["ok"], true);
  EXPECT_EQ(results[0]["text"], "mock final answer");
  EXPECT_EQ(results[0]["usage"]["input_tokens"], 800);
  EXPECT_EQ(sink.turns_ended, 1);
  EXPECT_TRUE(OfType(sink, "error").empty());
}

TEST(CodexExecAdapter, ResumeOfTheRealCliKeepsTheThread) {
  RecordingSink sink = ReplayCodexExec("codex-exec-resume");
  auto sessions = OfType(sink, "session");
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0]["session_id"], "01a227bb-2900-7782-a19b-07ef0faba203");
  auto results = OfType(sink, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["text"],
            "mock final answer [history: 1 earlier prompts]");
}

TEST(CodexExecAdapter, FailureOfTheRealCliReadsTheApiMessage) {
  CodexExecAdapter adapter;
  RecordingSink sink;
  adapter.Begin({}, "/w", sink);
  std::ifstream in(testing::TranscriptDir() / "codex-exec-fail.jsonl");
  std::string line;
  while (std::getline(in, line))
    adapter.OnLine(line, sink);
  auto errors = OfType(sink, "error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["message"], "mock upstream failure");
  auto results = OfType(sink, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["ok"], false);
  EXPECT_EQ(results[0]["detail"], "mock upstream failure");
  ASSERT_TRUE(adapter.verdict());
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kFailed);
  EXPECT_EQ(adapter.verdict()->second, "mock upstream failure");
  EXPECT_EQ(sink.turns_ended, 1);
}

TEST(CodexExecAdapter, UnknownGarbageAndOtherItems) {
  CodexExecAdapter adapter;
  RecordingSink sink;
  adapter.Begin({}, "/w", sink);
  for (
      const char* line : {
          R"({"type":"thread.started","thread_id":"t-1"})",
          R"({"type":"some.future.event","x":1})",
          R"({"type":"item.completed","item":{"id":"r","type":"reasoning","text":"hmm"}})",
          "not json at all",
          R"(["an","array"])",
          R"({"type":"item.started","item":{"id":"f","type":"file_change","changes":[{"path":"/w/src/a.cc","kind":"update"}],"status":"in_progress"}})",
          R"({"type":"item.completed","item":{"id":"f","type":"file_change","changes":[{"path":"/w/src/a.cc","kind":"update"}],"status":"completed"}})",
          R"({"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"query":"x"},"status":"completed"}})",
          R"({"type":"item.completed","item":{"id":"e","type":"error","message":"a warning"}})",
          R"({"type":"error","message":"Reconnecting... 1/5"})",
      }) {
    adapter.OnLine(line, sink);
  }
  EXPECT_FALSE(adapter.verdict());  // No turn end yet.
  EXPECT_EQ(sink.turns_ended, 0);
  auto tools = OfType(sink, "tool");
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0]["name"], "edit");
  EXPECT_EQ(tools[0]["input"], "src/a.cc");
  EXPECT_EQ(tools[1]["name"], "docs/search");
  auto errors = OfType(sink, "error");
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_NE(errors[0]["message"].get<std::string>().find("not json at all"),
            std::string::npos);
  EXPECT_EQ(errors[2]["message"], "a warning");
  EXPECT_EQ(errors[3]["message"], "Reconnecting... 1/5");
}

TEST(CodexExecAdapter, MessagesAndAnswersAreRefusedClearly) {
  CodexExecAdapter adapter;
  RecordingSink sink;
  for (SendMode mode : {SendMode::kSteer, SendMode::kFollowup}) {
    auto sent = adapter.Send("more", mode, sink);
    ASSERT_FALSE(sent);
    EXPECT_EQ(sent.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(sent.error().message.find("--resume"), std::string::npos);
  }
  EXPECT_FALSE(adapter.Answer(Json::object(), {}, sink));
  adapter.Interrupt(sink);
  EXPECT_TRUE(sink.lines.empty());
}

// Usage (doc/agents.md, "Budgets") from the real CLI's turn.completed.
TEST(CodexExecAdapter, UsageOfTheRealCliTurn) {
  RecordingSink sink = ReplayCodexExec("codex-exec-tool");
  ASSERT_EQ(sink.usages.size(), 1u);
  EXPECT_EQ(sink.usages[0], Json::parse(R"({"type":"usage","input_tokens":800,
                            "output_tokens":80,"turns":1})"));
}

}  // namespace
}  // namespace baton
