// Hard limits on a task (issue 16; doc/limits.md): --memory, --cpus and
// --pids, held by a cgroup where batond's supervisor may make one (root
// here and in CI: cgroup v1 controllers, or a delegated cgroup v2 subtree),
// else by an rlimit (BATON_LIMITS=rlimit does without cgroups, as a
// machine without them). Each test drives the real daemon and CLI and
// watches what the kernel did to the task's processes.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A memory hog: tail keeps a line without end in memory, growing by what
// head feeds it, up to 1 GiB.
constexpr char kHog[] = "head -c 1G /dev/zero | tail; echo survived";

class HardLimitsTest : public BatonTest {
 protected:
  // The ended task's record, after `wait`.
  nlohmann::json WaitEnded(const std::string& id) {
    auto waited = Baton({"--json", "wait", "--timeout", "60s", id});
    EXPECT_EQ(waited.json()["ended"].size(), 1u) << waited.out << waited.err;
    return Status(id);
  }
  // Whether a cgroup holds `limit` of `task`. A test that needs one is
  // skipped where baton runs as another user than root (who may have no
  // cgroup to write); as root, here and in CI, a cgroup must hold it.
  bool HeldByCgroup(const nlohmann::json& task, const std::string& limit) {
    std::string held = task.value("limits_held_by", "");
    size_t at = held.find("cgroup v");
    bool by_cgroup =
        at != std::string::npos && held.find(limit, at) < held.find(';', at);
    EXPECT_TRUE(by_cgroup || ::geteuid() != 0)
        << "as root, no cgroup holds " << limit << ": " << task.dump();
    return by_cgroup;
  }
};

TEST_F(HardLimitsTest, AMemoryHogIsKilledAtItsCgroupLimitAndFailsOutOfMemory) {
  std::string id = Run(kHog, {"--memory", "64M"});
  auto task = WaitEnded(id);
  if (!HeldByCgroup(task, "memory"))
    GTEST_SKIP() << "memory is held by no cgroup here: " << task.dump();
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_EQ(task["detail"], "out of memory: the limit of 64 MiB was reached")
      << task.dump();
  EXPECT_EQ(task["limits"]["memory_bytes"], 64 << 20);
  // The shell went on after tail died, but the task failed all the same.
  EXPECT_NE(Baton({"output", id}).out.find("survived"), std::string::npos);
  auto shown = Baton({"status", id}).out;
  EXPECT_NE(shown.find("limits:   memory 64 MiB\n"), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("held by cgroup v"), std::string::npos) << shown;
}

TEST_F(HardLimitsTest, WithoutCgroupsMemoryIsAnRlimitThatFailsTheAllocation) {
  std::map<std::string, std::string> no_cgroups = {{"BATON_LIMITS", "rlimit"}};
  std::string id = Run("head -c 1G /dev/zero | tail",
                       {"--memory", "64M", "--pids", "100"}, no_cgroups);
  auto task = WaitEnded(id);
  EXPECT_EQ(task["limits_held_by"],
            "rlimit: memory (address space); not held (no cgroup): pids")
      << task.dump();
  // tail could not get the memory: it says so and fails; no kill.
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_EQ(task["exit_code"], 1) << task.dump();
  EXPECT_NE(Baton({"output", id}).out.find("memory exhausted"),
            std::string::npos)
      << Baton({"output", id}).out;
  // A task within its limit runs as ever.
  std::string fine =
      Run("head -c 10M /dev/zero | wc -c", {"--memory", "64M"}, no_cgroups);
  EXPECT_EQ(WaitEnded(fine)["status"], "completed");
  EXPECT_EQ(Baton({"output", fine}).out, "10485760\n");
}

TEST_F(HardLimitsTest, ASetsidEscapeeIsStoppedWhenTheTaskEnds) {
  std::string pid_file = home_ + "/escapee.pid";
  // setsid leaves the task's process group and session: only the cgroup
  // still knows the sleep is the task's.
  std::string id =
      Run("setsid sleep 81.125 & echo $! > " + pid_file + "; sleep 0.2",
          {"--pids", "100"});
  auto task = WaitEnded(id);
  if (!HeldByCgroup(task, "pids"))
    GTEST_SKIP() << "pids are held by no cgroup here: " << task.dump();
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["detail"], "exit code: 0; stopped 1 leftover process")
      << task.dump();
  auto text = ReadFile(pid_file);
  ASSERT_TRUE(text);
  int escapee = std::stoi(*text);
  EXPECT_TRUE(WaitForPidGone(escapee, seconds(10)))
      << "the escapee " << escapee << " runs on";
}

TEST_F(HardLimitsTest, APidsLimitStopsAForkBomb) {
  std::string id =
      Run("for i in $(seq 40); do sleep 5 & done; echo all started",
          {"--pids", "20"});
  auto task = WaitEnded(id);
  if (!HeldByCgroup(task, "pids"))
    GTEST_SKIP() << "pids are held by no cgroup here: " << task.dump();
  EXPECT_EQ(task["status"], "failed") << task.dump();
  std::string out = Baton({"output", id}).out;
  EXPECT_EQ(out.find("all started"), std::string::npos) << out;
  EXPECT_NE(out.find("fork"), std::string::npos) << out;
}

