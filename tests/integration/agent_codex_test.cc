// Codex agent tasks end to end through a real batond, against the scripted
// stand-in of `codex app-server` and `codex exec --json`
// (tests/agents/fakes/codex, which speaks the lines of
// tests/agents/transcripts/codex-*.jsonl).
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;

class CodexAgentTest : public FakeAgentTest {};

TEST_F(CodexAgentTest, ApprovalAnsweredByNumberThenCompleted) {
  std::string id = Delegate({"--agent", "codex", "TOOL run it"});
  auto asked = Baton({"--json", "wait", "--timeout", "20s", id}, env_);
  EXPECT_EQ(asked.json()["ended"][0]["status"], "waiting") << asked.out;
  auto question = WaitForEvent(id, "question");
  ASSERT_TRUE(question.is_object());
  EXPECT_EQ(question["kind"], "permission");
  EXPECT_EQ(question["items"][0]["prompt"],
            "Allow command: /bin/bash -lc 'echo hello-from-tool'?");
  auto answered = Baton({"answer", id, "1"}, env_);  // 1 = Allow
  EXPECT_EQ(answered.exit_code, 0) << answered.err;
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_FALSE(task.value("agent_session", "").empty());
  auto tools = EventsOfType(id, "tool");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["name"], "shell");
  EXPECT_EQ(tools[0]["input"], "echo hello-from-tool");
  EXPECT_TRUE(Has(Texts(id), "mock final answer")) << Texts(id);
  // codex's serverRequest/resolved after our answer withdraws nothing, and
  // configWarning and unknown notifications make no error.
  EXPECT_TRUE(EventsOfType(id, "question_withdrawn").empty());
  EXPECT_TRUE(EventsOfType(id, "error").empty()) << Events(id).dump();
  auto late = Baton({"answer", id, "1"}, env_);
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_TRUE(Has(late.err, "no open question")) << late.err;
}

TEST_F(CodexAgentTest, QuestionsByLabelSkipAndDenyWithStringIds) {
  std::string label = Delegate({"--agent", "codex", "ASK which"});
  std::string skip = Delegate({"--agent", "codex", "ASK STRINGID which"});
  std::string deny = Delegate({"--agent", "codex", "WRITE STRINGID a file"});
  for (const auto& id : {label, skip, deny})
    ASSERT_TRUE(WaitForEvent(id, "question").is_object()) << id;
  EXPECT_EQ(Baton({"answer", label, "postgres"}, env_).exit_code, 0);
  EXPECT_EQ(Baton({"answer", skip, "skip"}, env_).exit_code, 0);
  auto edit = WaitForEvent(deny, "question");
  EXPECT_EQ(edit["ref"], "req-0");  // A string id, kept as it came.
  EXPECT_EQ(edit["items"][0]["prompt"], "Allow edit: out.txt?");
  EXPECT_EQ(Baton({"answer", deny, "Deny"}, env_).exit_code, 0);
  for (const auto& id : {label, skip, deny})
    EXPECT_EQ(WaitEnd(id)["status"], "completed") << id;
  EXPECT_TRUE(Has(Texts(label), "mock final answer: Postgres")) << Texts(label);
  EXPECT_TRUE(Has(Texts(skip), "mock final answer: skipped")) << Texts(skip);
  EXPECT_FALSE(std::filesystem::exists(work_ + "/out.txt"));
}

TEST_F(CodexAgentTest, SteerGoesIntoTheTurnAndAFollowUpWaits) {
  std::string id = Delegate({"--agent", "codex", "SLOW work"});
  ASSERT_TRUE(WaitForEvent(id, "tool").is_object());
  auto steer = Baton({"send", "--steer", id, "STEER also this"}, env_);
  EXPECT_EQ(steer.out, id + ": m-1 steered\n") << steer.err;
  auto followup = Baton({"send", id, "then that"}, env_);
  EXPECT_EQ(followup.out, id + ": m-2 queued until the current turn ends\n");
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 2u) << Events(id).dump();
  EXPECT_EQ(results[0]["text"], "mock final answer (steer: STEER also this)");
  EXPECT_EQ(results[1]["text"],
            "mock final answer [history: 1 earlier prompts]");
}

