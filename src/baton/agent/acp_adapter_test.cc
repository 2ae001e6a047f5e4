#include "baton/agent/acp_adapter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/adapter_sinks.h"

namespace baton {
namespace {

using testing::DroppingSink;
using testing::OfType;
using testing::RecordingSink;

// A response to the request the adapter wrote last, echoing its id.
std::string AcpResponse(const RecordingSink& sink, Json result) {
  return Json{{"jsonrpc", "2.0"},
              {"id", sink.lines.back()["id"]},
              {"result", std::move(result)}}
      .dump();
}

// Lines as `gemini --acp` 0.61.0 printed them (research §7 and
// tests/agents/transcripts/gemini-acp-*.jsonl), shortened where fields carry
// nothing the adapter reads.
constexpr const char* kSessionId = "519565db-27bf-4505-aeed-b085b3bcc44b";
constexpr const char* kAcpInitResult =
    R"j({"protocolVersion":1,"authMethods":[{"id":"oauth-personal","name":"Log in with Google"},{"id":"gemini-api-key","name":"Gemini API key"}],"agentInfo":{"name":"gemini-cli","title":"Gemini CLI","version":"0.61.0"},"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true}}})j";
constexpr const char* kNewResult =
    R"j({"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","modes":{"availableModes":[{"id":"default","name":"Default"},{"id":"yolo","name":"YOLO"}],"currentModeId":"default"},"models":{"currentModelId":"auto"}})j";
constexpr const char* kCommands =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"memory","description":"Manage memory."}]}}})j";
constexpr const char* kChunkWill =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I will run a command."}}}})j";
constexpr const char* kToolCall =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","update":{"sessionUpdate":"tool_call","toolCallId":"run_shell_command__run_shell_command_1795962918734_0","status":"in_progress","title":"echo hello-from-tool","content":[{"type":"content","content":{"type":"text","text":"[current working directory /w] (Run the scripted command)"}}],"locations":[],"kind":"execute"}}})j";
constexpr const char* kToolDone =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","update":{"sessionUpdate":"tool_call_update","toolCallId":"run_shell_command__run_shell_command_1795962918734_0","status":"completed","title":"echo hello-from-tool","content":[],"locations":[],"kind":"execute"}}})j";
constexpr const char* kChunkFinal =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"mock final answer"}}}})j";
constexpr const char* kEndTurn =
    R"j({"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":400,"output_tokens":40},"model_usage":[{"model":"gemini-3.8-flash","token_count":{"input_tokens":200,"output_tokens":20}}]}}})j";
constexpr const char* kAcpPermission =
    R"j({"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","options":[{"optionId":"proceed_always","name":"Allow for this session","kind":"allow_always"},{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"write_file__write_file_1795962922361_0","status":"pending","title":"Writing to out.txt","content":[{"type":"diff","path":"/w/out.txt","oldText":"","newText":"hi\n","_meta":{"kind":"add"}}],"locations":[{"path":"/w/out.txt"}],"kind":"edit"}}})j";
constexpr const char* kWriteDone =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b","update":{"sessionUpdate":"tool_call_update","toolCallId":"write_file__write_file_1795962922361_0","status":"completed","title":"Writing to out.txt","locations":[{"path":"/w/out.txt"}],"kind":"edit"}}})j";
// codex-acp 0.16.0 asks with a string id (research §7).
constexpr const char* kStringIdPermission =
    R"j({"jsonrpc":"2.0","id":"dd712970-5b1c","method":"session/request_permission","params":{"sessionId":"s","options":[{"optionId":"approved","name":"Yes","kind":"allow_once"},{"optionId":"abort","name":"No, provide feedback","kind":"reject_once"}],"toolCall":{"toolCallId":"call_1","title":"Edit hello.txt","kind":"edit"}}})j";

// Runs the handshake up to a running prompt, answering each request by the
// id the adapter gave it.
void StartPrompt(AcpAdapter& adapter, RecordingSink& sink,
                 const std::string& brief = "SCEN_TOOL run the command") {
  AgentSpec spec;
  spec.brief = brief;
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kAcpInitResult)), sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kNewResult)), sink);
  adapter.OnLine(kCommands, sink);
}

