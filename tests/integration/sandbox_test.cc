// A task's sandbox (issue 40; doc/sandbox.md) through the real daemon, CLI
// and bubblewrap: what a sandboxed task may write, see and reach, that
// nothing it starts outlives it, that a hard limit still holds inside, and
// that a sandbox that cannot be made is refused rather than skipped.
//
// The layout of each test: one folder `root_` that is the task's folder,
// holding batond's state (`root_/state`, BATON_HOME) and a fake HOME with a
// key (`root_/home/.ssh/id_rsa`): both inside the folder the task may
// write, so only the sandbox's hiding keeps them from it.
#include <arpa/inet.h>
#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/program_path.h"
#include "baton/util/unique_fd.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Whether a process whose command line is `argv` (joined by NULs) runs.
bool ProcessRuns(const std::string& cmdline) {
  DIR* proc = ::opendir("/proc");
  if (!proc)
    return false;
  bool found = false;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
      continue;
    std::ifstream file(fmt::format("/proc/{}/cmdline", entry->d_name));
    std::string text((std::istreambuf_iterator<char>(file)), {});
    if (text == cmdline) {
      found = true;
      break;
    }
  }
  ::closedir(proc);
  return found;
}

// `sleep SECONDS`'s /proc/PID/cmdline: each argument ends in a NUL.
std::string SleepCommandLine(const std::string& seconds) {
  std::string line = "sleep";
  line += '\0';
  line += seconds;
  line += '\0';
  return line;
}

// Polls `done` every 50 ms until it holds (true) or `timeout` passes.
template <class F>
bool Eventually(F done, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return true;
}

class SandboxTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (!ResolveProgram("bwrap", ProcessEnvironment(), "/")) {
      GTEST_SKIP() << "bubblewrap (bwrap) is not installed, so no sandbox "
                      "can be tested: apt install bubblewrap (scripts/setup "
                      "--tests installs it)";
    }
    root_ = home_;
    home_ = root_ + "/state";
    fake_home_ = root_ + "/home";
    for (const std::string& dir : {home_, fake_home_, fake_home_ + "/.ssh"})
      ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir;
    ASSERT_TRUE(WriteFileAtomic(fake_home_ + "/.ssh/id_rsa",
                                "-----BEGIN FAKE KEY-----\n"));
  }
  void TearDown() override {
    BatonTest::TearDown();
    std::error_code ignored;
    if (!root_.empty())
      std::filesystem::remove_all(root_, ignored);
    if (!outside_.empty())
      std::filesystem::remove_all(outside_, ignored);
  }

  // The client's environment: the fake HOME.
  std::map<std::string, std::string> Env(
      std::map<std::string, std::string> more = {}) {
    more["HOME"] = fake_home_;
    return more;
  }
  std::string RunIn(const std::string& command, std::string profile,
                    std::vector<std::string> flags = {},
                    std::map<std::string, std::string> env = {}) {
    flags.insert(flags.end(), {"--sandbox", profile, "--cwd", root_});
    return Run(command, flags, Env(env));
  }
  nlohmann::json WaitEnded(const std::string& id) {
    auto waited = Baton({"--json", "wait", "--timeout", "30s", id}, Env());
    EXPECT_EQ(waited.json()["ended"].size(), 1u) << waited.out << waited.err;
    return Status(id, Env());
  }
  std::string Output(const std::string& id) {
    return Baton({"output", id}, Env()).out;
  }
  // The tasks batond knows of.
  size_t TaskCount() {
    auto listed = Baton({"--json", "ls", "--all"}, Env());
    auto doc = listed.json();
    return doc.contains("tasks") ? doc["tasks"].size() : 0;
  }

  std::string root_;       // The tasks' folder; holds the two below.
  std::string fake_home_;  // HOME, with .ssh/id_rsa.
  std::string outside_;    // A folder outside the sandbox's writable ones.
};

