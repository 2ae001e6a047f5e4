#include "baton/agent/codex_adapter.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/adapter_sinks.h"

namespace baton {
namespace {

using testing::DroppingSink;
using testing::OfType;
using testing::RecordingSink;

std::string Joined(const std::vector<std::string>& argv) {
  std::string joined;
  for (const auto& arg : argv)
    joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

// A response to the request the adapter wrote last, echoing its id.
std::string CodexResponse(const RecordingSink& sink, Json result) {
  return Json{{"id", sink.lines.back()["id"]}, {"result", std::move(result)}}
      .dump();
}

// Lines as codex app-server 0.171.0 printed them (research §3.4 and
// tests/agents/transcripts/codex-app-*.jsonl), shortened where fields
// carry nothing the adapter reads.
constexpr const char* kThreadId = "01a227bb-2da7-7990-a93a-75835d23708a";
constexpr const char* kTurnId = "01a227bb-2dc6-7633-9487-55234245e4fe";
constexpr const char* kCodexInitResult =
    R"j({"userAgent":"baton/0.171.0 (Debian 12.0.0; x86_64) dumb (baton; 0.1.0)","codexHome":"/h/.codex","platformFamily":"unix","platformOs":"linux"})j";
constexpr const char* kThreadResult =
    R"j({"thread":{"id":"01a227bb-2da7-7990-a93a-75835d23708a","sessionId":"01a227bb-2da7-7990-a93a-75835d23708a","model":"gpt-5.5","status":{"type":"idle"}}})j";
constexpr const char* kTurnResult =
    R"j({"turn":{"id":"01a227bb-2dc6-7633-9487-55234245e4fe","items":[],"itemsView":"notLoaded","status":"inProgress","error":null}})j";
constexpr const char* kConfigWarning =
    R"j({"method":"configWarning","params":{"summary":"Codex could not find bubblewrap on PATH.","details":null},"emittedAtMs":1795962908067})j";
constexpr const char* kThreadStarted =
    R"j({"method":"thread/started","params":{"thread":{"id":"01a227bb-2da7-7990-a93a-75835d23708a","sessionId":"01a227bb-2da7-7990-a93a-75835d23708a"}},"emittedAtMs":1795962908080})j";
constexpr const char* kTurnStarted =
    R"j({"method":"turn/started","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turn":{"id":"01a227bb-2dc6-7633-9487-55234245e4fe","items":[],"status":"inProgress","error":null}},"emittedAtMs":1795962908130})j";
constexpr const char* kUserItem =
    R"j({"method":"item/completed","params":{"item":{"type":"userMessage","id":"01a227bb-2dec","content":[{"type":"text","text":"SCEN_TOOL run the command","text_elements":[]}]},"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe"}})j";
constexpr const char* kCommandStarted =
    R"j({"method":"item/started","params":{"item":{"type":"commandExecution","id":"call_mock1a227bb2e010022","command":"/bin/bash -lc 'echo hello-from-tool'","cwd":"/w","status":"inProgress","commandActions":[{"type":"unknown","command":"echo hello-from-tool"}],"aggregatedOutput":null,"exitCode":null},"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe"}})j";
constexpr const char* kCommandApproval =
    R"j({"method":"item/commandExecution/requestApproval","id":0,"params":{"kind":"command","threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe","itemId":"call_mock1a227bb2e010022","command":"/bin/bash -lc 'echo hello-from-tool'","cwd":"/w","commandActions":[{"type":"unknown","command":"echo hello-from-tool"}],"proposedExecpolicyAmendment":["echo","hello-from-tool"],"availableDecisions":["accept",{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["echo","hello-from-tool"]}},"cancel"]}})j";
constexpr const char* kResolved =
    R"j({"method":"serverRequest/resolved","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","requestId":0},"emittedAtMs":1795962908182})j";
constexpr const char* kCommandCompleted =
    R"j({"method":"item/completed","params":{"item":{"type":"commandExecution","id":"call_mock1a227bb2e010022","command":"/bin/bash -lc 'echo hello-from-tool'","status":"completed","commandActions":[{"type":"unknown","command":"echo hello-from-tool"}],"aggregatedOutput":"hello-from-tool\n","exitCode":0},"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe"}})j";
constexpr const char* kUsage =
    R"j({"method":"thread/tokenUsage/updated","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe","tokenUsage":{"total":{"totalTokens":880,"inputTokens":800,"cachedInputTokens":200,"outputTokens":80,"reasoningOutputTokens":20},"last":{"totalTokens":440},"modelContextWindow":258400}}})j";
constexpr const char* kDelta1 =
    R"j({"method":"item/agentMessage/delta","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe","itemId":"msg_mock1a227bb2e7c0024","delta":"mock fina"}})j";
constexpr const char* kDelta2 =
    R"j({"method":"item/agentMessage/delta","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe","itemId":"msg_mock1a227bb2e7c0024","delta":"l answer"}})j";
constexpr const char* kMessage =
    R"j({"method":"item/completed","params":{"item":{"type":"agentMessage","id":"msg_mock1a227bb2e7c0024","text":"mock final answer","phase":null},"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe"}})j";
constexpr const char* kTurnCompleted =
    R"j({"method":"turn/completed","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turn":{"id":"01a227bb-2dc6-7633-9487-55234245e4fe","items":[{"type":"agentMessage","id":"msg_mock1a227bb2e7c0024","text":"mock final answer"}],"itemsView":"summary","status":"completed","error":null,"durationMs":193}}})j";
constexpr const char* kTurnInterrupted =
    R"j({"method":"turn/completed","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turn":{"id":"01a227bb-2dc6-7633-9487-55234245e4fe","items":[],"itemsView":"notLoaded","status":"interrupted","error":null}}})j";
constexpr const char* kFileStarted =
    R"j({"method":"item/started","params":{"item":{"type":"fileChange","id":"call_mock1a227bb2fd20027","changes":[{"path":"/w/out.txt","kind":{"type":"add"},"diff":"hi\n"}],"status":"inProgress"},"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe"}})j";
constexpr const char* kFileApproval =
    R"j({"method":"item/fileChange/requestApproval","id":"req-7","params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe","itemId":"call_mock1a227bb2fd20027","startedAtMs":1795962908634,"reason":null,"grantRoot":null}})j";
constexpr const char* kUserInput =
    R"j({"method":"item/tool/requestUserInput","id":0,"params":{"threadId":"01a227bb-2da7-7990-a93a-75835d23708a","turnId":"01a227bb-2dc6-7633-9487-55234245e4fe","itemId":"call_mock_ask","questions":[{"id":"db","header":"Database","question":"Which database should I use?","isOther":true,"isSecret":false,"options":[{"label":"SQLite","description":"embedded"},{"label":"Postgres","description":"server"}]}],"isBlocking":true,"autoResolutionMs":null}})j";

// Runs the handshake up to a running turn, answering each request by the id
// the adapter gave it.
void StartTurn(CodexAdapter& adapter, RecordingSink& sink,
               const AgentSpec& spec = {}) {
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kCodexInitResult)), sink);
  adapter.OnLine(kConfigWarning, sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kThreadResult)), sink);
  adapter.OnLine(kThreadStarted, sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kTurnResult)), sink);
  adapter.OnLine(kTurnStarted, sink);
}

