// Tasks on a real single-node Slurm cluster (munged, slurmctld, slurmd from
// Debian's packages), through the CLI and `baton mcp` (issue 17,
// doc/slurm.md). The cluster is started once for the whole binary by
// tests/slurm/slurm-cluster and stopped by its pids at the end; the tests
// run one after another against it (doc/slurm-testing.md).
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ClusterScript() {
  return std::string(BATON_SOURCE_DIR) + "/tests/slurm/slurm-cluster";
}

std::string ClusterDir() {
  static const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("baton-slurm-test-" + std::to_string(::getpid())))
          .string();
  return dir;
}

// Starts the cluster before the first test and stops it after the last.
class SlurmCluster : public ::testing::Environment {
 public:
  void SetUp() override {
    // Ports of its own: a cluster of a benchmark or a person may run on
    // the default ones.
    ::setenv("SLURM_TEST_CTLD_PORT", "6917", 1);
    ::setenv("SLURM_TEST_SLURMD_PORT", "6918", 1);
    ::setenv("SLURM_TEST_WARMUP", "1", 1);  // The first job waits ~3 s.
    auto started =
        RunProcess({ClusterScript(), "start", ClusterDir()}, {}, seconds(90));
    ASSERT_EQ(started.exit_code, 0) << "the Slurm test cluster did not start:\n"
                                    << started.out << started.err;
    auto conf = RunProcess(
        {"/bin/bash", "-c",
         ". " + ClusterDir() + "/env.sh && printf %s \"$SLURM_CONF\""},
        {}, seconds(10));
    ASSERT_FALSE(conf.out.empty()) << conf.err;
    // Every baton client (and so every task's sbatch) gets it.
    ::setenv("SLURM_CONF", conf.out.c_str(), 1);
  }
  void TearDown() override {
    RunProcess({ClusterScript(), "stop", ClusterDir(), "--purge"}, {},
               seconds(60));
  }
};

const auto* const kCluster =
    ::testing::AddGlobalTestEnvironment(new SlurmCluster);

class SlurmTest : public BatonTest {
 protected:
  std::string RunOnSlurm(const std::string& command,
                         std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), {"--on", "slurm"});
    return Run(command, flags);
  }

  // Polls `status` (bounded) until `done` holds for the task; its record.
  template <class F>
  nlohmann::json StatusUntil(const std::string& id, F done,
                             milliseconds timeout = seconds(60)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    nlohmann::json task;
    while (std::chrono::steady_clock::now() < deadline) {
      task = Status(id);
      if (task.is_object() && done(task))
        return task;
      std::this_thread::sleep_for(milliseconds(100));
    }
    ADD_FAILURE() << "gave up on " << id << ": " << task.dump();
    return task;
  }

  nlohmann::json WaitEnd(const std::string& id,
                         milliseconds timeout = seconds(90)) {
    auto waited = Baton({"wait", id}, {}, timeout + seconds(5));
    EXPECT_FALSE(waited.timed_out) << waited.err;
    return Status(id);
  }

  std::string Output(const std::string& id) {
    return Baton({"output", id}).out;
  }

  void Controller(const std::string& verb) {
    auto done =
        RunProcess({ClusterScript(), verb, ClusterDir()}, {}, seconds(60));
    ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  }
};

TEST_F(SlurmTest, AJobRunsAndEndsWithItsOwnExitCode) {
  std::string id = RunOnSlurm("echo hello from $(hostname); exit 3",
                              {"--label", "on-slurm"});
  nlohmann::json task = WaitEnd(id);
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_EQ(task["exit_code"], 3);
  EXPECT_EQ(task["detail"], "exit code: 3");
  ASSERT_TRUE(task.contains("placement")) << task.dump();
  EXPECT_FALSE(task["placement"]["job_id"].get<std::string>().empty());
  EXPECT_EQ(task["placement"]["node"], "localhost");
  EXPECT_EQ(task["placement"]["state"], "FAILED") << task.dump();
  EXPECT_EQ(task["placement"]["partition"], "debug") << task.dump();
  EXPECT_NE(Output(id).find("hello from"), std::string::npos);
  EXPECT_FALSE(task["started_at"].is_null());

  std::string ok = RunOnSlurm("true");
  EXPECT_EQ(WaitEnd(ok)["status"], "completed");
  // `run --wait` exits with the job's own code.
  auto waited = Baton({"run", "--on", "slurm", "--wait", "--", "exit 5"}, {},
                      seconds(90));
  EXPECT_EQ(waited.exit_code, 5) << waited.out << waited.err;
}

