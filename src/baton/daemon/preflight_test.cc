#include "baton/daemon/preflight.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "baton/ipc/slurm_request.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_.MakeDir("a");
    tmp_.MakeDir("b");
  }

  void MakeTool(const std::string& dir, mode_t mode = 0700) {
    std::string file = root_ + "/" + dir + "/tool";
    std::ofstream{file} << "#!/bin/sh\n";
    ASSERT_EQ(::chmod(file.c_str(), mode), 0);
  }
  void RemoveTool(const std::string& dir) {
    ASSERT_EQ(::unlink((root_ + "/" + dir + "/tool").c_str()), 0);
  }
  TaskSpec Spec() {
    TaskSpec spec;
    spec.argv = {"tool"};
    spec.cwd = root_;
    spec.base_env = {"PATH=" + root_ + "/a:" + root_ + "/b"};
    return spec;
  }

  // The whole preflight of a shell line run in Spec()'s folder and PATH,
  // `sh -n` included, on a loop as batond runs it.
  Status Shell(std::string line) {
    TaskSpec spec = Spec();
    spec.argv.clear();
    spec.shell_command = std::move(line);
    std::optional<Status> verdict;
    PreflightTask(spec, &cache_, &runner_, [&](Result<TaskSpec> checked) {
      verdict = checked ? Status{} : Status(std::unexpected(checked.error()));
      if (checked) {
        EXPECT_EQ(checked->shell_command, spec.shell_command);
      }
    });
    for (int i = 0; i < 1000 && !verdict; ++i)
      loop_.RunOnce(std::chrono::milliseconds(10));
    EXPECT_TRUE(verdict) << "no verdict in 10 s";
    return verdict.value_or(Status{});
  }

  testing::TempDir tmp_;
  const std::string& root_ = tmp_.path();
  ProgramCache cache_;
  EventLoop loop_;
  CommandRunner runner_{&loop_};
};

// Issue 35, finding 9: a shell line whose program does not exist became a
// failing task, while the same mistake in argv form was refused.
TEST_F(PreflightTest, AShellLinesFirstProgramIsCheckedAsArgvIs) {
  MakeTool("a");
  for (const char* runs :
       {"tool --flag", "  tool; nosuch", "tool|nosuch", "FOO=1 nosuch",
        "cd / && nosuch", "$TOOL x", "'nosuch' x", "nosuch() { :; }; nosuch",
        "nosuch () { :; }", "(nosuch)", "# a comment", "if nosuch; then :; fi",
        "exec nosuch", ">out nosuch", "", "   "}) {
    EXPECT_TRUE(Shell(runs)) << runs;
  }
  auto missing = Shell("nosuch --flag");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "command not found: nosuch (the shell line's first program; "
            "searched PATH); check the name or give a full path. The line "
            "was not run");
  auto no_file = Shell("./missing.sh arg");
  ASSERT_FALSE(no_file);
  EXPECT_EQ(no_file.error().message,
            root_ +
                "/./missing.sh is not an executable file; check the path "
                "(the shell line was not run)");
  // On a Slurm node the batch shell may define it (module load ...).
  TaskSpec slurm = Spec();
  slurm.argv.clear();
  slurm.shell_command = "module load gcc";
  slurm.remote = ToRemote(SlurmRequest{});
  EXPECT_TRUE(PreflightTask(slurm, &cache_));
}

