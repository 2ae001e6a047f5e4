// Agent tasks through the CLI against a real batond, with a scripted
// stand-in of Claude Code's stream-json protocol (tests/agents/fakes/claude,
// which speaks the lines the real CLI printed in tests/agents/transcripts/).
#include <gmock/gmock.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;

class AgentTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (!PutFakeAgentsOnPath(env_))
      GTEST_SKIP() << "python3 (for the fake agent CLIs) is not installed";
  }

  std::string Delegate(std::vector<std::string> args) {
    args.insert(args.begin(), "delegate");
    auto result = Baton(args, env_);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, result.out.find('\n'));
  }

  std::map<std::string, std::string> env_;
};

// Issue 35, finding 4: what an agent said was kept and shown in clear in
// its events (baton events, MCP task_events, the board) and its stream.
TEST_F(AgentTest, SecretsAnAgentSaysAreMaskedInItsEventsAndStream) {
  // Built at run time; the fake claude says back what it was told.
  std::string key = std::string("AKIA") + "IOSFODNN7EXAMPLE";
  std::string id = Delegate({"remember " + key});
  auto waited = Baton({"wait", "--timeout", "30s", id}, env_);
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  auto events = Baton({"--json", "events", id}, env_);
  EXPECT_EQ(events.exit_code, 0) << events.err;
  EXPECT_EQ(events.out.find(key), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("[redacted: aws-key]"), std::string::npos)
      << events.out;
  for (const char* file : {"events.jsonl", "stream.jsonl", "output.log"}) {
    std::string text =
        ReadFile(home_ + "/tasks/" + id + "/" + file).value_or("");
    EXPECT_FALSE(text.empty()) << file;
    EXPECT_EQ(text.find(key), std::string::npos) << file << ":\n" << text;
  }
}

TEST_F(AgentTest, QuestionAnswerAndCompletion) {
  std::string id = Delegate({"please ASK me"});
  EXPECT_EQ(id, "agent-1");
  // A wait returns when the agent asks, as when it ends.
  auto asked = Baton({"--json", "wait", "--timeout", "20s", id}, env_);
  EXPECT_EQ(asked.exit_code, 0) << asked.out << asked.err;
  EXPECT_EQ(asked.json()["ended"][0]["status"], "waiting");
  auto bad = Baton({"answer", id, "7"}, env_);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("options 1 to 2"), std::string::npos) << bad.err;
  // Past size_t: no option either (std::stoul threw here).
  auto huge = Baton({"answer", id, "99999999999999999999999"}, env_);
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_NE(huge.err.find("options 1 to 2"), std::string::npos) << huge.err;
  auto answered = Baton({"answer", id, "2"}, env_);
  EXPECT_EQ(answered.exit_code, 0) << answered.err;
  auto late = Baton({"answer", id, "1"}, env_);
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_NE(late.err.find("no open question"), std::string::npos) << late.err;
  auto done = Baton({"--json", "wait", "--timeout", "20s", id}, env_);
  auto task = done.json()["ended"][0];
  EXPECT_EQ(task["status"], "completed") << done.out;
  auto output = Baton({"output", id}, env_).out;
  EXPECT_NE(output.find("? Which database?"), std::string::npos) << output;
  EXPECT_NE(output.find("[answer: Postgres]"), std::string::npos) << output;
  auto events = Baton({"--json", "events", id}, env_).out;
  for (const char* type : {"\"session\"", "\"tool\"", "\"question\"",
                           "\"answer\"", "\"result\""}) {
    EXPECT_NE(events.find(type), std::string::npos) << type << events;
  }
  // `status` shows what it was told, line by line, before what ran.
  auto status = Baton({"status", id}, env_).out;
  EXPECT_NE(status.find("  agent:    claude, model its default\n"
                        "  brief:    please ASK me\n"
                        "  runs:     "),
            std::string::npos)
      << status;
}