TEST_F(SlurmTest, OutputIsReadableWhileItRunsAndWaitAnySpansBothExecutors) {
  std::string slurm = RunOnSlurm("echo started; sleep 60");
  StatusUntil(slurm,
              [](const nlohmann::json& t) { return t["status"] == "running"; });
  auto deadline = std::chrono::steady_clock::now() + seconds(20);
  std::string out;
  while (out.find("started") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
    out = Output(slurm);
  }
  EXPECT_NE(out.find("started"), std::string::npos) << out;
  nlohmann::json running = Status(slurm);
  EXPECT_NE(running["detail"].get<std::string>().find("slurm job"),
            std::string::npos)
      << running.dump();

  std::string local = Run("sleep 0.5");
  auto waited = Baton({"wait", slurm, local}, {}, seconds(30));
  EXPECT_NE(waited.out.find(local), std::string::npos) << waited.out;
  EXPECT_EQ(Status(slurm)["status"], "running");

  // Kill: a cancel, so SIGTERM to the job's processes, then the end is
  // killed, and Slurm's own accounting says CANCELLED as it does for a
  // person's scancel (a signal alone left the job FAILED there).
  auto killed = Baton({"kill", slurm});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  nlohmann::json task = WaitEnd(slurm, seconds(30));
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "killed: by request");
  std::string job = task["placement"]["job_id"].get<std::string>();
  // Slurm shows COMPLETING while the node cleans up after the cancel;
  // the state it settles in is what counts.
  auto shown = RunProcess({"/usr/bin/scontrol", "show", "job", "-o", job}, {},
                          seconds(10));
  for (auto until = std::chrono::steady_clock::now() + seconds(20);
       shown.out.find("JobState=COMPLETING") != std::string::npos &&
       std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(milliseconds(200));
    shown = RunProcess({"/usr/bin/scontrol", "show", "job", "-o", job}, {},
                       seconds(10));
  }
  EXPECT_NE(shown.out.find("JobState=CANCELLED"), std::string::npos)
      << shown.out << shown.err;
  EXPECT_EQ(task["placement"]["state"], "CANCELLED") << task.dump();
}