TEST_F(CodexAgentTest, CodexResolvingItsOwnQuestionWithdrawsIt) {
  // The fake resolves its requestUserInput itself after 1 s, then works
  // 4 s more: the question closes, the task runs again, a wait waits for
  // the end, and a late answer is told the question was withdrawn.
  std::string id = Delegate({"--agent", "codex", "ASK AUTORESOLVE pick"});
  ASSERT_TRUE(WaitForEvent(id, "question").is_object());
  auto withdrawn = WaitForEvent(id, "question_withdrawn");
  ASSERT_TRUE(withdrawn.is_object());
  EXPECT_EQ(withdrawn["reason"], "codex resolved the request");
  EXPECT_EQ(Status(id, env_)["status"], "running");
  auto late = Baton({"answer", id, "1"}, env_);
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_TRUE(Has(late.err, "withdrawn by the agent")) << late.err;
  auto done = Baton({"--json", "wait", "--timeout", "20s", id}, env_);
  EXPECT_EQ(done.json()["ended"][0]["status"], "completed") << done.out;
  EXPECT_TRUE(Has(Texts(id), "mock final answer: auto")) << Texts(id);
  EXPECT_TRUE(EventsOfType(id, "answer").empty());
}

TEST_F(CodexAgentTest, KillWhileAskingInterruptsAndWithdrawsTheQuestion) {
  std::string id = Delegate({"--agent", "codex", "WRITE a file"});
  ASSERT_TRUE(WaitForEvent(id, "question").is_object());
  auto withdrawn = KillWhileAsking(id);
  ASSERT_TRUE(withdrawn.is_object());
  EXPECT_EQ(withdrawn["reason"], "the turn ended (interrupted)");
  auto results = EventsOfType(id, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["detail"], "interrupted");
  EXPECT_FALSE(std::filesystem::exists(work_ + "/out.txt"));
}

TEST_F(CodexAgentTest, ResumeByTaskIdAndByThreadId) {
  std::string first = Delegate({"--agent", "codex", "hello"});
  auto task = WaitEnd(first);
  ASSERT_EQ(task["status"], "completed");
  std::string thread = task.value("agent_session", "");
  ASSERT_FALSE(thread.empty());
  std::string second =
      Delegate({"--agent", "codex", "--resume", first, "again"});
  auto resumed = WaitEnd(second);
  EXPECT_EQ(resumed["status"], "completed");
  EXPECT_EQ(resumed["agent_session"], thread);
  EXPECT_TRUE(Has(Texts(second), "[history: 1 earlier prompts]"))
      << Texts(second);
  std::string third =
      Delegate({"--agent", "codex", "--resume", thread, "once more"});
  EXPECT_EQ(WaitEnd(third)["status"], "completed");
  EXPECT_TRUE(Has(Texts(third), "[history: 2 earlier prompts]"))
      << Texts(third);
  // A thread codex does not know: a clear failure.
  std::string bad =
      Delegate({"--agent", "codex", "--resume", "no-such-thread", "x"});
  auto failed = WaitEnd(bad);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_TRUE(Has(failed.value("detail", ""), "resume of no-such-thread"))
      << failed.dump();
}

TEST_F(CodexAgentTest, CrashFailureGarbageAndNoCli) {
  std::string crash = Delegate({"--agent", "codex", "CRASH now"});
  std::string fail = Delegate({"--agent", "codex", "FAIL please"});
  std::string garbage = Delegate({"--agent", "codex", "GARBAGE then fine"});
  auto crashed = WaitEnd(crash);
  EXPECT_EQ(crashed["status"], "failed");
  EXPECT_EQ(crashed["detail"],
            "exit code: 3; stderr: fake codex: crashed mid-turn");
  auto failed = WaitEnd(fail);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["detail"], "mock upstream failure");
  auto fine = WaitEnd(garbage);
  EXPECT_EQ(fine["status"], "completed");
  auto errors = EventsOfType(garbage, "error");
  ASSERT_EQ(errors.size(), 1u) << Events(garbage).dump();
  EXPECT_TRUE(Has(errors[0]["message"], "unreadable line from codex"));
  // Not installed: nothing is spawned, the error names the command.
  auto missing =
      Baton({"delegate", "--agent", "codex", "x"}, {{"PATH", "/usr/bin:/bin"}});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Has(missing.err, "agent codex: its CLI `codex` is not installed"))
      << missing.err;
}

