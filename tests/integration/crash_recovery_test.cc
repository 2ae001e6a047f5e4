// kill -9 of batond mid-task: nothing is stopped, lost or mis-reported
// (issue #2, "Nothing is lost").
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "baton/util/clock.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class CrashRecoveryTest : public BatonTest {};

TEST_F(CrashRecoveryTest, TasksSurviveAndAreReportedTruthfully) {
  // Long tasks outlive the crash and the restart; short ones end while no
  // batond runs.
  std::string long_ok = Run("sleep 2; seq 1 20000; echo long done");
  std::string long_bad = Run("sleep 2.2; echo failing >&2; exit 5");
  std::string short_ok = Run("sleep 0.3; seq 1 50000");
  std::string short_bad = Run("sleep 0.3; exit 3");
  std::string short_sig = Run("sleep 0.3; kill -KILL $$");
  int long_pid = WaitStarted(long_ok)["pid"];
  for (const auto& id : {long_bad, short_ok, short_bad, short_sig}) {
    ASSERT_EQ(WaitStarted(id)["status"], "running");
  }
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  ASSERT_GT(supervisor_pid, 0);

  KillDaemonHard();
  std::this_thread::sleep_for(milliseconds(1000));  // Short ones end now.
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
  EXPECT_EQ(killed.out, id + ": requested\n") << killed.err;
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

}  // namespace
}  // namespace baton::testing