// An answer that names its question (a form filled in for it) answers
// only while that question is the oldest open one: a late form answers
// nothing else.
TEST_F(AgentTest, AnAnswerThatNamesAnotherQuestionAnswersNothing) {
  std::string id = Delegate({"please ASK me"});
  auto asked = Baton({"--json", "wait", "--timeout", "20s", id}, env_);
  ASSERT_EQ(asked.exit_code, 0) << asked.out << asked.err;
  auto view = asked.json()["ended"][0];
  ASSERT_EQ(view["questions"].size(), 1u) << asked.out;
  int64_t seq = view["questions"][0]["seq"].get<int64_t>();
  std::string other =
      RawRequest(R"({"id":1,"op":"answer","task":")" + id + R"(","question":)" +
                 std::to_string(seq + 1) + R"(,"answers":["1"]})");
  EXPECT_NE(other.find("already_exists"), std::string::npos) << other;
  EXPECT_NE(other.find("is no longer open"), std::string::npos) << other;
  auto still = Baton({"--json", "status", id}, env_);
  EXPECT_EQ(still.json()["task"]["status"], "waiting") << still.out;
  std::string named =
      RawRequest(R"({"id":2,"op":"answer","task":")" + id + R"(","question":)" +
                 std::to_string(seq) + R"(,"answers":["2"]})");
  EXPECT_NE(named.find("\"ok\":true"), std::string::npos) << named;
  auto done = Baton({"--json", "wait", "--timeout", "20s", id}, env_);
  EXPECT_EQ(done.json()["ended"][0]["status"], "completed") << done.out;
  EXPECT_NE(Baton({"output", id}, env_).out.find("[answer: Postgres]"),
            std::string::npos);
}

TEST_F(AgentTest, ResumeContinuesTheSameSession) {
  std::string first = Delegate({"--cwd", home_, "hello"});
  // Follows the events as they come and returns at the end (no polling).
  auto followed = Baton({"events", "--follow", first}, env_);
  EXPECT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_NE(followed.out.find("result    ok: turn ended"), std::string::npos)
      << followed.out;
  EXPECT_EQ(Status(first, env_)["status"], "completed");
  std::string second = Delegate({"--resume", first, "carry on"});
  // Without --cwd it runs where the resumed session ran.
  EXPECT_EQ(Status(second, env_)["cwd"], home_);
  Baton({"wait", "--timeout", "20s", second}, env_);
  auto output = Baton({"output", second}, env_).out;
  EXPECT_NE(output.find("(resumed "), std::string::npos) << output;
  auto refused = Baton({"delegate", "--resume", "shell-9", "x"}, env_);
  EXPECT_EQ(refused.exit_code, 1);
  auto running = Delegate({"SLOW"});
  auto busy = Baton({"delegate", "--resume", running, "x"}, env_);
  EXPECT_EQ(busy.exit_code, 1);
  EXPECT_NE(busy.err.find("still"), std::string::npos) << busy.err;
}