// How many times batond asked the fake `codex app-server --help`.
int Probes(const std::string& codex_home) {
  std::ifstream log(codex_home + "/fake-probes.log");
  int lines = 0;
  for (std::string line; std::getline(log, line);)
    ++lines;
  return lines;
}

TEST_F(CodexAgentTest, CodexWithoutAppServerRunsThroughExec) {
  std::map<std::string, std::string> no_app_server = {
      {"FAKE_CODEX_NO_APP_SERVER", "1"}};
  auto env = env_;
  env.insert(no_app_server.begin(), no_app_server.end());
  auto delegated =
      Baton({"delegate", "--cwd", work_, "--agent", "codex", "hello"}, env);
  ASSERT_EQ(delegated.exit_code, 0) << delegated.err;
  std::string id = delegated.out.substr(0, delegated.out.find('\n'));
  // The CLI says it on stderr.
  EXPECT_TRUE(
      Has(delegated.err, "baton: " + id + ": this codex has no app-server"))
      << delegated.err;
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["agent"]["profile"], "codex");
  EXPECT_EQ(task["agent"]["adapter"], "codex-exec");
  std::string note = task["agent"].value("note", "");
  EXPECT_TRUE(Has(note,
                  "this codex has no app-server (app-server --help: "
                  "exit code 2: error: unrecognized subcommand "
                  "'app-server'); running it through codex exec"))
      << note;
  // The note is the task's first event, and in its transcript.
  auto events = Events(id);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["type"], "note");
  EXPECT_EQ(events[0]["seq"], 1);
  EXPECT_EQ(events[0]["text"], note);
  auto transcript = Baton({"output", id}, env_);
  EXPECT_TRUE(Has(transcript.out, "[note] this codex has no app-server"))
      << transcript.out;
  EXPECT_TRUE(Has(Texts(id), "mock final answer")) << Texts(id);
  std::string thread = task.value("agent_session", "");
  EXPECT_FALSE(thread.empty());
  // exec reads one prompt: a message is refused, saying how to go on.
  std::string slow = Delegate({"--agent", "codex", "SLOW work"}, no_app_server);
  ASSERT_TRUE(WaitForEvent(slow, "tool").is_object());
  auto refused = Baton({"send", slow, "more"}, env_);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(Has(refused.err, "codex exec runs one prompt per process"))
      << refused.err;
  EXPECT_EQ(WaitEnd(slow)["status"], "completed");
  // A resume goes on through exec, with the same thread, without asking.
  std::string next = Delegate({"--resume", id, "and then"}, no_app_server);
  auto resumed = WaitEnd(next);
  EXPECT_EQ(resumed["status"], "completed") << resumed.dump();
  EXPECT_EQ(resumed["agent"]["adapter"], "codex-exec");
  EXPECT_TRUE(Has(resumed["agent"].value("note", ""),
                  "resumes " + id + " through codex exec"))
      << resumed.dump();
  EXPECT_EQ(resumed["agent_session"], thread);
  EXPECT_TRUE(Has(Texts(next), "[history: 1 earlier prompts]")) << Texts(next);
  // Asked once: the answer is kept for this codex file.
  EXPECT_EQ(Probes(env_["CODEX_HOME"]), 1);
}

TEST_F(CodexAgentTest, CodexTakingAppServerForAPromptRunsThroughExec) {
  // Like codex 0.171.0 for any word that is not a subcommand: the word is
  // the prompt, and `--help` prints the top-level help with exit 0.
  std::string id = Delegate({"--agent", "codex", "hello"},
                            {{"FAKE_CODEX_NO_APP_SERVER", "prompt"}});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["agent"]["adapter"], "codex-exec");
  EXPECT_TRUE(Has(task["agent"].value("note", ""),
                  "exit code 0, but with the top-level help (Usage: codex "
                  "[OPTIONS] [PROMPT]): app-server was taken for a prompt"))
      << task.dump();
  EXPECT_TRUE(Has(Texts(id), "mock final answer")) << Texts(id);
}

