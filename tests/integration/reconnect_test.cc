// Waits and follows survive a kill -9 of batond (issue 13, "Waits and
// follows survive a batond restart"): they connect again, batond starts
// again, and they report the truth when the tasks end; they fail with exit
// code 2 only when batond cannot be brought back within 10 s. The same
// holds when `baton daemon upgrade` replaces batond with another build.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "baton/ipc/unix_socket.h"
#include "baton/util/state_paths.h"
#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Until batond has `count` client connections (a status call counts as
// one), so that a waiter is known to be connected before the kill.
template <class Base>
class WithConnections : public Base {
 protected:
  bool WaitForConnections(int count) {
    for (int i = 0; i < 1000; ++i) {
      auto doc = this->Baton({"--json", "daemon", "status"}).json();
      if (doc.is_object() && doc.value("connections", 0) >= count)
        return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }
};

class ReconnectTest : public WithConnections<BatonTest> {
 protected:
  // A command that runs until `gate` exists, then runs `then`.
  std::string Gated(const std::string& gate, const std::string& then) {
    return "while [ ! -e " + gate + " ]; do sleep 0.01; done; " + then;
  }
};

TEST_F(ReconnectTest, WaitSurvivesAKillOfBatond) {
  std::string gate = home_ + "/gate";
  std::string id = Run(Gated(gate, "exit 3"));
  ASSERT_EQ(WaitStarted(id)["status"], "running");
  auto waiter = StartBaton({"wait", "--timeout", "60s", id});
  ASSERT_TRUE(WaitForConnections(2));
  int old_daemon = DaemonPids().first;
  KillDaemonHard();
  std::ofstream{gate};
  int code = waiter->Finish(seconds(60));
  EXPECT_EQ(code, 1) << waiter->out() << waiter->err();
  EXPECT_EQ(waiter->out(), id + " failed (exit code: 3)\n") << waiter->err();
  EXPECT_EQ(waiter->err().find("error"), std::string::npos) << waiter->err();
  EXPECT_NE(DaemonPids().first, old_daemon);  // A new batond answered.
}

// `baton daemon upgrade` from a second build (a copy of this one at
// another path): the running batond stops without touching its tasks, the
// second file's batond starts and takes over the supervisor, and a client
// waiting on the old one reconnects and reports the tasks' true ends
// (doc/install.md, "Upgrades").
TEST_F(ReconnectTest, TasksAndAWaitOutliveADaemonUpgrade) {
  std::string gate = home_ + "/gate";
  std::string passing = Run(Gated(gate, "echo one"));
  std::string failing = Run(Gated(gate, "echo two; exit 3"));
  ASSERT_EQ(WaitStarted(failing)["status"], "running");
  auto waiter =
      StartBaton({"wait", "--all", "--timeout", "60s", passing, failing});
  ASSERT_TRUE(WaitForConnections(2));
  auto [old_daemon, supervisor] = DaemonPids();

  std::string second = home_ + "/second/baton";
  std::filesystem::create_directories(home_ + "/second");
  std::filesystem::copy_file(binary_, second);
  binary_ = second;
  auto upgraded = Baton({"daemon", "upgrade"});
  ASSERT_EQ(upgraded.exit_code, 0) << upgraded.out << upgraded.err;
  auto [new_daemon, new_supervisor] = DaemonPids();
  EXPECT_NE(new_daemon, old_daemon);
  EXPECT_EQ(new_supervisor, supervisor);
  EXPECT_TRUE(WaitForPidGone(old_daemon, seconds(1)));
  EXPECT_NE(upgraded.out.find(
                fmt::format("batond upgraded: pid {} (baton ", old_daemon)),
            std::string::npos)
      << upgraded.out;
  EXPECT_NE(upgraded.out.find(fmt::format("-> pid {} (baton ", new_daemon)),
            std::string::npos)
      << upgraded.out;
  EXPECT_NE(upgraded.out.find(", " + second + ")\n"), std::string::npos)
      << upgraded.out;
  EXPECT_NE(upgraded.out.find(fmt::format(
                "supervisor pid {} kept, with 2 live tasks", supervisor)),
            std::string::npos)
      << upgraded.out;
  auto status = Baton({"--json", "daemon", "status"}).json();
  EXPECT_EQ(status["executable"], second);
  EXPECT_EQ("baton " + status.value("version", "?") + "\n",
            Baton({"--version"}).out);

  std::ofstream{gate};
  EXPECT_EQ(waiter->Finish(seconds(60)), 1) << waiter->out() << waiter->err();
  EXPECT_NE(waiter->out().find(passing + " completed (exit code: 0)"),
            std::string::npos)
      << waiter->out();
  EXPECT_NE(waiter->out().find(failing + " failed (exit code: 3)"),
            std::string::npos)
      << waiter->out();
  EXPECT_EQ(Baton({"output", failing}).out, "two\n");
}

// Nothing to replace: it says so, and starts nothing.
TEST_F(ReconnectTest, AnUpgradeWithNoBatondStartsNothing) {
  auto upgraded = Baton({"daemon", "upgrade"});
  EXPECT_EQ(upgraded.exit_code, 0) << upgraded.err;
  EXPECT_NE(upgraded.out.find("batond is not running; the next command "
                              "starts this baton's"),
            std::string::npos)
      << upgraded.out;
  EXPECT_EQ(Baton({"daemon", "status"}).exit_code, 1);
}

TEST_F(ReconnectTest, WaitKeepsItsDeadlineAcrossAKill) {
  // The deadline is the first one, not a fresh timeout after the restart.
  std::string id = Run("sleep 60");
  ASSERT_EQ(WaitStarted(id)["status"], "running");
  auto start = std::chrono::steady_clock::now();
  auto waiter = StartBaton({"wait", "--timeout", "3s", id});
  ASSERT_TRUE(WaitForConnections(2));
  KillDaemonHard();
  int code = waiter->Finish(seconds(60));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(code, 124) << waiter->out() << waiter->err();
  EXPECT_EQ(waiter->out(), "timed out; still running: " + id + "\n");
  EXPECT_LT(took, seconds(3) + seconds(10));
  EXPECT_EQ(Baton({"kill", id}).exit_code, 0);
}

TEST_F(ReconnectTest, OutputFollowPrintsEveryLineOnceAcrossAKill) {
  std::string gate1 = home_ + "/gate1";
  std::string gate2 = home_ + "/gate2";
  std::string id = Run("seq 1 200; " + Gated(gate1, "seq 201 400; ") +
                       Gated(gate2, "") + " seq 401 600");
  ASSERT_EQ(WaitStarted(id)["status"], "running");
  auto follower = StartBaton({"output", "--follow", id});
  ASSERT_TRUE(follower->ReadUntil("\n200\n", seconds(30))) << follower->err();
  ASSERT_TRUE(WaitForConnections(2));
  KillDaemonHard();
  // Output that comes while no batond runs, then more after the restart.
  std::ofstream{gate1};
  ASSERT_TRUE(follower->ReadUntil("\n400\n", seconds(30))) << follower->err();
  std::ofstream{gate2};
  int code = follower->Finish(seconds(60));
  EXPECT_EQ(code, 0) << follower->err();
  std::string expected;
  for (int i = 1; i <= 600; ++i)
    expected += std::to_string(i) + "\n";
  EXPECT_EQ(follower->out(), expected) << follower->err();
  EXPECT_EQ(Status(id)["status"], "completed");
}

TEST_F(ReconnectTest, AWaitAndAFollowGiveUpWhenBatondCannotComeBackIn10s) {
  std::string gate = home_ + "/gate";
  std::string id = Run(Gated(gate, "true"));
  ASSERT_EQ(WaitStarted(id)["status"], "running");
  auto waiter = StartBaton({"wait", id});
  auto follower = StartBaton({"output", "--follow", id});
  ASSERT_TRUE(WaitForConnections(3));
  // A directory where batond's socket goes, put there before the kill (the
  // waiter reconnects at once): nothing can connect there, and no new
  // batond can listen there. The waiter's connection does not need the
  // path.
  std::string socket = StatePaths{home_, home_}.daemon_socket();
  int daemon_pid = DaemonPids().first;
  ASSERT_GT(daemon_pid, 0);
  std::filesystem::rename(socket, socket + ".moved");
  std::filesystem::create_directory(socket);
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(daemon_pid, SIGKILL), 0);
  ASSERT_TRUE(WaitForPidGone(daemon_pid, seconds(5)));
  int code = waiter->Finish(seconds(60));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(code, 2) << waiter->out() << waiter->err();
  EXPECT_NE(waiter->err().find("could not bring batond back within 10 s"),
            std::string::npos)
      << waiter->err();
  EXPECT_GE(took, seconds(9));
  EXPECT_LT(took, seconds(30));
  EXPECT_EQ(follower->Finish(seconds(30)), 2)
      << follower->out() << follower->err();
  EXPECT_NE(follower->err().find("could not bring batond back within 10 s"),
            std::string::npos)
      << follower->err();
  // Put things right, so that the task can be collected and cleaned up.
  std::filesystem::remove(socket);
  std::filesystem::remove(socket + ".moved");
  std::ofstream{gate};
  EXPECT_EQ(Baton({"wait", "--timeout", "30s", id}).exit_code, 0);
}

