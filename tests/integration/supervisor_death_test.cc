// kill -9 of the supervisor, alone or with batond: its tasks stay in
// reach. A new supervisor adopts them, keeps them killable and under their
// deadlines, and learns their exit codes (issue 12, finding 8;
// doc/supervisor.md, "When the supervisor dies").
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SupervisorDeathTest : public BatonTest {
 protected:
  void KillSupervisorHard(int pid) {
    ASSERT_GT(pid, 0);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    ASSERT_TRUE(WaitForPidGone(pid, seconds(5)));
  }
  std::string Gated(const std::string& gate, int code) {
    return Run("while [ ! -e " + home_ + "/" + gate +
               " ]; do sleep 0.01; done; exit " + std::to_string(code));
  }
  void Open(const std::string& gate) { std::ofstream{home_ + "/" + gate}; }
};

TEST_F(SupervisorDeathTest, ItsTasksStayKillableTimedAndTheirEndsKnown) {
  std::string gated = Gated("go", 7);
  std::string sleeper = Run("sleep 60");
  std::string timed = Run("sleep 60", {"--timeout", "5s"});
  int sleeper_pid = WaitStarted(sleeper)["pid"];
  ASSERT_EQ(WaitStarted(gated)["status"], "running");
  ASSERT_EQ(WaitStarted(timed)["status"], "running");
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  KillSupervisorHard(supervisor_pid);

  // batond starts a new supervisor at once; status never shows the dead.
  int now_pid = DaemonPids().second;
  EXPECT_NE(now_pid, supervisor_pid);
  for (int i = 0; i < 500 && now_pid == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    now_pid = DaemonPids().second;
  }
  EXPECT_GT(now_pid, 0);
  EXPECT_NE(now_pid, supervisor_pid);
  EXPECT_EQ(DaemonPids().first, daemon_pid);

  EXPECT_EQ(Status(sleeper)["status"], "running");
  auto killed = Baton({"kill", "--grace", "200ms", sleeper});
  EXPECT_EQ(killed.out, sleeper + ": killed\n") << killed.err;
  Baton({"wait", "--timeout", "10s", sleeper});
  EXPECT_EQ(Status(sleeper)["status"], "killed");
  EXPECT_TRUE(WaitForPidGone(sleeper_pid, seconds(2)));

  Open("go");
  Baton({"wait", "--timeout", "10s", gated});
  EXPECT_EQ(Status(gated)["status"], "failed");
  EXPECT_EQ(Status(gated)["detail"], "exit code: 7");

  Baton({"wait", "--timeout", "10s", timed});
  EXPECT_EQ(Status(timed)["status"], "killed");
  EXPECT_EQ(Status(timed)["detail"], "timed out after 5s");
}

// Both die. Tasks that end while neither runs keep their exit codes (the
// keeper records them); the rest are adopted when batond comes back.
TEST_F(SupervisorDeathTest, BatondAndTheSupervisorDieTogether) {
  std::string quick = Run("sleep 0.5; exit 3");
  std::string gated = Gated("go", 4);
  std::string timed = Run("sleep 60", {"--timeout", "6s"});
  int quick_pid = WaitStarted(quick)["pid"];
  ASSERT_EQ(WaitStarted(gated)["status"], "running");
  ASSERT_EQ(WaitStarted(timed)["status"], "running");
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  KillDaemonHard();
  KillSupervisorHard(supervisor_pid);
  std::this_thread::sleep_for(milliseconds(1000));  // quick ends meanwhile.

  auto task = Status(quick);  // A new batond, and a new supervisor.
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_EQ(task["detail"], "exit code: 3") << task.dump();
  EXPECT_EQ(task["pid"], quick_pid);
  auto [new_daemon, new_supervisor] = DaemonPids();
  EXPECT_NE(new_daemon, daemon_pid);
  EXPECT_NE(new_supervisor, supervisor_pid);
  EXPECT_GT(new_supervisor, 0);
  EXPECT_EQ(Status(gated)["status"], "running");

  Open("go");
  Baton({"wait", "--timeout", "10s", gated});
  EXPECT_EQ(Status(gated)["detail"], "exit code: 4");
  Baton({"wait", "--timeout", "10s", timed});
  EXPECT_EQ(Status(timed)["status"], "killed");
  EXPECT_EQ(Status(timed)["detail"], "timed out after 6s");
}

}  // namespace
}  // namespace baton::testing
