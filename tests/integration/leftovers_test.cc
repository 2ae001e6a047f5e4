// A task leaves nothing behind: what its leader leaves in its process
// group is stopped as a kill stops it, and the task ends once the group is
// empty (issue 13; doc/supervisor.md, "Leftovers").
#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "baton/util/file_util.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::seconds;

// Processes of ours whose command line is exactly `argv`.
int CountProcesses(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const std::string& arg : argv)
    wanted += arg + '\0';
  int count = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(opendir("/proc"), closedir);
  while (dirent* entry = proc ? readdir(proc.get()) : nullptr) {
    std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    if (ReadFile("/proc/" + name + "/cmdline").value_or("") == wanted)
      ++count;
  }
  return count;
}

class LeftoversTest : public BatonTest {};

TEST_F(LeftoversTest, AShellTaskLeavesNothingBehind) {
  std::string id = Run("sleep 77.125 & echo done");
  auto waited = Baton({"wait", "--timeout", "10s", id});
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  auto task = Status(id);
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(task["detail"], "exit code: 0; stopped 1 leftover process");
  EXPECT_EQ(CountProcesses({"sleep", "77.125"}), 0);
  EXPECT_EQ(Baton({"output", id}).out, "done\n");
}

// Issue 35, finding 9: a child that left the task's session (setsid)
// outlived a task without limits, which said `completed` with no note. It
// comes to the supervisor when its parent dies, and is stopped as a
// leftover, found by the task's BATON_TASK_ID.
TEST_F(LeftoversTest, ASetsidEscapeeOfATaskWithoutLimitsIsStopped) {
  std::string id = Run("setsid sleep 83.125 & echo started; sleep 0.2");
  auto waited = Baton({"wait", "--timeout", "15s", id});
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  auto task = Status(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["detail"], "exit code: 0; stopped 1 leftover process")
      << task.dump();
  for (int i = 0; i < 200 && CountProcesses({"sleep", "83.125"}) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(CountProcesses({"sleep", "83.125"}), 0);
}

// A leftover that ignores SIGTERM runs until the grace's SIGKILL; the task
// is not over before, so `daemon stop --kill-tasks` stops it too.
TEST_F(LeftoversTest, DaemonStopKillTasksLeavesNoLeftover) {
  std::string id = Run("trap '' TERM; sleep 78.125 & echo started");
  for (int i = 0; i < 500 && Baton({"output", id}).out.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Status(id)["status"], "running");  // Its group is not empty.
  auto stopped = Baton({"daemon", "stop", "--kill-tasks"}, {}, seconds(20));
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(CountProcesses({"sleep", "78.125"}), 0);
}

// The lease drain stops the whole group as well: a session's task whose
// leader is gone but whose group is not is still the session's to stop.
TEST_F(LeftoversTest, TheLeaseDrainLeavesNoLeftover) {
  std::map<std::string, std::string> env = {{"BATON_SESSION", "agent"},
                                            {"BATON_LEASE", "300ms"}};
  std::string id = Run("trap '' TERM; sleep 79.125 & echo started", {}, env);
  for (int i = 0; i < 500 && Baton({"output", id}, env).out.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  AttachAndLeave("agent");  // The lease starts.
  Baton({"wait", "--timeout", "15s", id}, env);
  auto task = Status(id, env);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  // Its leader had ended by itself; its leftover was stopped.
  EXPECT_EQ(task["detail"],
            "killed: session lease expired; stopped 1 leftover process")
      << task.dump();
  EXPECT_EQ(CountProcesses({"sleep", "79.125"}), 0);
}

}  // namespace
}  // namespace baton::testing