TEST_F(HardLimitsTest, ACpuShareHoldsABusyLoop) {
  // The loop's own CPU time after 2 s of wall time, in clock ticks
  // (100 a second): at 0.2 CPUs about 40, unlimited about 200.
  std::string id =
      Run("sh -c 'while :; do :; done' & p=$!; sleep 2; "
          "cut -d' ' -f14 /proc/$p/stat; kill $p",
          {"--cpus", "0.2"});
  auto task = WaitEnded(id);
  if (!HeldByCgroup(task, "cpus"))
    GTEST_SKIP() << "cpus are held by no cgroup here: " << task.dump();
  EXPECT_EQ(task["limits"]["cpu_millis"], 200);
  int ticks = std::stoi(Baton({"output", id}).out);
  EXPECT_LE(ticks, 80) << "a 0.2-CPU loop used " << ticks << " ticks in 2 s";
  EXPECT_GT(ticks, 5);
}

TEST_F(HardLimitsTest, BadLimitsAreRefusedAndNothingStarts) {
  auto memory = Baton({"run", "--memory", "12Q", "--", "true"});
  EXPECT_EQ(memory.exit_code, 1);
  EXPECT_NE(memory.err.find("--memory: '12Q' is not a size"), std::string::npos)
      << memory.err;
  auto tiny = Baton({"run", "--memory", "4K", "--", "true"});
  EXPECT_EQ(tiny.exit_code, 1);
  EXPECT_NE(tiny.err.find("below 1M"), std::string::npos) << tiny.err;
  EXPECT_NE(Baton({"run", "--cpus", "0", "--", "true"}).exit_code, 0);
  // NaN passed any range check and set no limit (issue 35, finding 9).
  for (const char* nan : {"nan", "-nan", "inf"}) {
    std::string flag = std::string("--cpus=") + nan;
    auto run = Baton({"run", flag, "--", "true"});
    EXPECT_EQ(run.exit_code, 2) << nan;
    EXPECT_NE(run.err.find("is not a number from 0.01 to 65536"),
              std::string::npos)
        << run.err;
    auto queue = Baton({"queue", "set", "q", flag});
    EXPECT_EQ(queue.exit_code, 2) << nan << queue.err;
  }
  auto slurm_pids =
      Baton({"run", "--on", "slurm", "--pids", "5", "--", "true"});
  EXPECT_EQ(slurm_pids.exit_code, 1);
  EXPECT_NE(slurm_pids.err.find("'pids' is a limit on this machine"),
            std::string::npos)
      << slurm_pids.err;
  auto half_cpu =
      Baton({"run", "--on", "slurm", "--cpus", "1.5", "--", "true"});
  EXPECT_EQ(half_cpu.exit_code, 1);
  EXPECT_NE(half_cpu.err.find("whole CPUs"), std::string::npos) << half_cpu.err;
  // The protocol refuses the same, whoever sends it.
  std::string reply =
      RawRequest(R"({"op":"run","command":"true","cwd":"/","cpus":0.001})");
  EXPECT_NE(reply.find("'cpus' must be a number of CPUs from 0.01"),
            std::string::npos)
      << reply;
  auto listed = Baton({"--json", "ls", "--all"});
  EXPECT_EQ(listed.json()["tasks"].size(), 0u) << listed.out;
}

TEST_F(HardLimitsTest, AQueuesLimitsHoldItsTasksThatGiveNone) {
  auto added =
      Baton({"queue", "add", "small", "--memory", "64M", "--pids", "100"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(added.out,
            "queue small: no limit; 0 running, 0 queued; its tasks' limits: "
            "memory 64 MiB, 100 processes\n");
  std::string own = Run("true", {"--queue", "small", "--memory", "128M"});
  EXPECT_EQ(Status(own)["limits"]["memory_bytes"], 128 << 20);
  EXPECT_EQ(Status(own)["limits"]["pids"], 100);
  std::string hog = Run(kHog, {"--queue", "small"});
  auto task = WaitEnded(hog);
  if (HeldByCgroup(task, "memory")) {
    EXPECT_EQ(task["detail"], "out of memory: the limit of 64 MiB was reached")
        << task.dump();
  }
  // Stored: a new batond reads them back.
  ASSERT_EQ(Baton({"daemon", "stop"}).exit_code, 0);
  auto listed = Baton({"queue", "ls"});
  EXPECT_NE(listed.out.find("memory 64 MiB, 100 processes"), std::string::npos)
      << listed.out;
  ASSERT_EQ(Baton({"queue", "set", "small", "--memory", "0"}).exit_code, 0);
  EXPECT_EQ(Status(Run("true", {"--queue", "small"}))["limits"]["pids"], 100);
  auto nothing = Baton({"queue", "set", "small"});
  EXPECT_EQ(nothing.exit_code, 1);
  EXPECT_NE(nothing.err.find("nothing to change"), std::string::npos)
      << nothing.err;
}

TEST_F(HardLimitsTest, AnAgentProfileGivesItsTasksLimits) {
  std::string config = home_ + "/config.toml";
  std::ofstream(config) << "[agents.capped]\nadapter = \"command\"\n"
                           "command = [\"sh\", \"-c\", \"cat >/dev/null\"]\n"
                           "memory = \"256M\"\npids = 64\n";
  std::map<std::string, std::string> env = {{"BATON_CONFIG", config}};
  auto started = Baton(
      {"--json", "delegate", "--agent", "capped", "--pids", "32", "do nothing"},
      env);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string id = started.json()["task"]["id"];
  auto task = Status(id, env);
  // The delegate's --pids over the profile's; its memory from the profile.
  EXPECT_EQ(task["limits"]["memory_bytes"], 256 << 20) << task.dump();
  EXPECT_EQ(task["limits"]["pids"], 32) << task.dump();
  Baton({"kill", id}, env);
}

}  // namespace
}  // namespace baton::testing
