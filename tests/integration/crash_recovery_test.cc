// kill -9 of batond mid-task: nothing is stopped, lost or mis-reported
// (issue #2, "Nothing is lost").
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class CrashRecoveryTest : public BatonTest {};

TEST_F(CrashRecoveryTest, TasksSurviveAndAreReportedTruthfully) {
  // Long tasks outlive the crash and the restart; short ones end while no
  // batond runs. Gates, not sleeps: each ends when the test says so, however
  // slowly batond runs (sanitizers, a loaded machine).
  std::string short_gate = home_ + "/short-gate";
  std::string long_gate = home_ + "/long-gate";
  auto after = [](const std::string& gate, const std::string& then) {
    return "while [ ! -e " + gate + " ]; do sleep 0.01; done; " + then;
  };
  std::string long_ok = Run(after(long_gate, "seq 1 20000; echo long done"));
  std::string long_bad =
      Run(after(long_gate, "sleep 0.2; echo failing >&2; exit 5"));
  std::string short_ok = Run(after(short_gate, "seq 1 50000"));
  std::string short_bad = Run(after(short_gate, "exit 3"));
  std::string short_sig = Run(after(short_gate, "kill -KILL $$"));
  int long_pid = WaitStarted(long_ok)["pid"];
  ASSERT_EQ(WaitStarted(long_bad)["status"], "running");
  std::vector<int> short_pids;
  for (const auto& id : {short_ok, short_bad, short_sig}) {
    auto task = WaitStarted(id);
    ASSERT_EQ(task["status"], "running");
    short_pids.push_back(task["pid"]);
  }
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  ASSERT_GT(supervisor_pid, 0);

  KillDaemonHard();
  std::ofstream{short_gate};  // Short ones end now, with no batond.
  for (int pid : short_pids) {
    for (int i = 0; i < 1000 && kill(pid, 0) == 0; ++i)
      std::this_thread::sleep_for(milliseconds(10));
    EXPECT_NE(kill(pid, 0), 0) << "a short task did not end";
  }
  EXPECT_EQ(kill(long_pid, 0), 0) << "a running task died with batond";

  // The next command starts a new batond, which re-adopts everything.
  auto short_ok_task = Status(short_ok);
  EXPECT_NE(DaemonPids().first, daemon_pid);
  EXPECT_EQ(DaemonPids().second, supervisor_pid);
  EXPECT_EQ(short_ok_task["status"], "completed");
  EXPECT_EQ(Status(short_bad)["detail"], "exit code: 3");
  EXPECT_EQ(Status(short_sig)["detail"], "signal: SIGKILL");
  EXPECT_EQ(Status(short_sig)["status"], "failed");
  auto long_task = Status(long_ok);
  EXPECT_EQ(long_task["status"], "running");
  EXPECT_EQ(long_task["pid"], long_pid);

  // Waits on re-adopted tasks are woken by their real exits.
  std::ofstream{long_gate};
  auto waited = Baton({"--json", "wait", "--all", long_ok, long_bad});
  EXPECT_EQ(waited.exit_code, 1);
  EXPECT_EQ(Status(long_ok)["status"], "completed");
  EXPECT_EQ(Status(long_bad)["detail"], "exit code: 5");

  // Every byte of output is there.
  std::string expected_short, expected_long;
  for (int i = 1; i <= 50000; ++i)
    expected_short += std::to_string(i) + "\n";
  for (int i = 1; i <= 20000; ++i)
    expected_long += std::to_string(i) + "\n";
  expected_long += "long done\n";
  EXPECT_EQ(Baton({"output", short_ok}).out, expected_short);
  EXPECT_EQ(Baton({"output", long_ok}).out, expected_long);
  EXPECT_EQ(Baton({"output", long_bad}).out, "failing\n");
  EXPECT_EQ(Run("true"), "shell-6");  // Numbering went on.
}

