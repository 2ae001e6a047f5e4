#include "baton/daemon/app_server_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

namespace baton {
namespace {

using std::chrono::milliseconds;

TEST(JudgeProbe, ExitCodesSignalsTimeoutsAndSpawnFailures) {
  ProbeRun run;
  run.end = ProbeRun::End::kExited;
  run.code = 0;
  ProbeVerdict yes = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(yes.mode, CodexMode::kAppServer);
  EXPECT_TRUE(yes.lasting);
  // What codex 0.171.0 prints.
  run.output =
      "WARNING: proceeding, even though we could not create PATH aliases\n"
      "[experimental] Run the app server or related tooling\n\n"
      "Usage: codex app-server [OPTIONS] [COMMAND]\n\nCommands:\n";
  yes = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(yes.mode, CodexMode::kAppServer);
  EXPECT_EQ(yes.reason,
            "exit code 0: Usage: codex app-server [OPTIONS] "
            "[COMMAND]");
  // A codex whose top level takes a [PROMPT] and has no app-server: the
  // word is its prompt, and --help the top-level help (exit 0).
  run.output =
      "Codex CLI\n\nUsage: codex [OPTIONS] [PROMPT]\n"
      "       codex [OPTIONS] <COMMAND> [ARGS]\n\nCommands:\n"
      "  exec        Run Codex non-interactively\n";
  ProbeVerdict prompt = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(prompt.mode, CodexMode::kExec);
  EXPECT_EQ(prompt.reason,
            "exit code 0, but with the top-level help (Usage: codex "
            "[OPTIONS] [PROMPT]): app-server was taken for a prompt");
  EXPECT_TRUE(prompt.lasting);

  // clap's answer on a codex without the subcommand: exec, for good.
  run.code = 2;
  run.output =
      "WARNING: proceeding, even though we could not create PATH aliases\n"
      "error: unrecognized subcommand 'app-server'\n\nUsage: codex [OPTIONS] "
      "[PROMPT]\n\nFor more information, try '--help'.\n";
  ProbeVerdict no = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(no.mode, CodexMode::kExec);
  EXPECT_EQ(no.reason,
            "exit code 2: error: unrecognized subcommand "
            "'app-server'");
  EXPECT_TRUE(no.lasting);

  // Another failure: exec this time, but asked again next time.
  run.code = 1;
  run.output = "something\nnode: cannot open codex.js\n";
  ProbeVerdict other = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(other.mode, CodexMode::kExec);
  EXPECT_EQ(other.reason, "exit code 1: node: cannot open codex.js");
  EXPECT_FALSE(other.lasting);

  run.end = ProbeRun::End::kSignaled;
  run.code = 11;
  ProbeVerdict crashed = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(crashed.mode, CodexMode::kUnknown);
  EXPECT_EQ(crashed.reason, "killed by SIGSEGV");
  EXPECT_FALSE(crashed.lasting);

  run.end = ProbeRun::End::kTimedOut;
  ProbeVerdict slow = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(slow.mode, CodexMode::kUnknown);
  EXPECT_EQ(slow.reason, "no answer within 5 s");
  EXPECT_FALSE(slow.lasting);

  run.end = ProbeRun::End::kSpawnFailed;
  run.code = EACCES;
  ProbeVerdict denied = JudgeProbe(run, milliseconds(5000));
  EXPECT_EQ(denied.mode, CodexMode::kUnknown);
  EXPECT_EQ(denied.reason, "cannot run it: Permission denied");
}

// Waits (at most 5 s) until `pid` is gone or a zombie waiting for init.
bool GoneOrZombie(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string number, comm, state;
    if (!(stat >> number >> comm >> state) || state == "Z")
      return true;
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

class AppServerProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/baton-probe-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    env_ = {"PATH=" + dir_ + ":/usr/bin:/bin"};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // An executable `name` in the test's folder running `body` (sh).
  void Script(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp);
      out << "#!/bin/sh\n" << body << "\n";
    }
    ::chmod(tmp.c_str(), 0755);
    std::filesystem::rename(tmp, path);  // A new file: a new inode.
  }