// doc/tasks.md, "Run again": the same brief, agent and label in a new
// session, not a resume.
TEST_F(AgentTest, RerunStartsTheBriefAgainInANewSession) {
  std::string first = Delegate({"--cwd", home_, "--label", "tidy", "hello"});
  Baton({"wait", "--timeout", "20s", first}, env_);
  ASSERT_EQ(Status(first, env_)["status"], "completed");
  auto again = Baton({"rerun", first}, env_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  std::string second = again.out.substr(0, again.out.find('\n'));
  Baton({"wait", "--timeout", "20s", second}, env_);
  auto task = Status(second, env_);
  EXPECT_EQ(task["rerun_of"], first);
  EXPECT_EQ(task["agent"]["brief"], "hello");
  EXPECT_EQ(task["agent"]["profile"], "claude");
  EXPECT_EQ(task["agent"]["resume_session"], "");
  EXPECT_EQ(task["label"], "tidy");
  EXPECT_EQ(task["cwd"], home_);
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(Baton({"output", second}, env_).out.find("(resumed "),
            std::string::npos);
}

TEST_F(AgentTest, ResumeByTaskIdKeepsItsAgent) {
  // The scripted codex (tests/agents/fakes/codex) keeps its threads here.
  auto env = env_;
  env["CODEX_HOME"] = home_ + "/codex-home";
  auto started = Baton(
      {"delegate", "--agent", "codex", "--label", "parser fix", "hello"}, env);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string first = started.out.substr(0, started.out.find('\n'));
  Baton({"wait", "--timeout", "20s", first}, env);
  ASSERT_EQ(Status(first, env)["status"], "completed");
  // No --agent: the resumed task's agent, not the default (claude); no
  // --label: its label too.
  auto resumed = Baton({"delegate", "--resume", first, "carry on"}, env);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::string second = resumed.out.substr(0, resumed.out.find('\n'));
  auto task = Status(second, env);
  EXPECT_EQ(task["agent"]["profile"], "codex") << task.dump();
  EXPECT_EQ(task["argv"][0], "codex") << task.dump();
  EXPECT_EQ(task["label"], "parser fix");
  Baton({"wait", "--timeout", "20s", second}, env);
  EXPECT_EQ(Status(second, env)["status"], "completed");
  // A new label replaces it.
  auto renamed = Baton(
      {"delegate", "--resume", second, "--label", "parser, part 2", "go on"},
      env);
  ASSERT_EQ(renamed.exit_code, 0) << renamed.err;
  std::string third = renamed.out.substr(0, renamed.out.find('\n'));
  EXPECT_EQ(Status(third, env)["label"], "parser, part 2");
  Baton({"wait", "--timeout", "20s", third}, env);
}

TEST_F(AgentTest, SteerGoesInAndAFollowUpWaitsForTheTurn) {
  // Both messages must reach the first turn, whatever the machine's load.
  std::string id = Delegate({"SLOW8 work"});
  WaitStarted(id, env_);
  std::this_thread::sleep_for(milliseconds(300));
  auto steer = Baton({"send", "--steer", id, "also this"}, env_);
  EXPECT_EQ(steer.out, id + ": m-1 steered\n") << steer.err;
  auto followup = Baton({"send", id, "then that"}, env_);
  EXPECT_EQ(followup.out, id + ": m-2 queued until the current turn ends\n");
  Baton({"wait", "--timeout", "30s", id}, env_);
  auto output = Baton({"output", id}, env_).out;
  EXPECT_NE(output.find("turn 3: then that"), std::string::npos) << output;
  EXPECT_EQ(Status(id, env_)["status"], "completed");
}

TEST_F(AgentTest, FailuresAreClearAndNothingIsSpawnedForBadInput) {
  std::string crash = Delegate({"CRASH now"});
  std::string fail = Delegate({"FAIL please"});
  Baton({"wait", "--all", "--timeout", "20s", crash, fail}, env_);
  EXPECT_EQ(Status(crash, env_)["detail"],
            "exit code: 3; stderr: fake claude: crashed");
  EXPECT_EQ(Status(fail, env_)["detail"], "max-turns");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {{"delegate", "--model", "claude", "x"}, "invalid model"},
           // The default agent is claude, which reaches Anthropic's models.
           {{"delegate", "--model", "openai/gpt-5", "x"},
            "model 'openai/gpt-5' is from provider 'openai', which agent "
            "'claude' does not reach"},
           {{"delegate", "--agent", "nope", "x"}, "unknown agent 'nope'"},
           {{"delegate", ""}, "empty brief"}}) {
    auto result = Baton(c.args, env_);
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
  }
  // Not installed: PATH without the CLI.
  auto missing =
      Baton({"delegate", "--agent", "codex", "x"}, {{"PATH", "/usr/bin:/bin"}});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(
      missing.err.find(
          "agent codex: its CLI `codex` is not installed (not found on PATH); "
          "install it, or name another agent (CLI: baton agents lists them)"),
      std::string::npos)
      << missing.err;
  auto listed = Baton({"--json", "ls", "--all"}, env_).json();
  EXPECT_EQ(listed["tasks"].size(), 2u);  // Only the two real ones.
}

// `baton ls`: <id> <status> <label> <model> <started> <detail>, aligned,
// and an ended task its owner has not collected is marked until it is.
TEST_F(AgentTest, LsShowsModelStartAndWhatIsNotCollected) {
  // Collecting is a session's: unowned tasks have no owner to tell.
  env_["BATON_SESSION"] = "director";
  std::string agent = Delegate(
      {"--model", "anthropic/claude-opus-4-1", "--label", "récit", "hello"});
  std::string shell = Run("exit 3", {}, env_);
  // Ended, as the list shows (a list marks nothing seen).
  nlohmann::json listed;
  for (int i = 0; i < 400; ++i) {
    listed = Baton({"--json", "ls"}, env_).json();
    if (listed["tasks"].size() == 2 &&
        listed["tasks"][0]["ended_at"].is_string() &&
        listed["tasks"][1]["ended_at"].is_string())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(listed["tasks"].size(), 2u) << listed.dump();
  EXPECT_EQ(listed["tasks"][0]["uncollected"], true) << listed.dump();
  EXPECT_EQ(listed["tasks"][1]["uncollected"], true) << listed.dump();
  std::string table = Baton({"ls"}, env_).out;
  std::istringstream lines(table);
  std::string head, first, second, footer;
  std::getline(lines, head);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, footer);
  EXPECT_EQ(head.rfind("ID", 0), 0u) << table;
  EXPECT_THAT(first, ::testing::MatchesRegex(
                         agent + " +completed \\* +[0-9:]{8} +[0-9.smh]+ +"
                                 "récit — .* +anthropic/claude-opus-4-1.*"))
      << table;
  EXPECT_THAT(second, ::testing::MatchesRegex(
                          shell + " +failed \\* +[0-9:]{8} +[0-9.smh]+ +"
                                  "exit 3 +exit code: 3"))
      << table;
  // The columns align: STATUS, STARTED, TIME and DETAIL start where their
  // heads do (in characters: the first row's label has a two-byte é).
  for (const char* column : {"STATUS", "STARTED", "TIME", "DETAIL"}) {
    size_t at = head.find(column);
    EXPECT_NE(second[at], ' ') << column << "\n" << table;
    EXPECT_EQ(second[at - 1], ' ') << column << "\n" << table;
  }
  EXPECT_EQ(footer.rfind("* ended, and not collected yet", 0), 0u) << table;
  // Collected by a status: no mark, no footer.
  Status(shell, env_);
  Status(agent, env_);
  table = Baton({"ls"}, env_).out;
  EXPECT_EQ(table.find('*'), std::string::npos) << table;
  EXPECT_EQ(Baton({"--json", "ls"}, env_).json()["tasks"][1]["uncollected"],
            false);
}