TEST(CodexAdapter, ArgvIsAppServerWithModelAndEffortOverrides) {
  CodexAdapter adapter;
  AgentSpec spec;
  constexpr const char* kAsk =
      "-c features.default_mode_request_user_input=true app-server";
  EXPECT_EQ(Joined(adapter.Argv({"codex"}, spec)),
            fmt::format("codex {}", kAsk));
  spec.model = "openai/gpt-5.5:high";
  EXPECT_EQ(Joined(adapter.Argv({"codex"}, spec)),
            fmt::format("codex -c model=\"gpt-5.5\" -c "
                        "model_reasoning_effort=\"high\" {}",
                        kAsk));
  spec.model = "openai/gpt-5.5:off";
  EXPECT_EQ(adapter.Argv({"codex"}, spec)[4],
            "model_reasoning_effort=\"none\"");
  spec.model = "openai/gpt-5.5:max";
  EXPECT_EQ(adapter.Argv({"codex"}, spec)[4],
            "model_reasoning_effort=\"xhigh\"");
  spec.model = "openai/o3";
  EXPECT_EQ(Joined(adapter.Argv({"codex"}, spec)),
            fmt::format("codex -c model=\"o3\" {}", kAsk));
  // Resume is a thread/resume request, not a flag.
  spec.resume_session = kThreadId;
  EXPECT_EQ(adapter.Argv({"codex"}, spec).back(), "app-server");
}