TEST_F(CodexAgentTest, AProbeWithoutAnswerKeepsAppServerAndSaysSo) {
  // `app-server --help` hangs past the probe's 5 s: killed, codex stays.
  auto started = std::chrono::steady_clock::now();
  std::string id = Delegate({"--agent", "codex", "hello"},
                            {{"FAKE_CODEX_PROBE_SLEEP", "30"}});
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(15));
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["agent"]["adapter"], "codex");
  EXPECT_EQ(task["agent"].value("note", ""),
            "could not tell whether this codex has app-server (no answer "
            "within 5 s); running app-server");
}

TEST_F(CodexAgentTest, DelegatesDuringTheProbeWaitForItAndItRunsOnce) {
  // A slow `app-server --help` (2 s): three delegates at once all wait
  // for the one probe, and batond answers other requests meanwhile.
  std::map<std::string, std::string> slow_probe = {
      {"FAKE_CODEX_PROBE_SLEEP", "2"}};
  std::vector<std::string> ids(3);
  std::atomic<int> answered = 0;
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back([&, i] {
      ids[i] = Delegate({"--agent", "codex", "hello " + std::to_string(i)},
                        slow_probe);
      ++answered;
    });
  }
  // Once batond logs the probe, all three wait for it. (Not a fixed
  // sleep: under the sanitizers batond itself may take longer to start.)
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (ReadFile(home_ + "/batond.log").value_or("").find("probing") ==
             std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  auto status = Baton({"--json", "daemon", "status"}, env_);
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(answered, 0);  // Still waiting for the probe.
  for (auto& client : clients)
    client.join();
  for (const auto& id : ids) {
    auto task = WaitEnd(id);
    EXPECT_EQ(task["status"], "completed") << task.dump();
    EXPECT_EQ(task["agent"]["adapter"], "codex");
    EXPECT_FALSE(task["agent"].contains("note")) << task.dump();
  }
  EXPECT_EQ(Probes(env_["CODEX_HOME"]), 1);
  // Later delegates take the kept answer.
  EXPECT_EQ(WaitEnd(Delegate({"--agent", "codex", "again"}))["status"],
            "completed");
  EXPECT_EQ(Probes(env_["CODEX_HOME"]), 1);
}

TEST_F(CodexAgentTest, ExecRunsOnePromptAndResumesInANewTask) {
  std::string id = Delegate({"--agent", "codex-exec", "TOOL -x looks odd"});
  // A message while it runs is refused at once, saying how to go on.
  std::string slow = Delegate({"--agent", "codex-exec", "SLOW work"});
  ASSERT_TRUE(WaitForEvent(slow, "tool").is_object());
  for (const char* flag : {"--steer", "--"}) {
    auto refused = Baton({"send", flag, slow, "more"}, env_);
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_TRUE(Has(refused.err, "codex exec runs one prompt per process"))
        << refused.err;
  }
  EXPECT_EQ(WaitEnd(slow)["status"], "completed");
  EXPECT_TRUE(EventsOfType(slow, "message").empty());
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  std::string thread = task.value("agent_session", "");
  EXPECT_FALSE(thread.empty());
  auto tools = EventsOfType(id, "tool");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["input"], "echo hello-from-tool");
  EXPECT_TRUE(Has(Texts(id), "mock final answer")) << Texts(id);
  std::string next =
      Delegate({"--agent", "codex-exec", "--resume", id, "and then"});
  auto resumed = WaitEnd(next);
  EXPECT_EQ(resumed["status"], "completed");
  EXPECT_EQ(resumed["agent_session"], thread);
  EXPECT_TRUE(Has(Texts(next), "[history: 1 earlier prompts]")) << Texts(next);
  std::string fail = Delegate({"--agent", "codex-exec", "FAIL"});
  std::string crash = Delegate({"--agent", "codex-exec", "CRASH"});
  auto failed = WaitEnd(fail);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["detail"], "mock upstream failure");
  auto crashed = WaitEnd(crash);
  EXPECT_EQ(crashed["status"], "failed");
  EXPECT_EQ(crashed["detail"], "exit code: 3; stderr: fake codex: crashed");
}

}  // namespace
}  // namespace baton::testing