// Issue 35, finding 9: a shell line with a syntax error became a failing
// task. `sh -n` is asked only about lines the scan doubts.
TEST_F(PreflightTest, AShellLineThatDoesNotParseIsRefusedBeforeItRuns) {
  for (const char* broken :
       {"if true; echo x", "echo 'open", "echo \"open", "echo `open",
        "echo $(date", "echo x |", "| echo x", "; echo x", "echo a && || b",
        "echo a ; ; b", "echo a ;; b", "for f in 1; do echo", "done",
        "echo x >", "f() { echo"}) {
    auto refused = Shell(broken);
    ASSERT_FALSE(refused) << broken;
    EXPECT_NE(refused.error().message.find("the shell line does not parse"),
              std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().message.find("Syntax error"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_EQ(Shell("if true; echo x").error().message,
            "the shell line does not parse (sh: 1: Syntax error: end of file "
            "unexpected (expecting \"then\")); fix its syntax (check it with "
            "sh -n -c LINE). The line was not run");
  for (const char* fine :
       {"if true; then echo; fi", "echo \"$(echo \"x y\")\"",
        "for f in *; do :; done", "echo 'a;;b' \"(\" \\(", "true <<EOF\nx\nEOF",
        "true && echo || echo", "f() { :; }; f", "(cd / && ls) | wc -l",
        "echo x 2>&1 >/dev/null &", "echo $((1 + 2)) # a (comment",
        "case x in x) echo;; esac", "echo done", "echo \\; x"}) {
    EXPECT_TRUE(Shell(fine)) << fine;
  }
}

// Issue 36: `sh -n` ran on batond's loop and held every client for its
// few milliseconds. It is now a process the loop watches: the verdict on a
// doubtful line comes from the loop, never from inside the call, and a
// plain line asks no shell at all.
TEST_F(PreflightTest, TheShellIsAskedOffTheLoopAndOnlyAboutDoubtfulLines) {
  TaskSpec spec = Spec();
  spec.argv.clear();
  spec.shell_command = "if true; echo x";
  bool told = false;
  PreflightTask(spec, &cache_, &runner_,
                [&](const Result<TaskSpec>&) { told = true; });
  EXPECT_FALSE(told);
  EXPECT_EQ(runner_.started(), 1);
  for (int i = 0; i < 1000 && !told; ++i)
    loop_.RunOnce(std::chrono::milliseconds(10));
  EXPECT_TRUE(told);
  EXPECT_TRUE(Shell("echo a; sleep 1 | cat > /dev/null"));
  EXPECT_EQ(runner_.started(), 1);
}

TEST(ShellLineScan, TheUsualLinesNeedNoShellToParse) {
  for (const char* plain :
       {"make test", "echo M; sleep 2; exit 3", "a 2>&1 | b > c", "a && b &",
        "FOO=1 cmd --flag='x y' \"z\"", "echo $(date) `id`", "cd /; ls -l",
        ">out cmd", "", "  ", "echo 'if' \"done\" x\\ y",
        "sleep 0.2; exit 4"}) {
    EXPECT_FALSE(ShellLineMayNotParse(plain)) << plain;
  }
  for (const char* doubtful :
       {"if x; then y; fi", "a |", "a >", "echo '", "(a", "a )", "; a",
        "a | | b", "a &> f", "cat <<E", "{ a; }", "while :; do :; done"}) {
    EXPECT_TRUE(ShellLineMayNotParse(doubtful)) << doubtful;
  }
}

TEST_F(PreflightTest, ACachedCommandIsCheckedAgainOnEachUse) {
  MakeTool("b");
  EXPECT_TRUE(PreflightTask(Spec(), &cache_));
  // Gone from b, now in a: the cached file fails its check, the search
  // finds the new one.
  RemoveTool("b");
  MakeTool("a");
  EXPECT_TRUE(PreflightTask(Spec(), &cache_));
  // No longer executable: never a yes from the cache.
  ASSERT_EQ(::chmod((root_ + "/a/tool").c_str(), 0600), 0);
  auto missing = PreflightTask(Spec(), &cache_);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("command not found: tool"),
            std::string::npos)
      << missing.error().message;
  RemoveTool("a");
  EXPECT_FALSE(PreflightTask(Spec(), &cache_));
}

// Without a PATH the preflight searches where the spawn will
// (kFallbackPath): a command only in /usr/local/bin is found by both.
TEST_F(PreflightTest, WithoutAPathItSearchesWhereTheSpawnDoes) {
  std::string only_local;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/usr/local/bin", ec)) {
    std::string name = entry.path().filename();
    if (IsExecutableFile(entry.path()) &&
        !std::filesystem::exists("/usr/bin/" + name) &&
        !std::filesystem::exists("/bin/" + name)) {
      only_local = name;
      break;
    }
  }
  if (only_local.empty())
    GTEST_SKIP() << "no program only in /usr/local/bin here";
  TaskSpec spec = Spec();
  spec.argv = {only_local};
  spec.base_env = {"HOME=/"};  // A client environment without PATH.
  EXPECT_TRUE(PreflightTask(spec, &cache_)) << only_local;
  EXPECT_TRUE(ResolveProgram(only_local, spec.base_env, spec.cwd));
}

}  // namespace
}  // namespace baton