TEST(CodexAdapter, HandshakeStartsAThreadThenTheBrief) {
  CodexAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = "fix the tests";
  adapter.Begin(spec, "/w", sink);
  ASSERT_EQ(sink.lines.size(), 1u);
  const Json& init = sink.lines[0];
  EXPECT_EQ(init["method"], "initialize");
  EXPECT_FALSE(init.contains("jsonrpc"));
  EXPECT_EQ(init["params"]["clientInfo"]["name"], "baton");
  EXPECT_EQ(init["params"]["capabilities"]["experimentalApi"], true);

  adapter.OnLine(CodexResponse(sink, Json::parse(kCodexInitResult)), sink);
  ASSERT_EQ(sink.lines.size(), 3u);
  EXPECT_EQ(sink.lines[1], Json::parse(R"({"method":"initialized"})"));
  EXPECT_EQ(sink.lines[2]["method"], "thread/start");
  EXPECT_EQ(sink.lines[2]["params"],
            Json::parse(R"({"cwd":"/w","approvalPolicy":"on-request",
                            "sandbox":"workspace-write"})"));

  adapter.OnLine(CodexResponse(sink, Json::parse(kThreadResult)), sink);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0], Json::parse(R"({"type":"session",
      "session_id":"01a227bb-2da7-7990-a93a-75835d23708a"})"));
  ASSERT_EQ(sink.lines.size(), 4u);
  EXPECT_EQ(sink.lines[3]["method"], "turn/start");
  EXPECT_EQ(sink.lines[3]["params"],
            Json::parse(R"({"threadId":"01a227bb-2da7-7990-a93a-75835d23708a",
      "input":[{"type":"text","text":"fix the tests","text_elements":[]}]})"));
  // thread/started repeats the id: no second session event.
  adapter.OnLine(kThreadStarted, sink);
  EXPECT_EQ(sink.events.size(), 1u);
  // Request ids are unique strings.
  EXPECT_NE(sink.lines[0]["id"], sink.lines[2]["id"]);
  EXPECT_TRUE(sink.lines[3]["id"].is_string());
}

TEST(CodexAdapter, ResumeIsThreadResumeInTheOriginalCwd) {
  CodexAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = "SCEN_TEXT again";
  spec.resume_session = kThreadId;
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kCodexInitResult)), sink);
  EXPECT_EQ(sink.lines.back()["method"], "thread/resume");
  EXPECT_EQ(sink.lines.back()["params"]["threadId"], kThreadId);
  EXPECT_EQ(sink.lines.back()["params"]["cwd"], "/w");
  adapter.OnLine(CodexResponse(sink, Json::parse(kThreadResult)), sink);
  EXPECT_EQ(sink.events.at(0)["session_id"], kThreadId);
  EXPECT_EQ(sink.lines.back()["method"], "turn/start");
  EXPECT_EQ(sink.lines.back()["params"]["input"][0]["text"], "SCEN_TEXT again");
}

TEST(CodexAdapter, AFailedResumeFailsTheTaskAtOnce) {
  CodexAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.resume_session = "no-such-thread";
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kCodexInitResult)), sink);
  adapter.OnLine(
      Json{{"id", sink.lines.back()["id"]},
           {"error",
            {{"code", -32600}, {"message", "no rollout found for thread id"}}}}
          .dump(),
      sink);
  ASSERT_TRUE(adapter.verdict());
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kFailed);
  EXPECT_EQ(adapter.verdict()->second,
            "resume of no-such-thread failed: no rollout found for thread id");
  EXPECT_EQ(OfType(sink, "error").size(), 1u);
  EXPECT_EQ(sink.turns_ended, 1);  // So the runtime closes stdin.
}