  // Runs the loop until `verdict` is set, at most 10 s.
  void RunUntil(const std::optional<ProbeVerdict>& verdict) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!verdict && std::chrono::steady_clock::now() < deadline)
      ASSERT_TRUE(loop_.RunOnce(milliseconds(50)));
    ASSERT_TRUE(verdict) << "no verdict within 10 s";
  }

  ProbeVerdict CheckAndWait(AppServerProbe& probe,
                            const std::vector<std::string>& command) {
    std::optional<ProbeVerdict> verdict;
    probe.Check(command, env_, dir_,
                [&](const ProbeVerdict& v) { verdict = v; });
    RunUntil(verdict);
    return verdict.value_or(ProbeVerdict{});
  }

  EventLoop loop_;
  std::string dir_;
  std::vector<std::string> env_;
};

// Exits 0 only for `app-server --help`, after its options.
constexpr char kWithAppServer[] = R"(
while [ "$1" = -c ]; do shift 2; done
[ "$1" = app-server ] && [ "$2" = --help ] &&
  echo "Usage: codex app-server [OPTIONS]" && exit 0
exit 9)";

// Takes an unknown word for its prompt, as codex 0.171.0 does.
constexpr char kPromptNoAppServer[] = R"(
echo "Codex CLI"
echo
echo "Usage: codex [OPTIONS] [PROMPT]"
exit 0)";

constexpr char kWithoutAppServer[] = R"(
while [ "$1" = -c ]; do shift 2; done
echo "WARNING: something first" >&2
echo "error: unrecognized subcommand '$1'" >&2
echo >&2
echo "Usage: codex [OPTIONS] [PROMPT]" >&2
exit 2)";

TEST_F(AppServerProbeTest, AnswerIsCachedUntilTheProgramChanges) {
  Script("fakecodex", kWithAppServer);
  AppServerProbe probe(&loop_);
  ProbeVerdict first = CheckAndWait(probe, {"fakecodex", "-c", "x=1"});
  EXPECT_EQ(first.mode, CodexMode::kAppServer) << first.reason;
  EXPECT_EQ(probe.probes_started(), 1);
  // Cached: answered at once, nothing spawned.
  bool answered = false;
  probe.Check({"fakecodex", "-c", "x=1"}, env_, dir_,
              [&](const ProbeVerdict& v) {
                answered = true;
                EXPECT_EQ(v.mode, CodexMode::kAppServer);
              });
  EXPECT_TRUE(answered);
  EXPECT_EQ(probe.probes_started(), 1);
  // Other options: another question.
  EXPECT_EQ(CheckAndWait(probe, {dir_ + "/fakecodex"}).mode,
            CodexMode::kAppServer);
  EXPECT_EQ(probe.probes_started(), 2);

  // Replaced by a codex without app-server: asked again, then exec.
  Script("fakecodex", kWithoutAppServer);
  ProbeVerdict after = CheckAndWait(probe, {"fakecodex", "-c", "x=1"});
  EXPECT_EQ(after.mode, CodexMode::kExec);
  EXPECT_EQ(after.reason,
            "exit code 2: error: unrecognized subcommand 'app-server'");
  EXPECT_EQ(probe.probes_started(), 3);
  EXPECT_EQ(CheckAndWait(probe, {"fakecodex", "-c", "x=1"}).mode,
            CodexMode::kExec);
  EXPECT_EQ(probe.probes_started(), 3);
}

TEST_F(AppServerProbeTest, TopLevelHelpMeansNoAppServer) {
  Script("fakecodex", kPromptNoAppServer);
  AppServerProbe probe(&loop_);
  ProbeVerdict v = CheckAndWait(probe, {"fakecodex"});
  EXPECT_EQ(v.mode, CodexMode::kExec);
  EXPECT_TRUE(v.reason.find("app-server was taken for a prompt") !=
              std::string::npos)
      << v.reason;
  CheckAndWait(probe, {"fakecodex"});
  EXPECT_EQ(probe.probes_started(), 1);  // Kept.
}