TEST(AcpAdapter, ArgvIsTheProfileCommandWithGeminiModelFlag) {
  AcpAdapter adapter;
  AgentSpec spec;
  using Argv = std::vector<std::string>;
  EXPECT_EQ(adapter.Argv({"gemini", "--acp"}, spec), (Argv{"gemini", "--acp"}));
  spec.model = "google/gemini-2.5-pro:high";
  EXPECT_EQ(adapter.Argv({"gemini", "--acp"}, spec),
            (Argv{"gemini", "--acp", "-m", "gemini-2.5-pro"}));
  EXPECT_EQ(adapter.Argv({"/opt/bin/qwen", "--acp"}, spec),
            (Argv{"/opt/bin/qwen", "--acp", "-m", "gemini-2.5-pro"}));
  // No model flag is known for other ACP agents.
  EXPECT_EQ(adapter.Argv({"opencode", "acp"}, spec), (Argv{"opencode", "acp"}));
  spec.resume_session = kSessionId;  // Resume is session/load, not a flag.
  EXPECT_EQ(adapter.Argv({"kimi", "acp"}, spec), (Argv{"kimi", "acp"}));
}

TEST(AcpAdapter, HandshakeCreatesASessionThenPromptsTheBrief) {
  AcpAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = "fix the tests";
  adapter.Begin(spec, "/w", sink);
  ASSERT_EQ(sink.lines.size(), 1u);
  Json init = sink.lines[0];
  EXPECT_EQ(init["jsonrpc"], "2.0");
  EXPECT_EQ(init["method"], "initialize");
  init["params"].erase("clientInfo");
  EXPECT_EQ(init["params"], Json::parse(R"({"protocolVersion":1,
      "clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},
                            "terminal":false}})"));

  adapter.OnLine(AcpResponse(sink, Json::parse(kAcpInitResult)), sink);
  ASSERT_EQ(sink.lines.size(), 2u);
  EXPECT_EQ(sink.lines[1]["method"], "session/new");
  EXPECT_EQ(sink.lines[1]["params"],
            Json::parse(R"({"cwd":"/w","mcpServers":[]})"));

  adapter.OnLine(AcpResponse(sink, Json::parse(kNewResult)), sink);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0],
            (Json{{"type", "session"}, {"session_id", kSessionId}}));
  ASSERT_EQ(sink.lines.size(), 3u);
  EXPECT_EQ(sink.lines[2]["jsonrpc"], "2.0");
  EXPECT_EQ(sink.lines[2]["method"], "session/prompt");
  EXPECT_EQ(sink.lines[2]["params"],
            Json::parse(R"({"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b",
                "prompt":[{"type":"text","text":"fix the tests"}]})"));
  EXPECT_NE(sink.lines[0]["id"], sink.lines[2]["id"]);
}

TEST(AcpAdapter, NormalizesATurnAndCoalescesChunks) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  for (const char* line : {kChunkWill, kToolCall, kToolDone, kChunkFinal}) {
    adapter.OnLine(line, sink);
  }
  adapter.OnLine(
      R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" (done)"}}}})j",
      sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  ASSERT_EQ(sink.events.size(), 5u);
  EXPECT_EQ(sink.events[0]["type"], "session");
  EXPECT_EQ(sink.events[1], Json::parse(R"({"type":"text",
                                            "text":"I will run a command."})"));
  EXPECT_EQ(sink.events[2], Json::parse(R"({"type":"tool","name":"execute",
                            "input":"echo hello-from-tool"})"));
  EXPECT_EQ(sink.events[3],
            (Json{{"type", "text"}, {"text", "mock final answer (done)"}}));
  const Json& result = sink.events[4];
  EXPECT_EQ(result["type"], "result");
  EXPECT_EQ(result["ok"], true);
  EXPECT_EQ(result["text"], "mock final answer (done)");
  EXPECT_EQ(result["detail"], "end_turn");
  EXPECT_EQ(result["usage"]["input_tokens"], 400);
  EXPECT_EQ(sink.turns_ended, 1);
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kCompleted);
}