// A waiter may hear of a plain task's end before batond has committed it
// (doc/supervisor.md, "Exit records"). batond killed the moment the reply
// is read, before or after its commit: the restarted batond must report
// the same end.
TEST_F(CrashRecoveryTest, AnEndToldToAWaiterSurvivesAKillRightAfter) {
  for (int code = 1; code <= 6; ++code) {
    std::string gate = home_ + "/gate" + std::to_string(code);
    std::string id =
        Run("while [ ! -e " + gate + " ]; do sleep 0.005; done; exit " +
            std::to_string(code));
    ASSERT_EQ(WaitStarted(id)["status"], "running");
    int daemon_pid = DaemonPids().first;
    auto client = ConnectToDaemon();
    ASSERT_TRUE(client) << client.error().message;
    ASSERT_TRUE(client->Send(WaitRequest{.tasks = {id}}));
    std::ofstream{gate};
    auto reply = client->ReadReply(seconds(10));
    ASSERT_EQ(kill(daemon_pid, SIGKILL), 0);
    ASSERT_TRUE(reply) << reply.error().message;
    auto result = DecodeResult<WaitReply>(*reply, "wait");
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_EQ(result->ended.size(), 1u);
    const TaskRecord& told = result->ended[0].task;
    ASSERT_EQ(told.detail, "exit code: " + std::to_string(code));
    ASSERT_TRUE(WaitForPidGone(daemon_pid, seconds(5)));
    auto task = Status(id);  // Starts a new batond, which re-adopts.
    EXPECT_EQ(task["status"], TaskStatusName(told.status)) << task.dump();
    EXPECT_EQ(task["detail"], told.detail) << task.dump();
    EXPECT_EQ(task["ended_at"], FormatIsoTime(told.ended_ms)) << task.dump();
  }
}

TEST_F(CrashRecoveryTest, KillAfterRestartStillReachesTheGroup) {
  std::string id = Run("trap '' TERM; while :; do sleep 0.05; done");
  KillDaemonHard();
  auto killed = Baton({"kill", "--grace", "200ms", id});
  EXPECT_EQ(killed.out, id + ": killed\n") << killed.err;
  Baton({"wait", "--timeout", "10s", id});
  EXPECT_EQ(Status(id)["status"], "killed");
}

TEST_F(CrashRecoveryTest, TimeoutHoldsWhileNoDaemonRuns) {
  std::string id = Run("sleep 30", {"--timeout", "500ms"});
  KillDaemonHard();
  std::this_thread::sleep_for(milliseconds(1200));
  auto task = Status(id);
  EXPECT_EQ(task["status"], "killed");
  EXPECT_EQ(task["detail"], "timed out after 500ms");
}

// Issue 12, findings 5 and 12: 200 runs pipelined on one connection, and
// batond killed the moment the first reply arrives (between the replies
// and the spawns of that loop turn, often). Every answered task must run
// exactly once, and show its pid and start even if batond never heard of
// the start.
TEST_F(CrashRecoveryTest, AnsweredRunsRunExactlyOnceWhenBatondDies) {
  std::string ran = home_ + "/ran";
  std::set<std::string> answered;
  for (int trial = 0; trial < 4; ++trial) {
    ASSERT_EQ(Baton({"ls"}).exit_code, 0);  // Starts batond.
    int daemon_pid = DaemonPids().first;
    auto client = ConnectToDaemon();
    ASSERT_TRUE(client) << client.error().message;
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(client->Send(RunRequest{
          .command = "echo $BATON_TASK_ID >> " + ran,
          .cwd = home_,
          .base_env = std::vector<std::string>{"PATH=/usr/bin:/bin"}}));
    }
    auto first = client->ReadReply(seconds(10));
    ASSERT_EQ(kill(daemon_pid, SIGKILL), 0);
    for (auto reply = std::move(first); reply;
         reply = client->ReadReply(milliseconds(500))) {
      if (auto run = DecodeResult<TaskReply>(*reply, "run"))
        answered.insert(run->task.task.id.ToString());
    }
    ASSERT_TRUE(WaitForPidGone(daemon_pid, seconds(5)));
  }
  ASSERT_FALSE(answered.empty());
  std::vector<std::string> wait = {"wait", "--all", "--timeout", "60s"};
  wait.insert(wait.end(), answered.begin(), answered.end());
  auto waited = Baton(wait, {}, seconds(90));
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;

  std::map<std::string, int> runs;
  std::istringstream lines(ReadFile(ran).value_or(""));
  for (std::string line; std::getline(lines, line);)
    ++runs[line];
  int never = 0, twice = 0;
  for (const std::string& id : answered) {
    never += runs[id] == 0;
    twice += runs[id] > 1;
    auto task = Status(id);
    EXPECT_EQ(task["status"], "completed") << task.dump();
    EXPECT_TRUE(task["pid"].is_number()) << task.dump();
    EXPECT_TRUE(task["started_at"].is_string()) << task.dump();
  }
  EXPECT_EQ(never, 0) << "of " << answered.size() << " answered tasks";
  EXPECT_EQ(twice, 0) << "of " << answered.size() << " answered tasks";
}

}  // namespace
}  // namespace baton::testing