TEST(CodexAdapter, NormalizesATurn) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  for (const char* line :
       {kUserItem, kCommandStarted, kCommandCompleted, kUsage, kDelta1, kDelta2,
        kMessage, R"({"method":"thread/goal/cleared","params":{}})",
        kTurnCompleted}) {
    adapter.OnLine(line, sink);
  }
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0]["type"], "session");
  EXPECT_EQ(sink.events[1], Json::parse(R"({"type":"tool","name":"shell",
                            "input":"echo hello-from-tool"})"));
  EXPECT_EQ(sink.events[2], Json::parse(R"({"type":"text",
                                            "text":"mock final answer"})"));
  const Json& result = sink.events[3];
  EXPECT_EQ(result["type"], "result");
  EXPECT_EQ(result["ok"], true);
  EXPECT_EQ(result["text"], "mock final answer");
  EXPECT_EQ(result["usage"]["inputTokens"], 800);
  EXPECT_EQ(sink.turns_ended, 1);
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kCompleted);
}

TEST(CodexAdapter, FailedAndInterruptedTurnsAreNotOk) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.OnLine(
      R"j({"method":"error","params":{"error":{"message":"stream disconnected before completion: mock upstream failure","codexErrorInfo":null},"willRetry":false,"threadId":"t","turnId":"u"}})j",
      sink);
  adapter.OnLine(
      R"j({"method":"turn/completed","params":{"threadId":"t","turn":{"id":"01a227bb-2dc6-7633-9487-55234245e4fe","items":[],"status":"failed","error":{"message":"stream disconnected before completion: mock upstream failure"}}}})j",
      sink);
  ASSERT_EQ(OfType(sink, "error").size(), 1u);
  Json result = OfType(sink, "result").at(0);
  EXPECT_EQ(result["ok"], false);
  EXPECT_EQ(result["detail"],
            "stream disconnected before completion: mock upstream failure");
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kFailed);

  CodexAdapter interrupted;
  RecordingSink sink2;
  StartTurn(interrupted, sink2);
  interrupted.OnLine(kTurnInterrupted, sink2);
  EXPECT_EQ(interrupted.verdict()->first, TaskStatus::kFailed);
  EXPECT_EQ(interrupted.verdict()->second, "interrupted");
  EXPECT_EQ(sink2.turns_ended, 1);
}

TEST(CodexAdapter, CommandApprovalIsAPermissionQuestion) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.OnLine(kCommandStarted, sink);
  adapter.OnLine(kCommandApproval, sink);
  Json question = OfType(sink, "question").at(0);
  EXPECT_EQ(question["ref"], 0);
  EXPECT_EQ(question["kind"], "permission");
  EXPECT_EQ(question["items"][0]["prompt"],
            "Allow command: /bin/bash -lc 'echo hello-from-tool'?");
  EXPECT_EQ(question["items"][0]["options"][0]["label"], "Allow");
  EXPECT_EQ(question["items"][0]["options"][1]["label"], "Deny");

  ItemAnswer allow;
  allow.labels = {"Allow"};
  ASSERT_TRUE(adapter.Answer(question, {allow}, sink));
  EXPECT_EQ(sink.lines.back(),
            Json::parse(R"({"id":0,"result":{"decision":"accept"}})"));
  // This request offered no "decline": a refusal is "cancel".
  ItemAnswer deny;
  deny.labels = {"Deny"};
  ASSERT_TRUE(adapter.Answer(question, {deny}, sink));
  EXPECT_EQ(sink.lines.back(),
            Json::parse(R"({"id":0,"result":{"decision":"cancel"}})"));
  adapter.OnLine(kResolved, sink);  // Tolerated.
}

TEST(CodexAdapter, FileChangeApprovalNamesThePathsAndKeepsAStringId) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.OnLine(kFileStarted, sink);
  adapter.OnLine(kFileApproval, sink);
  EXPECT_EQ(OfType(sink, "tool").at(0),
            Json::parse(R"({"type":"tool","name":"edit","input":"out.txt"})"));
  Json question = OfType(sink, "question").at(0);
  EXPECT_EQ(question["ref"], "req-7");
  EXPECT_EQ(question["items"][0]["prompt"], "Allow edit: out.txt?");
  ItemAnswer skip;
  skip.skipped = true;
  ASSERT_TRUE(adapter.Answer(question, {skip}, sink));
  EXPECT_EQ(sink.lines.back(),
            Json::parse(R"({"id":"req-7","result":{"decision":"decline"}})"));
}

