#include "baton/agent/adapter.h"

#include <gtest/gtest.h>

#include <string>

#include "baton/agent/command_adapter.h"
#include "baton/util/json_fields.h"
#include "tests/support/adapter_sinks.h"

namespace baton {
namespace {

using testing::OfType;
using testing::RecordingSink;

// The command adapter passes the model as its profile says: dsh gets the
// whole spec, effort included (issue 13).
TEST(CommandAdapter, PassesTheModelAsTheProfileSays) {
  auto adapter = MakeAdapter(AdapterKind::kCommand);
  ASSERT_NE(adapter, nullptr);
  AgentSpec spec{.model = "deepseek/deepseek-v4-pro:max"};
  spec.model_args.style = ModelArgStyle::kSpec;
  const std::vector<std::string> dsh = {"dsh", "--profile", "headless"};
  EXPECT_EQ(adapter->Argv(dsh, spec),
            (std::vector<std::string>{"dsh", "--profile", "headless", "--model",
                                      "deepseek/deepseek-v4-pro:max"}));
  spec.model_args = {};
  EXPECT_EQ(adapter->Argv(dsh, spec),
            (std::vector<std::string>{"dsh", "--profile", "headless", "--model",
                                      "deepseek-v4-pro"}));
  spec.model = "";
  EXPECT_EQ(adapter->Argv(dsh, spec), dsh);
}

// A plain command whose profile says how it resumes (doc/agents.md,
// "Plain commands"): its first printed id is the session; a resume gives
// it back after the profile's flag.
TEST(CommandAdapter, TakesTheFirstPrintedSessionIdAndResumesWithTheFlag) {
  EXPECT_EQ(SessionIdAfter("session: abc-1, ok", "session: "), "abc-1");
  EXPECT_EQ(SessionIdAfter("id=\"x9\" more", "id=\""), "x9");
  EXPECT_EQ(SessionIdAfter("no id here", "session: "), "");
  EXPECT_EQ(SessionIdAfter("session: ", "session: "), "");
  EXPECT_EQ(SessionIdAfter("session: abc", ""), "");

  auto adapter = MakeAdapter(AdapterKind::kCommand);
  ASSERT_NE(adapter, nullptr);
  AgentSpec spec;
  spec.resume_flag = "--resume";
  spec.session_id_after = "session: ";
  RecordingSink sink;
  adapter->Begin(spec, "/tmp", sink);
  adapter->OnLine("starting", sink);
  adapter->OnLine("session: s-1", sink);
  adapter->OnLine("session: s-2", sink);  // Only text now.
  auto sessions = OfType(sink, "session");
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0]["session_id"], "s-1");
  EXPECT_EQ(OfType(sink, "text").size(), 3u);

  const std::vector<std::string> notes = {"notes-agent"};
  EXPECT_EQ(adapter->Argv(notes, spec), notes);
  spec.resume_session = "s-1";
  EXPECT_EQ(adapter->Argv(notes, spec),
            (std::vector<std::string>{"notes-agent", "--resume", "s-1"}));
}

// Issue 12: a line of 60,000 nested arrays. The codex and ACP adapters kept
// its id to answer it later (dumped as a map key) and overflowed the
// stack, in batond; now every adapter refuses the line with an error event.
TEST(ParseStreamLine, ALineNestedTooDeeplyIsAnErrorForEveryAdapter) {
  std::string deep(60'000, '[');
  deep += std::string(60'000, ']');
  const std::string line =
      R"({"id":)" + deep +
      R"(,"method":"item/commandExecution/requestApproval","params":{}})";
  for (AdapterKind kind : {AdapterKind::kClaude, AdapterKind::kCodex,
                           AdapterKind::kCodexExec, AdapterKind::kAcp}) {
    std::string_view name = EnumName(kind);
    auto adapter = MakeAdapter(kind);
    ASSERT_NE(adapter, nullptr) << name;
    RecordingSink sink;
    adapter->OnLine(line, sink);
    auto errors = OfType(sink, "error");
    ASSERT_EQ(errors.size(), 1u) << name;
    EXPECT_NE(errors[0]["message"].get<std::string>().find(
                  "nested deeper than 256 levels"),
              std::string::npos)
        << name << ": " << errors[0]["message"];
    EXPECT_TRUE(OfType(sink, "question").empty()) << name;
    EXPECT_TRUE(sink.lines.empty()) << name;
  }
}

TEST(ParseStreamLine, NestingUpToTheLimitIsRead) {
  std::string nested(kMaxStreamLineDepth - 1, '[');
  nested += std::string(kMaxStreamLineDepth - 1, ']');
  RecordingSink sink;
  auto message = ParseStreamLine(R"({"a":)" + nested + "}", "test", sink);
  ASSERT_TRUE(message.has_value());
  EXPECT_TRUE(sink.events.empty());
}

// Found by fuzz_adapter_claude: a director's text with invalid UTF-8 made
// ClaudeAdapter::Send throw from dump(). batond's JSON parse hands over
// valid UTF-8 today; the adapters no longer rely on it.
TEST(ToLine, ADirectorsInvalidUtf8IsReplacedNotThrown) {
  const std::string text = "fix \xff\xfe it";
  for (AdapterKind kind :
       {AdapterKind::kClaude, AdapterKind::kCodex, AdapterKind::kAcp}) {
    auto adapter = MakeAdapter(kind);
    RecordingSink sink;
    AgentSpec spec;
    spec.adapter = kind;
    spec.brief = text;
    EXPECT_NO_THROW({
      adapter->Begin(spec, "/w", sink);
      (void)adapter->Send(text, SendMode::kFollowup, sink);
      (void)adapter->Send(text, SendMode::kSteer, sink);
    }) << EnumName(kind);
  }
  auto claude = MakeAdapter(AdapterKind::kClaude);
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = text;
  claude->Begin(spec, "/w", sink);
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_NE(sink.lines[0].dump().find("fix \xEF\xBF\xBD\xEF\xBF\xBD it"),
            std::string::npos)
      << sink.lines[0].dump();
}

}  // namespace
}  // namespace baton
