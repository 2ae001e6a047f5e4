#include "baton/agent/claude_adapter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/adapter_sinks.h"

namespace baton {
namespace {

using testing::RecordingSink;

// Lines as the real CLI printed them (doc/agent-testing.md, "Claude Code").
constexpr const char* kInit =
    R"j({"type":"system","subtype":"init","cwd":"/w","session_id":"72755031-5623","tools":["Bash"],"model":"claude-sonnet-4-5"})j";
constexpr const char* kText =
    R"j({"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"I will run a command."}]},"session_id":"72755031-5623"})j";
constexpr const char* kToolUse =
    R"j({"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo hello-from-tool","description":"Print"}}]},"session_id":"72755031-5623"})j";
constexpr const char* kResult =
    R"j({"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Done: mock final answer.","session_id":"72755031-5623","total_cost_usd":0.00117,"usage":{"input_tokens":240,"output_tokens":30}})j";
constexpr const char* kAsk =
    R"j({"type":"control_request","request_id":"d4fa","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which database should I use?","header":"Database","options":[{"label":"SQLite","description":"embedded"},{"label":"Postgres","description":"server"}],"multiSelect":false}]},"tool_use_id":"toolu_01MOCKASK","requires_user_interaction":true}})j";
constexpr const char* kPermission =
    R"j({"type":"control_request","request_id":"f73b","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/w/out.txt","content":"hi\n"},"tool_use_id":"toolu_01MOCKWRITE"}})j";

TEST(ClaudeAdapter, ArgvSpeaksStreamJsonWithModelEffortAndResume) {
  ClaudeAdapter adapter;
  AgentSpec spec;
  spec.model = "anthropic/claude-sonnet-4-5:high";
  spec.resume_session = "sess-1";
  auto argv = adapter.Argv({"claude"}, spec);
  std::string joined;
  for (auto& a : argv)
    joined += a + " ";
  EXPECT_EQ(joined,
            "claude -p --output-format stream-json --input-format stream-json "
            "--verbose --permission-prompt-tool stdio --model "
            "claude-sonnet-4-5 --effort high --resume sess-1 ");
  spec.model = "anthropic/claude-haiku:off";  // No flag for off.
  spec.resume_session.clear();
  EXPECT_EQ(adapter.Argv({"claude"}, spec).back(), "claude-haiku");
}

TEST(ClaudeAdapter, BriefGoesAsAStreamJsonUserLine) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = "fix the tests";
  adapter.Begin(spec, "/w", sink);
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(sink.lines[0]["type"], "user");
  EXPECT_EQ(sink.lines[0]["message"]["content"], "fix the tests");
}

TEST(ClaudeAdapter, NormalizesATurn) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  for (const char* line :
       {kInit, kText, kToolUse, "{\"type\":\"new_thing\"}", kResult}) {
    adapter.OnLine(line, sink);
  }
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0]["type"], "session");
  EXPECT_EQ(sink.events[0]["session_id"], "72755031-5623");
  EXPECT_EQ(sink.events[1]["text"], "I will run a command.");
  EXPECT_EQ(sink.events[2]["type"], "tool");
  EXPECT_EQ(sink.events[2]["name"], "Bash");
  EXPECT_EQ(sink.events[2]["input"], "echo hello-from-tool");
  EXPECT_EQ(sink.events[3]["type"], "result");
  EXPECT_EQ(sink.events[3]["ok"], true);
  EXPECT_EQ(sink.events[3]["text"], "Done: mock final answer.");
  EXPECT_DOUBLE_EQ(sink.events[3]["cost_usd"].get<double>(), 0.00117);
  EXPECT_EQ(sink.turns_ended, 1);
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kCompleted);
}

TEST(ClaudeAdapter, ErrorResultsAreFailuresWithTheirReason) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  adapter.OnLine(
      R"j({"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"]})j",
      sink);
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kFailed);
  EXPECT_EQ(adapter.verdict()->second, "max-turns");
  adapter.OnLine(
      R"j({"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found"]})j",
      sink);
  EXPECT_EQ(adapter.verdict()->second, "No conversation found");
}

TEST(ClaudeAdapter, GarbageIsAnErrorEventNotACrash) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  adapter.OnLine("Segmentation fault (core dumped)", sink);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0]["type"], "error");
}

// Found by fuzz_adapter_claude (fuzz/corpus/adapter_claude/): lines of the
// right type with members missing or of another type threw from nlohmann's
// value() inside batond. A newer CLI may send any shape: each reads as
// absent, and the adapter goes on.
TEST(ClaudeAdapter, MissingOrMistypedMembersAreAbsentNotThrown) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  for (
      const char* line : {
          R"({"type":"assistant"})",
          R"({"type":7})",
          R"({"type":"assistant","message":{"content":[1,"x",{"type":3}]}})",
          R"({"type":"assistant","message":{"content":{"type":"text"}}})",
          R"({"type":"control_request","request":[]})",
          R"({"type":"control_request","request":{"subtype":"can_use_tool","input":{"questions":[{"options":7}]}}})",
          R"({"type":"result","subtype":"error","errors":"no","num_turns":"2"})",
      }) {
    adapter.OnLine(line, sink);
  }
  adapter.OnLine(kText, sink);
  ASSERT_FALSE(sink.events.empty());
  EXPECT_EQ(sink.events.back()["type"], "text");
  EXPECT_EQ(sink.events.back()["text"], "I will run a command.");
}