TEST(AcpAdapter, StopReasonsOtherThanEndTurnFail) {
  const std::pair<const char*, const char*> cases[] = {
      {"max_turn_requests", "max-turns"},
      {"max_tokens", "max-tokens"},
      {"refusal", "refusal"},
      {"cancelled", "cancelled"},
  };
  for (const auto& [stop, detail] : cases) {
    SCOPED_TRACE(stop);
    AcpAdapter adapter;
    RecordingSink sink;
    StartPrompt(adapter, sink);
    adapter.OnLine(AcpResponse(sink, {{"stopReason", stop}}), sink);
    ASSERT_TRUE(adapter.verdict());
    EXPECT_EQ(adapter.verdict()->first, TaskStatus::kFailed);
    EXPECT_EQ(adapter.verdict()->second, detail);
    EXPECT_EQ(OfType(sink, "result").at(0)["ok"], false);
    EXPECT_EQ(sink.turns_ended, 1);
  }
  // A prompt the agent rejects ends the turn too.
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  adapter.OnLine(Json{{"jsonrpc", "2.0"},
                      {"id", sink.lines.back()["id"]},
                      {"error",
                       {{"code", -32602},
                        {"message", "Invalid params"},
                        {"data", "Session not found: x"}}}}
                     .dump(),
                 sink);
  EXPECT_EQ(adapter.verdict()->second, "Invalid params: Session not found: x");
  EXPECT_EQ(sink.turns_ended, 1);
}

TEST(AcpAdapter, PermissionRequestIsAQuestionWithTheAgentsOptions) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink, "SCEN_WRITE write the file");
  adapter.OnLine(
      R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I will write out.txt."}}}})j",
      sink);
  adapter.OnLine(kAcpPermission, sink);
  // The text before the question is out first.
  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.events[1]["text"], "I will write out.txt.");
  const Json question = sink.events[2];
  EXPECT_EQ(question["type"], "question");
  EXPECT_EQ(question["ref"], 0);
  EXPECT_EQ(question["kind"], "permission");
  const Json& item = question["items"][0];
  EXPECT_EQ(item["prompt"], "Allow edit: Writing to out.txt?");
  ASSERT_EQ(item["options"].size(), 3u);
  EXPECT_EQ(item["options"][0]["label"], "Allow for this session");
  EXPECT_EQ(item["options"][1]["label"], "Allow");
  EXPECT_EQ(item["options"][2]["label"], "Reject");

  ItemAnswer allow;
  allow.labels = {"Allow"};
  ASSERT_TRUE(adapter.Answer(question, {allow}, sink));
  EXPECT_EQ(sink.lines.back(), Json::parse(R"({"jsonrpc":"2.0","id":0,
      "result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}})"));
  ItemAnswer skip;
  skip.skipped = true;
  ASSERT_TRUE(adapter.Answer(question, {skip}, sink));
  EXPECT_EQ(sink.lines.back(), Json::parse(R"({"jsonrpc":"2.0","id":0,
      "result":{"outcome":{"outcome":"cancelled"}}})"));
  ItemAnswer words;
  words.text = "no, use a temp file";  // ACP carries no text: reject once.
  ASSERT_TRUE(adapter.Answer(question, {words}, sink));
  EXPECT_EQ(sink.lines.back()["result"]["outcome"]["optionId"], "cancel");

  // The asked-about tool first shows up as its final update.
  adapter.OnLine(kWriteDone, sink);
  adapter.OnLine(kChunkFinal, sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  EXPECT_EQ(OfType(sink, "tool").at(0),
            Json::parse(R"({"type":"tool","name":"edit",
                            "input":"Writing to out.txt"})"));
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kCompleted);
}