TEST_F(SandboxTest, ATaskWritesOnlyItsFolderAndAPrivateTmp) {
  char tmpl[] = "/var/tmp/baton-sandbox-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  outside_ = tmpl;
  std::string scratch = fmt::format("/tmp/baton-sandbox-{}", ::getpid());
  std::string id = RunIn(
      fmt::format("echo mine > inside.txt && echo scratch > {0} && cat {0}; "
                  "echo escape > {1}/escape.txt || echo refused",
                  scratch, outside_),
      "strict");
  auto task = WaitEnded(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  std::string out = Output(id);
  EXPECT_NE(out.find("scratch\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Read-only file system"), std::string::npos) << out;
  EXPECT_NE(out.find("refused\n"), std::string::npos) << out;
  EXPECT_EQ(ReadFile(root_ + "/inside.txt").value_or(""), "mine\n");
  EXPECT_FALSE(ReadFile(outside_ + "/escape.txt")) << "written outside";
  // Its /tmp was its own.
  EXPECT_FALSE(ReadFile(scratch)) << scratch << " reached the host's /tmp";
  EXPECT_EQ(task["sandbox"]["name"], "strict") << task.dump();
  EXPECT_EQ(task["sandbox"]["network"], "none") << task.dump();
  std::string shown = Baton({"status", id}, Env()).out;
  EXPECT_NE(shown.find("strict (network none)"), std::string::npos) << shown;
  // Run again, it runs in the same profile.
  auto rerun = Baton({"rerun", id}, Env());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  std::string again = rerun.out.substr(0, rerun.out.find('\n'));
  EXPECT_EQ(WaitEnded(again)["sandbox"]["name"], "strict");
  // The start's audit record names its sandbox.
  auto audit = Baton({"--json", "audit", "--task", id}, Env()).json();
  ASSERT_EQ(audit["records"].size(), 1u) << audit.dump();
  EXPECT_EQ(audit["records"][0]["detail"],
            "sandbox strict: " + task["command"].get<std::string>())
      << audit.dump();
}

TEST_F(SandboxTest, StateAndCredentialsAreHiddenAndTheEnvironmentCleaned) {
  std::string id = RunIn(
      fmt::format("echo state=$(ls -A {} | wc -l); cat {}/.ssh/id_rsa || "
                  "echo no-key; echo secret=$SECRET_VALUE declared=$DECLARED "
                  "home=$HOME path=${{PATH:+set}}",
                  home_, fake_home_),
      "strict", {"--env", "DECLARED=yes"}, {{"SECRET_VALUE", "hunter2"}});
  auto task = WaitEnded(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  std::string out = Output(id);
  // batond's state folder holds its database and logs; the task sees an
  // empty folder.
  EXPECT_NE(out.find("state=0\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("BEGIN FAKE KEY"), std::string::npos) << out;
  EXPECT_NE(out.find("no-key\n"), std::string::npos) << out;
  EXPECT_NE(out.find(fmt::format("secret= declared=yes home={} path=set\n",
                                 fake_home_)),
            std::string::npos)
      << out;
  // Outside the sandbox, both are there.
  EXPECT_TRUE(ReadFile(fake_home_ + "/.ssh/id_rsa"));
}

TEST_F(SandboxTest, StrictReachesNoNetworkAndBuildDoes) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
                   sizeof address),
            0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address),
                          &length),
            0);
  std::string connect = fmt::format(
      "bash -c 'echo hi > /dev/tcp/127.0.0.1/{}' && echo connected || echo "
      "unreachable",
      ntohs(address.sin_port));
  std::string strict = RunIn(connect, "strict");
  std::string build = RunIn(connect, "build");
  WaitEnded(strict);
  WaitEnded(build);
  EXPECT_NE(Output(strict).find("unreachable\n"), std::string::npos)
      << Output(strict);
  EXPECT_NE(Output(build).find("connected\n"), std::string::npos)
      << Output(build);
}