TEST(ClaudeAdapter, AskUserQuestionBecomesATypedQuestionAndTheAnswerAllows) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  adapter.OnLine(kAsk, sink);
  ASSERT_EQ(sink.events.size(), 1u);
  const Json& question = sink.events[0];
  EXPECT_EQ(question["kind"], "ask");
  EXPECT_EQ(question["items"][0]["prompt"], "Which database should I use?");
  EXPECT_EQ(question["items"][0]["options"][1]["label"], "Postgres");
  ItemAnswer answer;
  answer.labels = {"SQLite"};
  ASSERT_TRUE(adapter.Answer(question, {answer}, sink));
  ASSERT_EQ(sink.lines.size(), 1u);
  const Json& response = sink.lines[0]["response"];
  EXPECT_EQ(response["request_id"], "d4fa");
  EXPECT_EQ(response["response"]["behavior"], "allow");
  EXPECT_EQ(response["response"]["updatedInput"]["answers"]
                    ["Which database should I use?"],
            "SQLite");
}

TEST(ClaudeAdapter, PermissionPromptAllowOrDeny) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  adapter.OnLine(kPermission, sink);
  const Json question = sink.events.at(0);
  EXPECT_EQ(question["kind"], "permission");
  EXPECT_EQ(question["items"][0]["prompt"], "Allow Write: /w/out.txt?");
  ItemAnswer deny;
  deny.labels = {"Deny"};
  ASSERT_TRUE(adapter.Answer(question, {deny}, sink));
  EXPECT_EQ(sink.lines.back()["response"]["response"]["behavior"], "deny");
  ItemAnswer allow;
  allow.labels = {"Allow"};
  ASSERT_TRUE(adapter.Answer(question, {allow}, sink));
  EXPECT_EQ(
      sink.lines.back()["response"]["response"]["updatedInput"]["file_path"],
      "/w/out.txt");
}

TEST(ClaudeAdapter, InterruptIsAControlRequest) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  adapter.Interrupt(sink);
  EXPECT_EQ(sink.lines.at(0)["type"], "control_request");
  EXPECT_EQ(sink.lines.at(0)["request"]["subtype"], "interrupt");
}

// Usage (doc/agents.md, "Budgets") from a real two-turn transcript: live
// per model reply (one reply's content blocks counted once), settled by
// each result's modelUsage and total_cost_usd, which count the whole
// process, while its num_turns counts that turn only.
TEST(ClaudeAdapter, UsageOfARealTwoTurnSessionIsTheProcessTotal) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() /
                   "../../../tests/agents/transcripts/claude-followup.jsonl");
  ASSERT_TRUE(in.good());
  ClaudeAdapter adapter;
  RecordingSink sink;
  std::vector<AgentUsage> after_results;
  for (std::string line; std::getline(in, line);) {
    adapter.OnLine(line, sink);
    if (line.find(R"("type":"result")") != std::string::npos) {
      ASSERT_FALSE(sink.usages.empty());
      const Json& last = sink.usages.back();
      after_results.push_back(
          {.input_tokens = last["input_tokens"].get<int64_t>(),
           .output_tokens = last["output_tokens"].get<int64_t>(),
           .cost_usd = last["cost_usd"].get<double>(),
           .turns = last["turns"].get<int64_t>()});
    }
  }
  ASSERT_EQ(after_results.size(), 2u);
  EXPECT_EQ(after_results[0].input_tokens, 120);
  EXPECT_EQ(after_results[0].output_tokens, 15);
  EXPECT_EQ(after_results[0].turns, 1);
  EXPECT_DOUBLE_EQ(*after_results[0].cost_usd, 0.00078);
  EXPECT_EQ(after_results[1].input_tokens, 360);
  EXPECT_EQ(after_results[1].output_tokens, 45);
  EXPECT_EQ(after_results[1].turns, 3);
  EXPECT_DOUBLE_EQ(*after_results[1].cost_usd, 0.00234);
  // Live in the second turn: the first turn's totals plus its first reply
  // (two lines, one message id), before its result.
  bool seen_live = false;
  for (const Json& usage : sink.usages) {
    if (usage["turns"] == 2) {
      EXPECT_EQ(usage["input_tokens"], 240);
      EXPECT_EQ(usage["output_tokens"], 16);
      seen_live = true;
    }
  }
  EXPECT_TRUE(seen_live);
  // Each usage event differs from the one before it.
  for (size_t i = 1; i < sink.usages.size(); ++i)
    EXPECT_NE(sink.usages[i], sink.usages[i - 1]);
}

// Without modelUsage (older CLIs), each result's usage adds to the totals,
// its cache reads and writes counted as input.
TEST(ClaudeAdapter, UsageWithoutModelUsageAddsEachTurn) {
  ClaudeAdapter adapter;
  RecordingSink sink;
  const char* result =
      R"j({"type":"result","subtype":"success","num_turns":1,"result":"ok","usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":10,"output_tokens":5}})j";
  adapter.OnLine(result, sink);
  adapter.OnLine(result, sink);
  ASSERT_FALSE(sink.usages.empty());
  EXPECT_EQ(sink.usages.back(),
            Json::parse(R"({"type":"usage","input_tokens":2220,
                            "output_tokens":10,"turns":2})"));
}

}  // namespace
}  // namespace baton