// Answers, messages and events are for agent tasks: a shell task gets
// not_agent_task, and is left as it was.
TEST_F(AgentTest, AShellTaskTakesNoAnswerMessageOrEvents) {
  std::string id = Run("echo hi");
  ASSERT_EQ(Baton({"wait", "--timeout", "20s", id}, env_).exit_code, 0);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--json", "answer", id, "1"},
                                             {"--json", "send", id, "more"},
                                             {"--json", "events", id}}) {
    auto result = Baton(args, env_);
    EXPECT_EQ(result.exit_code, 1) << args[1];
    auto error = result.json()["error"];
    EXPECT_EQ(error["code"], "not_agent_task") << result.out;
    EXPECT_NE(error["message"].get<std::string>().find(
                  id + " is a shell task: only agent tasks (delegate) take"),
              std::string::npos)
        << result.out;
  }
  EXPECT_EQ(Status(id, env_)["status"], "completed");
  EXPECT_EQ(Baton({"output", id}, env_).out, "hi\n");
}

TEST_F(AgentTest, KillInterruptsThenStops) {
  std::string id = Delegate({"SLOW"});
  WaitStarted(id, env_);
  Baton({"kill", "--grace", "1s", id}, env_);
  Baton({"wait", "--timeout", "20s", id}, env_);
  EXPECT_EQ(Status(id, env_)["status"], "killed");
}

std::string StderrOf(const std::string& home, const std::string& id) {
  std::ifstream in(home + "/tasks/" + id + "/stderr.log");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A kill asks the agent to end its turn and gives it time to exit by
// itself before any signal; one that does not listen is signalled after
// the window.
TEST_F(AgentTest, KillLetsTheAgentEndItsTurnBeforeSignals) {
  std::string asking = Delegate({"please ASK me"});
  auto asked = Baton({"--json", "wait", "--timeout", "20s", asking}, env_);
  ASSERT_EQ(asked.json()["ended"][0]["status"], "waiting") << asked.out;
  EXPECT_EQ(Baton({"kill", asking}, env_).exit_code, 0);
  Baton({"wait", "--timeout", "20s", asking}, env_);
  auto status = Status(asking, env_);
  EXPECT_EQ(status["status"], "killed") << status.dump();
  EXPECT_EQ(status["detail"], "killed: by request");
  // It ended by itself (exit code 0), and no signal was sent (the fake
  // logs the signals it gets).
  EXPECT_EQ(status["exit_code"], 0) << status.dump();
  EXPECT_EQ(StderrOf(home_, asking).find("SIGTERM"), std::string::npos);
  auto events = Baton({"--json", "events", asking}, env_).out;
  EXPECT_NE(events.find("\"question_withdrawn\""), std::string::npos) << events;

  std::string deaf = Delegate({"HANG"});
  WaitStarted(deaf, env_);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Baton({"kill", "--grace", "1s", deaf}, env_).exit_code, 0);
  Baton({"wait", "--timeout", "20s", deaf}, env_);
  EXPECT_EQ(Status(deaf, env_)["status"], "killed");
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(2900));  // The window held.
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_NE(StderrOf(home_, deaf).find("SIGTERM"), std::string::npos);
}

}  // namespace
}  // namespace baton::testing