TEST_F(AppServerProbeTest, ConcurrentChecksShareOneProbe) {
  Script("fakecodex", std::string("sleep 0.3\n") + kWithoutAppServer);
  AppServerProbe probe(&loop_);
  std::vector<ProbeVerdict> verdicts;
  for (int i = 0; i < 3; ++i) {
    probe.Check({"fakecodex"}, env_, dir_,
                [&](const ProbeVerdict& v) { verdicts.push_back(v); });
  }
  EXPECT_TRUE(verdicts.empty());  // The loop was not blocked.
  EXPECT_EQ(probe.probes_started(), 1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (verdicts.size() < 3 && std::chrono::steady_clock::now() < deadline)
    ASSERT_TRUE(loop_.RunOnce(milliseconds(50)));
  ASSERT_EQ(verdicts.size(), 3u);
  for (const auto& v : verdicts)
    EXPECT_EQ(v.mode, CodexMode::kExec);
  EXPECT_EQ(probe.probes_started(), 1);
}

TEST_F(AppServerProbeTest, OtherFailuresAreNotCached) {
  Script("fakecodex", "echo 'cannot start' >&2; exit 1");
  AppServerProbe probe(&loop_);
  ProbeVerdict v = CheckAndWait(probe, {"fakecodex"});
  EXPECT_EQ(v.mode, CodexMode::kExec);
  EXPECT_EQ(v.reason, "exit code 1: cannot start");
  CheckAndWait(probe, {"fakecodex"});
  EXPECT_EQ(probe.probes_started(), 2);
}

TEST_F(AppServerProbeTest, TimeoutKillsTheProbesProcessGroup) {
  // The shell waits for a child: both must go.
  Script("fakecodex", "sleep 30 & echo $! > " + dir_ + "/child.pid\nwait");
  AppServerProbe probe(&loop_, milliseconds(300));
  auto started = std::chrono::steady_clock::now();
  ProbeVerdict v = CheckAndWait(probe, {"fakecodex"});
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(5));
  EXPECT_EQ(v.mode, CodexMode::kUnknown);
  EXPECT_EQ(v.reason, "no answer within 0.3 s");
  std::ifstream pid_file(dir_ + "/child.pid");
  pid_t child = 0;
  ASSERT_TRUE(pid_file >> child);
  EXPECT_TRUE(GoneOrZombie(child)) << "the probe's child " << child;
  EXPECT_EQ(probe.probes_started(), 1);
  CheckAndWait(probe, {"fakecodex"});  // Not cached.
  EXPECT_EQ(probe.probes_started(), 2);
}

TEST_F(AppServerProbeTest, WhatAProbeLeavesBehindIsKilled) {
  // It exits at once, but a child of its own keeps the output pipe open.
  Script("fakecodex", "sleep 30 & echo $! > " + dir_ +
                          "/child.pid\necho 'error: unrecognized subcommand "
                          "app-server' >&2\nexit 2");
  AppServerProbe probe(&loop_);
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(CheckAndWait(probe, {"fakecodex"}).mode, CodexMode::kExec);
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(3));
  std::ifstream pid_file(dir_ + "/child.pid");
  pid_t child = 0;
  ASSERT_TRUE(pid_file >> child);
  EXPECT_TRUE(GoneOrZombie(child)) << "the probe's child " << child;
}

TEST_F(AppServerProbeTest, ProgramNotFoundIsUnknownAtOnce) {
  AppServerProbe probe(&loop_);
  bool answered = false;
  probe.Check({"no-such-codex"}, env_, dir_, [&](const ProbeVerdict& v) {
    answered = true;
    EXPECT_EQ(v.mode, CodexMode::kUnknown);
    EXPECT_EQ(v.reason, "cannot find no-such-codex: No such file or directory");
  });
  EXPECT_TRUE(answered);
  EXPECT_EQ(probe.probes_started(), 0);
}

TEST_F(AppServerProbeTest, DestructorKillsARunningProbe) {
  Script("fakecodex", "echo $$ > " + dir_ + "/probe.pid\nexec sleep 30");
  bool called = false;
  {
    AppServerProbe probe(&loop_);
    probe.Check({"fakecodex"}, env_, dir_,
                [&](const ProbeVerdict&) { called = true; });
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    auto written = [&] {
      std::error_code ec;
      auto size = std::filesystem::file_size(dir_ + "/probe.pid", ec);
      return !ec && size > 0;
    };
    while (!written() && std::chrono::steady_clock::now() < deadline) {
      ASSERT_TRUE(loop_.RunOnce(milliseconds(20)));
    }
  }
  EXPECT_FALSE(called);
  std::ifstream pid_file(dir_ + "/probe.pid");
  pid_t pid = 0;
  ASSERT_TRUE(pid_file >> pid);
  EXPECT_EQ(::kill(pid, 0), -1);  // Killed and reaped.
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace baton