TEST(CodexAdapter, RequestUserInputIsAnAskQuestion) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.OnLine(kUserInput, sink);
  Json question = OfType(sink, "question").at(0);
  EXPECT_EQ(question["kind"], "ask");
  EXPECT_EQ(question["items"][0]["prompt"], "Which database should I use?");
  EXPECT_EQ(question["items"][0]["header"], "Database");
  EXPECT_EQ(question["items"][0]["options"][1]["label"], "Postgres");

  ItemAnswer answer;
  answer.labels = {"SQLite"};
  ASSERT_TRUE(adapter.Answer(question, {answer}, sink));
  EXPECT_EQ(sink.lines.back(), Json::parse(R"({"id":0,"result":{"answers":
      {"db":{"answers":["SQLite"]}}}})"));
  ItemAnswer text;
  text.text = "DuckDB";
  ASSERT_TRUE(adapter.Answer(question, {text}, sink));
  EXPECT_EQ(sink.lines.back()["result"]["answers"]["db"]["answers"][0],
            "DuckDB");
  ItemAnswer skip;
  skip.skipped = true;
  ASSERT_TRUE(adapter.Answer(question, {skip}, sink));
  EXPECT_EQ(sink.lines.back(),
            Json::parse(R"({"id":0,"result":{"answers":{}}})"));
}

TEST(CodexAdapter, SteerGoesIntoTheRunningTurn) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  ASSERT_TRUE(
      adapter.Send("STEER: also mention steering", SendMode::kSteer, sink));
  const Json& steer = sink.lines.back();
  EXPECT_EQ(steer["method"], "turn/steer");
  EXPECT_EQ(steer["params"], Json::parse(R"({
      "threadId":"01a227bb-2da7-7990-a93a-75835d23708a",
      "expectedTurnId":"01a227bb-2dc6-7633-9487-55234245e4fe",
      "input":[{"type":"text","text":"STEER: also mention steering",
                "text_elements":[]}]})"));
  // A steer codex refuses is an error event, not a failure.
  adapter.OnLine(
      Json{
          {"id", steer["id"]},
          {"error", {{"code", -32600}, {"message", "no active turn to steer"}}}}
          .dump(),
      sink);
  EXPECT_EQ(OfType(sink, "error").at(0)["message"],
            "steer not delivered: no active turn to steer");
  EXPECT_FALSE(adapter.verdict());
  adapter.OnLine(kTurnCompleted, sink);
  EXPECT_FALSE(adapter.Send("late", SendMode::kSteer, sink));
}

TEST(CodexAdapter, SteerBeforeTheTurnIdIsKnownWaitsForIt) {
  CodexAdapter adapter;
  RecordingSink sink;
  adapter.Begin({}, "/w", sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kCodexInitResult)), sink);
  adapter.OnLine(CodexResponse(sink, Json::parse(kThreadResult)), sink);
  size_t written = sink.lines.size();
  ASSERT_TRUE(adapter.Send("early", SendMode::kSteer, sink));
  EXPECT_EQ(sink.lines.size(), written);
  adapter.OnLine(kTurnStarted, sink);
  EXPECT_EQ(sink.lines.back()["method"], "turn/steer");
  EXPECT_EQ(sink.lines.back()["params"]["expectedTurnId"], kTurnId);
}

TEST(CodexAdapter, FollowUpStartsANewTurn) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.OnLine(kTurnCompleted, sink);
  ASSERT_TRUE(adapter.verdict());
  ASSERT_TRUE(adapter.Send("and now the docs", SendMode::kFollowup, sink));
  EXPECT_FALSE(adapter.verdict());
  EXPECT_EQ(sink.lines.back()["method"], "turn/start");
  EXPECT_EQ(sink.lines.back()["params"]["threadId"], kThreadId);
  EXPECT_EQ(sink.lines.back()["params"]["input"][0]["text"],
            "and now the docs");
}