class ReconnectAgentTest : public WithConnections<FakeAgentTest> {};

TEST_F(ReconnectAgentTest, EventsFollowPrintsEveryEventOnceAcrossAKill) {
  // 6 s inside the turn: the follower's connections must still be open
  // when they are counted, on a loaded machine too (2 s was not, once).
  std::string id = Delegate({"a SLOW6 turn"});
  auto follower = StartBaton({"events", "--follow", id}, env_);
  ASSERT_TRUE(follower->ReadUntil("\n", seconds(30))) << follower->err();
  // Its events connection, its wait's, and the status call.
  ASSERT_TRUE(WaitForConnections(3));
  KillDaemonHard();
  int code = follower->Finish(seconds(60));
  EXPECT_EQ(code, 0) << follower->err();
  EXPECT_EQ(Status(id, env_)["status"], "completed");
  auto all = Baton({"events", id}, env_);
  EXPECT_NE(all.out.find("turn ended"), std::string::npos) << all.out;
  EXPECT_EQ(follower->out(), all.out) << follower->err();
}

TEST_F(ReconnectAgentTest, EventsFollowKeepsReconnectingWhileBatondDropsIt) {
  // A batond that is still dying can accept a reconnect and then drop it.
  // Here a stand-in at batond's socket drops every connection for a second
  // after the kill; the follower must keep trying (within its 10 s), then
  // start a batond of its own, not give up after one dropped reconnect.
  // 6 s inside the turn: the follower's connections are counted while it
  // runs, on a loaded machine too (with 2 s, a CI run once counted after
  // the turn had ended and the follower had left).
  std::string id = Delegate({"a SLOW6 turn"});
  auto follower = StartBaton({"events", "--follow", id}, env_);
  ASSERT_TRUE(follower->ReadUntil("\n", seconds(30))) << follower->err();
  ASSERT_TRUE(WaitForConnections(3));
  int daemon_pid = DaemonPids().first;
  ASSERT_GT(daemon_pid, 0);
  std::string socket = StatePaths{home_, home_}.daemon_socket();
  std::filesystem::rename(socket, socket + ".moved");
  auto stand_in = ListenUnix(socket);
  ASSERT_TRUE(stand_in) << stand_in.error().message;
  ASSERT_EQ(kill(daemon_pid, SIGKILL), 0);
  ASSERT_TRUE(WaitForPidGone(daemon_pid, seconds(5)));
  std::filesystem::remove(socket + ".moved");
  int dropped = 0;
  auto until = std::chrono::steady_clock::now() + seconds(1);
  while (std::chrono::steady_clock::now() < until) {
    pollfd pfd{stand_in->get(), POLLIN, 0};
    if (::poll(&pfd, 1, 10) > 0 && AcceptSameUid(stand_in->get()))
      ++dropped;  // The accepted descriptor closes at once.
  }
  std::filesystem::remove(socket);
  stand_in->reset();
  EXPECT_GE(dropped, 2);  // The wait's reconnect and the events call's.
  int code = follower->Finish(seconds(60));
  EXPECT_EQ(code, 0) << follower->err();
  auto all = Baton({"events", id}, env_);
  EXPECT_NE(all.out.find("turn ended"), std::string::npos) << all.out;
  EXPECT_EQ(follower->out(), all.out) << follower->err();
}

}  // namespace
}  // namespace baton::testing