TEST(AcpAdapter, StringRequestIdsAreEchoedAsStrings) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  adapter.OnLine(kStringIdPermission, sink);
  Json question = OfType(sink, "question").at(0);
  EXPECT_EQ(question["ref"], "dd712970-5b1c");
  ItemAnswer no;
  no.labels = {"No, provide feedback"};
  ASSERT_TRUE(adapter.Answer(question, {no}, sink));
  EXPECT_EQ(sink.lines.back(), Json::parse(R"({"jsonrpc":"2.0",
      "id":"dd712970-5b1c",
      "result":{"outcome":{"outcome":"selected","optionId":"abort"}}})"));
}

TEST(AcpAdapter, RequestsBatonDoesNotServeGetAnError) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  adapter.OnLine(
      R"j({"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/w/a.txt"}})j",
      sink);
  EXPECT_EQ(sink.lines.back()["id"], 5);
  EXPECT_EQ(sink.lines.back()["error"]["code"], -32601);
  adapter.OnLine(
      R"j({"jsonrpc":"2.0","id":"t1","method":"terminal/create","params":{"sessionId":"s","command":"ls"}})j",
      sink);
  EXPECT_EQ(sink.lines.back()["id"], "t1");
  EXPECT_TRUE(sink.lines.back().contains("error"));
  EXPECT_TRUE(OfType(sink, "question").empty());
}

TEST(AcpAdapter, NoSteeringButFollowUpsAreNewPrompts) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  EXPECT_FALSE(adapter.can_steer());
  auto steer = adapter.Send("faster", SendMode::kSteer, sink);
  ASSERT_FALSE(steer);
  EXPECT_EQ(steer.error().code, ErrorCode::kInvalidArgument);
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  ASSERT_TRUE(adapter.Send("and the docs", SendMode::kFollowup, sink));
  EXPECT_FALSE(adapter.verdict());
  EXPECT_EQ(sink.lines.back()["method"], "session/prompt");
  EXPECT_EQ(sink.lines.back()["params"],
            Json::parse(R"({"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b",
                "prompt":[{"type":"text","text":"and the docs"}]})"));
  adapter.OnLine(kChunkFinal, sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  EXPECT_EQ(sink.turns_ended, 2);
  EXPECT_EQ(OfType(sink, "result").back()["text"], "mock final answer");
}

TEST(AcpAdapter, InterruptCancelsAndWithdrawsPendingPermissions) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  adapter.OnLine(kAcpPermission, sink);
  adapter.Interrupt(sink);
  ASSERT_GE(sink.lines.size(), 2u);
  EXPECT_EQ(sink.lines[sink.lines.size() - 2],
            Json::parse(R"({"jsonrpc":"2.0","method":"session/cancel",
                "params":{"sessionId":"519565db-27bf-4505-aeed-b085b3bcc44b"}})"));
  EXPECT_EQ(sink.lines.back(), Json::parse(R"({"jsonrpc":"2.0","id":0,
      "result":{"outcome":{"outcome":"cancelled"}}})"));
  adapter.OnLine(AcpResponse(sink, {{"stopReason", "cancelled"}}), sink);
  EXPECT_EQ(adapter.verdict()->second, "cancelled");
  size_t written = sink.lines.size();
  adapter.Interrupt(sink);  // Between turns: nothing to cancel.
  EXPECT_EQ(sink.lines.size(), written);
}

// From tests/agents/transcripts/gemini-acp-resume.jsonl (recorded in commit
// 51cb5db): Gemini CLI replays most of the history after the load response.
constexpr const char* kReplayUser =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"06e09676","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"SCEN_TOOL run the command"}}}})j";
constexpr const char* kReplayFunction =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"06e09676","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"[Function Response: run_shell_command]"}}}})j";
constexpr const char* kReplayTool =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"06e09676","update":{"sessionUpdate":"tool_call","toolCallId":"run_shell_command_1","status":"completed","title":"echo hello-from-tool","content":[],"kind":"execute"}}})j";
constexpr const char* kNewAnswer =
    R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"06e09676","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"mock final answer [history: 1 earlier prompts]"}}}})j";