TEST(CodexAdapter, InterruptIsTurnInterrupt) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.Interrupt(sink);
  EXPECT_EQ(sink.lines.back()["method"], "turn/interrupt");
  EXPECT_EQ(sink.lines.back()["params"],
            Json::parse(R"({"threadId":"01a227bb-2da7-7990-a93a-75835d23708a",
                            "turnId":"01a227bb-2dc6-7633-9487-55234245e4fe"})"));
  adapter.OnLine(CodexResponse(sink, Json::object()),
                 sink);  // {} is tolerated.
  adapter.OnLine(kTurnInterrupted, sink);
  size_t written = sink.lines.size();
  adapter.Interrupt(sink);  // Between turns: nothing to interrupt.
  EXPECT_EQ(sink.lines.size(), written);
}

TEST(CodexAdapter, OddLinesAreToleratedAndUnknownRequestsRefused) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  size_t events = sink.events.size();
  adapter.OnLine("thread 'main' panicked at codex-rs/core/src/lib.rs", sink);
  ASSERT_EQ(sink.events.size(), events + 1);
  EXPECT_EQ(sink.events.back()["type"], "error");
  adapter.OnLine(R"({"method":"some/newNotification","params":{"x":1}})", sink);
  adapter.OnLine(R"({"id":"zz","result":{"unknown":true}})", sink);
  adapter.OnLine("[1,2]", sink);
  EXPECT_EQ(sink.events.size(), events + 2);
  adapter.OnLine(
      R"({"method":"account/chatgptAuthTokens/refresh","id":"r1","params":{}})",
      sink);
  EXPECT_EQ(sink.lines.back()["id"], "r1");
  EXPECT_EQ(sink.lines.back()["error"]["code"], -32601);
}

TEST(CodexAdapter, ACrashMidTurnLeavesNoVerdict) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  adapter.OnLine(kCommandStarted, sink);
  adapter.OnLine(kDelta1, sink);
  // The stream ends here: the exit code decides.
  EXPECT_FALSE(adapter.verdict());
  EXPECT_EQ(sink.turns_ended, 0);
}

TEST(CodexAdapter, AReplayedAdapterAnswersStopsAndSteersTheSameProcess) {
  AgentSpec spec;
  spec.brief = "SCEN_TOOL run the command";
  CodexAdapter live;
  RecordingSink sink;
  // Record the stdout lines as the runtime would.
  std::vector<std::string> stdout_lines;
  auto feed = [&](const std::string& line) {
    stdout_lines.push_back(line);
    live.OnLine(line, sink);
  };
  live.Begin(spec, "/w", sink);
  feed(CodexResponse(sink, Json::parse(kCodexInitResult)));
  feed(CodexResponse(sink, Json::parse(kThreadResult)));
  feed(CodexResponse(sink, Json::parse(kTurnResult)));
  feed(kTurnStarted);
  feed(kCommandStarted);
  feed(kCommandApproval);
  Json question = OfType(sink, "question").at(0);
  std::string old_id = sink.lines.back()["id"];

  CodexAdapter rebuilt;
  DroppingSink nowhere;
  rebuilt.Begin(spec, "/w", nowhere);
  for (const auto& line : stdout_lines)
    rebuilt.OnLine(line, nowhere);
  EXPECT_FALSE(rebuilt.verdict());

  RecordingSink after;
  ItemAnswer allow;
  allow.labels = {"Allow"};
  ASSERT_TRUE(rebuilt.Answer(question, {allow}, after));
  EXPECT_EQ(after.lines.back(),
            Json::parse(R"({"id":0,"result":{"decision":"accept"}})"));
  ASSERT_TRUE(rebuilt.Send("more", SendMode::kSteer, after));
  EXPECT_EQ(after.lines.back()["params"]["expectedTurnId"], kTurnId);
  EXPECT_NE(after.lines.back()["id"], old_id);
  rebuilt.Interrupt(after);
  EXPECT_EQ(after.lines.back()["params"]["threadId"], kThreadId);
  EXPECT_EQ(after.lines.back()["params"]["turnId"], kTurnId);
  rebuilt.OnLine(kTurnCompleted, after);
  EXPECT_EQ(rebuilt.verdict()->first, TaskStatus::kCompleted);
  EXPECT_EQ(after.turns_ended, 1);
}