TEST_F(SlurmTest, ARequestSlurmRefusesGetsAClearErrorAndNoTask) {
  auto refused =
      Baton({"run", "--on", "slurm", "--partition", "nosuch", "--", "true"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("slurm would not take this job"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("nosuch"), std::string::npos) << refused.err;
  auto too_big =
      Baton({"run", "--on", "slurm", "--cpus", "4096", "--", "true"});
  EXPECT_NE(too_big.exit_code, 0);
  auto listed = Baton({"--json", "ls", "--all"});
  EXPECT_EQ(listed.json()["tasks"].size(), 0u) << listed.out;
  // Slurm flags without --on slurm.
  auto stray = Baton({"run", "--partition", "debug", "--", "true"});
  EXPECT_EQ(stray.exit_code, 1) << stray.err;
  EXPECT_NE(stray.err.find("add --on slurm"), std::string::npos) << stray.err;
}

TEST_F(SlurmTest, APendingJobIsQueuedWithSlurmsReasonAndCanBeKilled) {
  std::string id = RunOnSlurm("echo never", {"--sbatch-arg=--hold"});
  nlohmann::json task = StatusUntil(id, [](const nlohmann::json& t) {
    return t.contains("placement") && t["placement"].value("reason", "") != "";
  });
  EXPECT_EQ(task["status"], "queued");
  EXPECT_EQ(task["placement"]["state"], "PENDING");
  EXPECT_NE(task["detail"].get<std::string>().find("pending (JobHeld"),
            std::string::npos)
      << task.dump();
  EXPECT_EQ(Baton({"kill", id}).exit_code, 0);
  task = WaitEnd(id, seconds(30));
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(Output(id).find("never"), std::string::npos);
}

TEST_F(SlurmTest, SlurmsTimeLimitEndsItAsKilledTimedOut) {
  // Slurm enforces --time in whole minutes, up to ~30 s late.
  std::string id = RunOnSlurm("sleep 300", {"--time", "1m"});
  nlohmann::json task = WaitEnd(id, seconds(150));
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_NE(task["detail"].get<std::string>().find("timed out"),
            std::string::npos)
      << task.dump();
  EXPECT_NE(task["detail"].get<std::string>().find("TIMEOUT"),
            std::string::npos);
}

TEST_F(SlurmTest, BatonsOwnTimeoutEndsTheJob) {
  std::string id = RunOnSlurm("sleep 120", {"--timeout", "3s"});
  nlohmann::json task = WaitEnd(id, seconds(60));
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "timed out after 3s") << task.dump();
}

TEST_F(SlurmTest, ABatondRestartLosesNothing) {
  std::string quick = RunOnSlurm("echo quick");
  std::string slow = RunOnSlurm("sleep 4; echo slow; exit 2");
  StatusUntil(slow,
              [](const nlohmann::json& t) { return t["status"] == "running"; });
  KillDaemonHard();
  std::this_thread::sleep_for(seconds(6));  // Both end while none runs.
  nlohmann::json a = WaitEnd(quick);
  nlohmann::json b = WaitEnd(slow);
  EXPECT_EQ(a["status"], "completed") << a.dump();
  EXPECT_EQ(b["status"], "failed") << b.dump();
  EXPECT_EQ(b["exit_code"], 2);
  EXPECT_NE(Output(slow).find("slow"), std::string::npos);
  // And one that runs across the restart.
  std::string across = RunOnSlurm("sleep 3; echo across");
  StatusUntil(across,
              [](const nlohmann::json& t) { return t["status"] == "running"; });
  KillDaemonHard();
  nlohmann::json c = WaitEnd(across);
  EXPECT_EQ(c["status"], "completed") << c.dump();
  EXPECT_EQ(c["placement"]["job_id"], Status(across)["placement"]["job_id"]);
}

// Jobs that end, run and wait while batond is down, together (issue 35,
// finding 0). The new batond used to serve nothing: its adoption walked the
// map of jobs while a job whose end it found left that map, and it spun. It
// must answer at once, learn the end, and keep the others.
TEST_F(SlurmTest, ARestartAdoptsJobsThatEndedRunAndWaitTogether) {
  std::string running = RunOnSlurm("sleep 300");
  std::string ending = RunOnSlurm("sleep 4; exit 4");
  std::string held = RunOnSlurm("echo never", {"--sbatch-arg=--hold"});
  for (const std::string& id : {running, ending}) {
    StatusUntil(
        id, [](const nlohmann::json& t) { return t["status"] == "running"; });
  }
  StatusUntil(held, [](const nlohmann::json& t) {
    return t.contains("placement") && t["placement"]["state"] == "PENDING";
  });
  KillDaemonHard();
  std::this_thread::sleep_for(seconds(7));  // `ending` ends while none runs.
  // The first call starts a batond, which must be ready within its start's
  // own deadline (the CLI gives up on a batond that does not answer).
  auto listed = Baton({"ls"}, {}, seconds(30));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  nlohmann::json ended = WaitEnd(ending);
  EXPECT_EQ(ended["status"], "failed") << ended.dump();
  EXPECT_EQ(ended["exit_code"], 4);
  EXPECT_EQ(Status(running)["status"], "running");
  EXPECT_EQ(Status(held)["status"], "queued");
  EXPECT_EQ(Baton({"kill", running, held}).exit_code, 0);
  EXPECT_EQ(WaitEnd(running)["status"], "killed");
  EXPECT_EQ(WaitEnd(held)["status"], "killed");
}

TEST_F(SlurmTest, AnUnreachableControllerEndsNothingWrongly) {
  std::string id = RunOnSlurm("sleep 25; exit 4");
  StatusUntil(id,
              [](const nlohmann::json& t) { return t["status"] == "running"; });
  Controller("stop-controller");
  // batond stays responsive, and the task is shown running, unreachable.
  nlohmann::json task = StatusUntil(
      id,
      [](const nlohmann::json& t) {
        return t["detail"].get<std::string>().find("unreachable") !=
               std::string::npos;
      },
      seconds(45));
  EXPECT_EQ(task["status"], "running") << task.dump();
  auto listed = Baton({"ls"}, {}, seconds(5));
  EXPECT_EQ(listed.exit_code, 0);
  Controller("start-controller");
  task = WaitEnd(id, seconds(90));
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_EQ(task["exit_code"], 4);
}

// An agent worker's stdin and stream cross the job through files batond
// appends to and tails (doc/slurm.md, "Agent workers"): the scripted fake
// claude asks, is answered, and ends.
TEST_F(SlurmTest, AnAgentWorkerAsksIsAnsweredAndEnds) {
  std::map<std::string, std::string> env;
  ASSERT_TRUE(PutFakeAgentsOnPath(env)) << "python3 is missing";
  std::string work = home_ + "/work";
  std::filesystem::create_directories(work);
  std::filesystem::create_directories(home_ + "/agent-home");
  env["HOME"] = home_ + "/agent-home";
  auto started =
      Baton({"delegate", "--on", "slurm", "--cwd", work, "please ASK me"}, env);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string id = started.out.substr(0, started.out.find('\n'));
  auto asked =
      Baton({"--json", "wait", "--timeout", "60s", id}, env, seconds(70));
  ASSERT_EQ(asked.exit_code, 0) << asked.out << asked.err;
  EXPECT_EQ(asked.json()["ended"][0]["status"], "waiting") << asked.out;
  auto answered = Baton({"answer", id, "2"}, env);
  EXPECT_EQ(answered.exit_code, 0) << answered.err;
  auto done =
      Baton({"--json", "wait", "--timeout", "60s", id}, env, seconds(70));
  nlohmann::json ended = done.json()["ended"][0];
  EXPECT_EQ(ended["status"], "completed") << done.out;
  nlohmann::json task = Status(id, env);
  EXPECT_FALSE(task["placement"]["job_id"].get<std::string>().empty())
      << task.dump();
  std::string output = Baton({"output", id}, env).out;
  EXPECT_NE(output.find("? Which database?"), std::string::npos) << output;
  EXPECT_NE(output.find("[answer: Postgres]"), std::string::npos) << output;
}

TEST_F(SlurmTest, TheMcpRunToolTakesOnSlurm) {
  std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"command":"echo via-mcp","on":"slurm","time_limit_s":120}}})"
      "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run","arguments":{"command":"true","partition":"debug"}}})"
      "\n";
  std::map<std::string, std::string> session = {
      {"BATON_SESSION", "mcp-on-slurm"}};
  auto result =
      RunProcess({binary_, "mcp"},
                 {{"BATON_HOME", home_}, {"BATON_SESSION", "mcp-on-slurm"}},
                 seconds(30), input);
  EXPECT_NE(result.out.find("Started shell-1"), std::string::npos)
      << result.out << result.err;
  EXPECT_NE(result.out.find("is for a Slurm job"), std::string::npos)
      << result.out;
  auto listed = Baton({"--json", "ls", "--all"}, session);
  ASSERT_EQ(listed.json()["tasks"].size(), 1u) << listed.out;
  auto waited = Baton({"wait", "shell-1"}, session, seconds(60));
  EXPECT_FALSE(waited.timed_out);
  nlohmann::json task = Status("shell-1", session);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["remote"]["executor"], "slurm") << task.dump();
  EXPECT_EQ(task["remote"]["options"]["time_limit_s"], 120);
  EXPECT_NE(Baton({"output", "shell-1"}, session).out.find("via-mcp"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::testing