TEST(AcpAdapter, ResumeLoadsTheSessionAndSkipsItsReplayedHistory) {
  AcpAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = "SCEN_TEXT again";
  spec.resume_session = "06e09676";
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kAcpInitResult)), sink);
  EXPECT_EQ(sink.lines.back()["method"], "session/load");
  EXPECT_EQ(sink.lines.back()["params"],
            Json::parse(R"({"sessionId":"06e09676","cwd":"/w",
                            "mcpServers":[]})"));
  adapter.OnLine(kReplayUser, sink);  // Before the response: history.
  adapter.OnLine(AcpResponse(sink, Json::parse(R"({"modes":{}})")), sink);
  EXPECT_EQ(sink.events.at(0),
            (Json{{"type", "session"}, {"session_id", "06e09676"}}));
  EXPECT_EQ(sink.lines.back()["method"], "session/prompt");
  EXPECT_EQ(sink.lines.back()["params"]["sessionId"], "06e09676");
  // After the response: a late replay, then the new prompt's output.
  for (const char* line :
       {kReplayUser, kChunkWill, kReplayTool, kReplayFunction, kChunkFinal,
        kCommands, kNewAnswer}) {
    adapter.OnLine(line, sink);
  }
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  ASSERT_EQ(sink.events.size(), 3u) << sink.events.back().dump();
  EXPECT_EQ(sink.events[1]["text"],
            "mock final answer [history: 1 earlier prompts]");
  EXPECT_EQ(sink.events[2]["text"],
            "mock final answer [history: 1 earlier prompts]");
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kCompleted);
}

TEST(AcpAdapter, ResumeWithoutReplayShowsTheNewTurnAtOnce) {
  // A spec-following agent replays before the load response.
  AcpAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.resume_session = "06e09676";
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kAcpInitResult)), sink);
  adapter.OnLine(kReplayUser, sink);
  adapter.OnLine(kReplayTool, sink);
  adapter.OnLine(AcpResponse(sink, nullptr), sink);
  adapter.OnLine(kToolCall, sink);
  adapter.OnLine(kNewAnswer, sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  auto tools = OfType(sink, "tool");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["input"], "echo hello-from-tool");
  EXPECT_EQ(OfType(sink, "text").size(), 1u);
}

TEST(AcpAdapter, ALateReplayEndsAtTheEchoOfOurPrompt) {
  AcpAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.brief = "SCEN_TEXT again";
  spec.resume_session = "06e09676";
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kAcpInitResult)), sink);
  adapter.OnLine(AcpResponse(sink, Json::object()), sink);
  const std::string echo =
      R"j({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"06e09676","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"SCEN_TEXT again"}}}})j";
  for (const std::string& line :
       {std::string(kReplayUser), std::string(kChunkFinal), echo,
        std::string(kNewAnswer)}) {
    adapter.OnLine(line, sink);
  }
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  auto texts = OfType(sink, "text");
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0]["text"], "mock final answer [history: 1 earlier prompts]");
  // An agent that echoes the prompt with no replay at all.
  AcpAdapter echoing;
  RecordingSink sink2;
  echoing.Begin(spec, "/w", sink2);
  echoing.OnLine(AcpResponse(sink2, Json::parse(kAcpInitResult)), sink2);
  echoing.OnLine(AcpResponse(sink2, Json::object()), sink2);
  echoing.OnLine(echo, sink2);
  echoing.OnLine(kNewAnswer, sink2);
  echoing.OnLine(AcpResponse(sink2, Json::parse(kEndTurn)), sink2);
  EXPECT_EQ(OfType(sink2, "text").size(), 1u);
}

TEST(AcpAdapter, ResumeFailsWhenTheAgentCannotLoadSessions) {
  AcpAdapter adapter;
  RecordingSink sink;
  AgentSpec spec;
  spec.resume_session = "ses_dd8c";
  adapter.Begin(spec, "/w", sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(R"({"protocolVersion":1,
          "agentCapabilities":{"loadSession":false}})")),
                 sink);
  EXPECT_EQ(sink.lines.size(), 1u);  // No session/load, no session/new.
  EXPECT_EQ(OfType(sink, "error").at(0)["message"],
            "resume not supported by this agent");
  ASSERT_TRUE(adapter.verdict());
  EXPECT_EQ(adapter.verdict()->first, TaskStatus::kFailed);
  EXPECT_EQ(adapter.verdict()->second, "resume not supported by this agent");
  EXPECT_EQ(sink.turns_ended, 1);
}