RecordingSink ReplayCodexApp(const std::string& name, AgentSpec spec = {}) {
  CodexAdapter adapter;
  return testing::ReplayTranscript(adapter, name, spec);
}

bool HaveTranscript(const std::string& name) {
  return std::filesystem::exists(testing::TranscriptDir() / (name + ".jsonl"));
}

TEST(CodexAdapter, TranscriptsOfTheRealCli) {
  struct Case {
    const char* name;
    bool ok;
    const char* detail;
    const char* question_kind;  // nullptr: none.
    const char* tool;           // nullptr: none.
  };
  const Case cases[] = {
      {"codex-app-tool", true, "turn completed", "permission", "shell"},
      {"codex-app-write", true, "turn completed", "permission", "edit"},
      {"codex-app-decline", true, "turn completed", "permission", "edit"},
      {"codex-app-ask", true, "turn completed", "ask", nullptr},
      {"codex-app-steer", true, "turn completed", nullptr, "shell"},
      {"codex-app-interrupt", false, "interrupted", nullptr, "shell"},
      {"codex-app-interrupt-asking", false, "interrupted", "permission",
       "edit"},
      {"codex-app-resume", true, "turn completed", nullptr, nullptr},
  };
  int seen = 0;
  for (const Case& c : cases) {
    if (!HaveTranscript(c.name))
      continue;
    ++seen;
    SCOPED_TRACE(c.name);
    RecordingSink sink = ReplayCodexApp(c.name);
    auto sessions = OfType(sink, "session");
    ASSERT_EQ(sessions.size(), 1u);
    auto results = OfType(sink, "result");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0]["ok"], c.ok);
    EXPECT_EQ(results[0]["detail"], c.detail);
    if (c.ok) {
      EXPECT_TRUE(results[0]["text"].get<std::string>().starts_with(
          "mock final answer"));
    }
    EXPECT_EQ(sink.turns_ended, 1);
    auto questions = OfType(sink, "question");
    if (c.question_kind) {
      ASSERT_EQ(questions.size(), 1u);
      EXPECT_EQ(questions[0]["kind"], c.question_kind);
      EXPECT_EQ(questions[0]["ref"], 0);
    } else {
      EXPECT_TRUE(questions.empty());
    }
    auto tools = OfType(sink, "tool");
    if (c.tool) {
      ASSERT_EQ(tools.size(), 1u);
      EXPECT_EQ(tools[0]["name"], c.tool);
    } else {
      EXPECT_TRUE(tools.empty());
    }
    // Only the late steer is refused (codex-app-steer's second steer).
    auto errors = OfType(sink, "error");
    EXPECT_EQ(errors.size(), std::string(c.name) == "codex-app-steer" ? 1u : 0u)
        << (errors.empty() ? "" : errors[0].dump());
  }
  if (seen == 0)
    GTEST_SKIP() << "no codex transcripts in " << testing::TranscriptDir();
}

// Usage (doc/agents.md, "Budgets"): the thread's totals as codex sends
// them (inputTokens counts cached input), and a turn at each turn's end.
TEST(CodexAdapter, UsageIsTheThreadTotalAndTurnsEnded) {
  CodexAdapter adapter;
  RecordingSink sink;
  StartTurn(adapter, sink);
  for (const char* line : {kUserItem, kUsage, kMessage, kTurnCompleted})
    adapter.OnLine(line, sink);
  ASSERT_EQ(sink.usages.size(), 2u);
  EXPECT_EQ(sink.usages[0], Json::parse(R"({"type":"usage","input_tokens":800,
                            "output_tokens":80,"turns":0})"));
  EXPECT_EQ(sink.usages[1]["turns"], 1);
  EXPECT_FALSE(sink.usages[1].contains("cost_usd"));  // Codex has none.
}

}  // namespace
}  // namespace baton