TEST_F(SandboxTest, NothingItStartsOutlivesIt) {
  // setsid leaves the task's process group and session, and no limit puts
  // it in a cgroup: only the pid namespace ends it with the task.
  std::string escapee = SleepCommandLine("97.125");
  ASSERT_FALSE(ProcessRuns(escapee)) << "a sleep 97.125 runs already";
  std::string id = RunIn(
      "setsid sleep 97.125 & while [ ! -e go ]; do sleep 0.05; done; echo "
      "done",
      "strict");
  ASSERT_TRUE(Eventually([&] { return ProcessRuns(escapee); }, seconds(10)))
      << "the task's sleep never ran";
  ASSERT_TRUE(WriteFileAtomic(root_ + "/go", ""));
  auto task = WaitEnded(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_TRUE(Eventually([&] { return !ProcessRuns(escapee); }, seconds(10)))
      << "the setsid sleep outlived its task";
}

TEST_F(SandboxTest, AKillEndsEverythingInside) {
  std::string escapee = SleepCommandLine("97.375");
  ASSERT_FALSE(ProcessRuns(escapee)) << "a sleep 97.375 runs already";
  std::string id = RunIn("setsid sleep 97.375 & sleep 60", "strict");
  ASSERT_TRUE(Eventually([&] { return ProcessRuns(escapee); }, seconds(10)))
      << "the task's sleep never ran";
  auto killed = Baton({"kill", "--grace", "1s", id}, Env());
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  auto task = WaitEnded(id);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_TRUE(Eventually([&] { return !ProcessRuns(escapee); }, seconds(10)))
      << "the setsid sleep outlived the kill of its task";
}

TEST_F(SandboxTest, AMemoryLimitStillKillsInsideTheSandbox) {
  std::string id = RunIn("head -c 1G /dev/zero | tail; echo survived", "strict",
                         {"--memory", "64M"});
  auto task = WaitEnded(id);
  std::string held = task.value("limits_held_by", "");
  if (held.find("cgroup") == std::string::npos) {
    EXPECT_NE(::geteuid(), 0u) << "as root, no cgroup holds memory: " << held;
    GTEST_SKIP() << "memory is held by no cgroup here: " << task.dump();
  }
  EXPECT_EQ(task["status"], "failed") << task.dump();
  EXPECT_EQ(task["detail"], "out of memory: the limit of 64 MiB was reached")
      << task.dump();
  EXPECT_EQ(task["sandbox"]["name"], "strict");
}

TEST_F(SandboxTest, AnAgentProfilesSandboxHoldsItsWorker) {
  // A plain-command agent (brief on stdin, answer on stdout) whose profile
  // names the sandbox; its own `env` is kept, the client's secret is not.
  ASSERT_TRUE(WriteFileAtomic(
      home_ + "/config.toml",
      fmt::format("[agents.boxed]\nadapter = \"command\"\n"
                  "command = [\"sh\", \"-c\", \"cat >/dev/null; echo "
                  "state=$(ls -A {} | wc -l) key=$MODEL_KEY "
                  "secret=$SECRET_VALUE; touch /escape 2>&1\"]\n"
                  "sandbox = \"strict\"\nenv = {{ MODEL_KEY = \"k\" }}\n",
                  home_)));
  auto started =
      Baton({"--json", "delegate", "--agent", "boxed", "--cwd", root_, "go"},
            Env({{"SECRET_VALUE", "hunter2"}}));
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string id = started.json()["task"]["id"];
  auto task = WaitEnded(id);
  EXPECT_EQ(task["sandbox"]["name"], "strict") << task.dump();
  std::string out = Output(id);
  EXPECT_NE(out.find("state=0 key=k secret="), std::string::npos) << out;
  EXPECT_NE(out.find("Read-only file system"), std::string::npos) << out;
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
}

TEST_F(SandboxTest, AnUnknownProfileIsRefusedAndNothingStarts) {
  auto run = Baton(
      {"run", "--sandbox", "nosuch", "--cwd", root_, "--", "touch started"},
      Env());
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("no sandbox profile 'nosuch'; the profiles are "
                         "strict, agent, build"),
            std::string::npos)
      << run.err;
  auto delegate = Baton({"delegate", "--agent", "dsh", "--sandbox", "nosuch",
                         "--cwd", root_, "do it"},
                        Env());
  EXPECT_NE(delegate.exit_code, 0);
  EXPECT_NE(delegate.err.find("no sandbox profile 'nosuch'"), std::string::npos)
      << delegate.err;
  EXPECT_EQ(TaskCount(), 0u);
  EXPECT_FALSE(ReadFile(root_ + "/started"));
}

TEST_F(SandboxTest, ARequiredSandboxThatCannotBeMadeIsRefused) {
  // A bubblewrap that cannot make namespaces, as in a container that
  // forbids them: batond is started with it.
  std::string fake = root_ + "/fake-bwrap";
  ASSERT_TRUE(WriteFileAtomic(fake,
                              "#!/bin/sh\necho 'bwrap: No permissions to "
                              "create new namespace' >&2\nexit 1\n"));
  ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomic(home_ + "/config.toml",
                              "[sandbox.loose]\nrequired = false\n"));
  auto env = Env({{"BATON_BWRAP", fake}});
  auto refused = Baton(
      {"run", "--sandbox", "strict", "--cwd", root_, "--", "touch started"},
      env);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("no sandbox can be made here"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("No permissions to create new namespace"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(TaskCount(), 0u);
  EXPECT_FALSE(ReadFile(root_ + "/started"));
  // A profile that is not required runs unconfined, and the audit says so.
  std::string id = Run("echo ran", {"--sandbox", "loose", "--cwd", root_}, env);
  auto task = WaitEnded(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_FALSE(task.contains("sandbox")) << task.dump();
  auto audit = Baton({"--json", "audit", "--task", id}, env).json();
  ASSERT_EQ(audit["records"].size(), 1u) << audit.dump();
  EXPECT_EQ(audit["records"][0]["reason"],
            "sandbox loose (not required) could not be made: ran unconfined");
  // doctor tells the same.
  auto doctor = Baton({"doctor"}, env);
  EXPECT_NE(doctor.out.find("sandbox: " + fake + " cannot make its namespaces"),
            std::string::npos)
      << doctor.out;
}

}  // namespace
}  // namespace baton::testing