TEST(AcpAdapter, ASessionErrorFailsTheTask) {
  AcpAdapter adapter;
  RecordingSink sink;
  adapter.Begin({}, "/w", sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kAcpInitResult)), sink);
  adapter.OnLine(
      Json{
          {"jsonrpc", "2.0"},
          {"id", sink.lines.back()["id"]},
          {"error", {{"code", -32000}, {"message", "Authentication required"}}}}
          .dump(),
      sink);
  EXPECT_EQ(adapter.verdict()->second, "Authentication required");
  EXPECT_EQ(sink.turns_ended, 1);
}

TEST(AcpAdapter, OddLinesAreToleratedAndACrashLeavesNoVerdict) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  size_t events = sink.events.size();
  adapter.OnLine("(node:4242) Warning: punycode is deprecated", sink);
  EXPECT_EQ(sink.events.size(), events + 1);
  EXPECT_EQ(sink.events.back()["type"], "error");
  adapter.OnLine(
      R"({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"usage_update","used":5}}})",
      sink);
  adapter.OnLine(
      R"({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}})",
      sink);
  adapter.OnLine(R"({"jsonrpc":"2.0","method":"_x/unknown","params":{}})",
                 sink);
  adapter.OnLine(R"({"jsonrpc":"2.0","id":"other","result":{}})", sink);
  adapter.OnLine(kChunkWill, sink);
  EXPECT_EQ(sink.events.size(), events + 1);
  // The stream ends mid-turn: no verdict, the exit code decides.
  EXPECT_FALSE(adapter.verdict());
  EXPECT_EQ(sink.turns_ended, 0);
}

TEST(AcpAdapter, AReplayedAdapterAnswersAndCancelsTheSameProcess) {
  AgentSpec spec;
  spec.brief = "SCEN_WRITE write the file";
  AcpAdapter live;
  RecordingSink sink;
  std::vector<std::string> stdout_lines;
  auto feed = [&](const std::string& line) {
    stdout_lines.push_back(line);
    live.OnLine(line, sink);
  };
  live.Begin(spec, "/w", sink);
  feed(AcpResponse(sink, Json::parse(kAcpInitResult)));
  feed(AcpResponse(sink, Json::parse(kNewResult)));
  feed(kCommands);
  feed(kAcpPermission);
  Json question = OfType(sink, "question").at(0);
  std::string old_prompt_id = sink.lines.back()["id"];

  AcpAdapter rebuilt;
  DroppingSink nowhere;
  rebuilt.Begin(spec, "/w", nowhere);
  for (const auto& line : stdout_lines)
    rebuilt.OnLine(line, nowhere);
  EXPECT_FALSE(rebuilt.verdict());

  RecordingSink after;
  rebuilt.Interrupt(after);
  ASSERT_EQ(after.lines.size(), 2u);
  EXPECT_EQ(after.lines[0]["method"], "session/cancel");
  EXPECT_EQ(after.lines[0]["params"]["sessionId"], kSessionId);
  EXPECT_EQ(after.lines[1]["id"], 0);
  ItemAnswer allow;
  allow.labels = {"Allow"};
  ASSERT_TRUE(rebuilt.Answer(question, {allow}, after));
  EXPECT_EQ(after.lines.back(), Json::parse(R"({"jsonrpc":"2.0","id":0,
      "result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}})"));
  // The old prompt's response is still understood.
  rebuilt.OnLine(Json{{"jsonrpc", "2.0"},
                      {"id", old_prompt_id},
                      {"result", {{"stopReason", "cancelled"}}}}
                     .dump(),
                 after);
  EXPECT_EQ(rebuilt.verdict()->second, "cancelled");
  EXPECT_EQ(after.turns_ended, 1);
  ASSERT_TRUE(rebuilt.Send("again", SendMode::kFollowup, after));
  EXPECT_NE(after.lines.back()["id"], old_prompt_id);
}

TEST(AcpAdapter, TranscriptsOfGeminiCli) {
  struct Case {
    const char* name;
    bool resume;
    const char* detail;
    bool question;
    const char* tool;  // nullptr: none.
  };
  const Case cases[] = {
      {"gemini-acp-tool", false, "end_turn", false, "execute"},
      {"gemini-acp-write", false, "end_turn", true, "edit"},
      {"gemini-acp-ask", false, "end_turn", false, nullptr},
      {"gemini-acp-reject", false, "end_turn", true, nullptr},
      {"gemini-acp-cancel", false, "cancelled", true, "execute"},
      {"gemini-acp-cancel-asking", false, "cancelled", true, nullptr},
      {"gemini-acp-resume", true, "end_turn", false, nullptr},
  };
  int seen = 0;
  for (const Case& c : cases) {
    std::ifstream in(testing::TranscriptDir() /
                     (std::string(c.name) + ".jsonl"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      if (!line.empty())
        lines.push_back(line);
    }
    if (lines.empty())
      continue;  // Not recorded (yet).
    ++seen;
    SCOPED_TRACE(c.name);
    AcpAdapter adapter;
    RecordingSink sink;
    AgentSpec spec;
    if (c.resume) {
      // The session the transcript loads is the one it reports.
      spec.resume_session = "from-transcript";
    }
    adapter.Begin(spec, "/w", sink);
    for (const auto& line : lines)
      adapter.OnLine(line, sink);
    EXPECT_EQ(OfType(sink, "session").size(), 1u);
    EXPECT_TRUE(OfType(sink, "error").empty());
    auto results = OfType(sink, "result");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0]["detail"], c.detail);
    if (std::string(c.detail) == "end_turn") {
      // The stand-in's answers ("mock final answer", or for ask "mock: the
      // tool for ask is not offered ...").
      EXPECT_TRUE(results[0]["text"].get<std::string>().starts_with("mock"));
    }
    if (c.resume) {
      // Only the new turn's text: the replayed history is not shown.
      auto texts = OfType(sink, "text");
      ASSERT_EQ(texts.size(), 1u);
      EXPECT_EQ(texts[0]["text"],
                "mock final answer [history: 1 earlier prompts]");
    }
    EXPECT_EQ(OfType(sink, "question").size(), c.question ? 1u : 0u);
    auto tools = OfType(sink, "tool");
    if (c.tool) {
      ASSERT_EQ(tools.size(), 1u);
      EXPECT_EQ(tools[0]["name"], c.tool);
    } else {
      EXPECT_TRUE(tools.empty()) << tools[0].dump();
    }
    EXPECT_EQ(sink.turns_ended, 1);
  }
  if (seen == 0)
    GTEST_SKIP() << "no gemini transcripts in " << testing::TranscriptDir();
}

// Usage (doc/agents.md, "Budgets") from prompt results: Gemini's
// _meta.quota.token_count and claude-agent-acp's usage, summed per turn.
TEST(AcpAdapter, UsageOfPromptResultsAddsUp) {
  AcpAdapter adapter;
  RecordingSink sink;
  StartPrompt(adapter, sink);
  adapter.OnLine(AcpResponse(sink, Json::parse(kEndTurn)), sink);
  ASSERT_EQ(sink.usages.size(), 1u);
  EXPECT_EQ(sink.usages[0], Json::parse(R"({"type":"usage","input_tokens":400,
                            "output_tokens":40,"turns":1})"));
  ASSERT_TRUE(adapter.Send("again", SendMode::kFollowup, sink));
  adapter.OnLine(
      AcpResponse(sink, Json::parse(R"({"stopReason":"end_turn","usage":{
          "inputTokens":120,"outputTokens":15,"cachedReadTokens":30,
          "cachedWriteTokens":5,"totalTokens":170}})")),
      sink);
  ASSERT_EQ(sink.usages.size(), 2u);
  EXPECT_EQ(sink.usages[1], Json::parse(R"({"type":"usage","input_tokens":555,
                            "output_tokens":55,"turns":2})"));
}

}  // namespace
}  // namespace baton
