// Checks and evidence: commands run in the task's folder when it ends, the
// files changed during the run, and the tasks that overlapped there.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class EvidenceTest : public BatonTest {
 protected:
  std::string MakeFolder(bool git) {
    std::string dir = home_ + "/work";
    std::string script =
        "mkdir -p " + dir + " && cd " + dir +
        " && echo a > a.txt && echo 'build/' > .gitignore && echo old > "
        "gone.txt";
    if (git) {
      script +=
          " && git init -q && git add . && git -c user.email=t@t -c "
          "user.name=t commit -qm init";
    }
    EXPECT_EQ(std::system(script.c_str()), 0);
    return dir;
  }
};

TEST_F(EvidenceTest, GitFolderReportsChangedFilesChecksAndOverlaps) {
  if (std::system("command -v git >/dev/null") != 0)
    GTEST_SKIP() << "no git";
  std::string dir = MakeFolder(true);
  // The first task goes on once the other runs: the two overlap however
  // slowly tasks start (a gate outside the folder, not a sleep).
  std::string gate = home_ + "/other-runs";
  std::string id =
      Run("while [ ! -e " + gate +
              " ]; do sleep 0.01; done; echo b > b.txt; echo more >> a.txt; rm "
              "gone.txt; mkdir -p build; echo o > build/out.o",
          {"--cwd", dir, "--check", "echo checking; exit 2", "--check",
           "git status --short"});
  std::string other = Run("touch " + gate + "; sleep 1", {"--cwd", dir});
  auto waited = Baton({"--json", "wait", "--timeout", "20s", id});
  auto task = waited.json()["ended"][0];
  // Its process succeeded, its first check did not (issue 13).
  EXPECT_EQ(task["status"], "failed") << waited.out;
  EXPECT_EQ(task["detail"],
            "check failed: echo checking; exit 2 (exit code 2)");
  EXPECT_EQ(task["exit_code"], 0);
  auto evidence = task["evidence"];
  EXPECT_EQ(evidence["source"], "git");
  // build/out.o is ignored by git: not evidence.
  EXPECT_EQ(evidence["changed_files"],
            nlohmann::json({"a.txt", "b.txt", "gone.txt"}))
      << evidence.dump();
  ASSERT_EQ(evidence["checks"].size(), 2u);
  EXPECT_EQ(evidence["checks"][0]["exit_code"], 2);
  EXPECT_EQ(evidence["checks"][0]["tail"], "checking\n");
  EXPECT_NE(evidence["checks"][1]["tail"].get<std::string>().find("?? b.txt"),
            std::string::npos);
  EXPECT_EQ(evidence["overlapping_tasks"], nlohmann::json({other}));
  // The diff of those files, the new one too, kept beside the output.
  ASSERT_TRUE(evidence.contains("diff_path")) << evidence.dump();
  std::ifstream file(evidence["diff_path"].get<std::string>());
  std::string diff((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  for (const char* part :
       {"--- a/a.txt\n+++ b/a.txt\n", " a\n+more\n", "--- a/gone.txt\n",
        "-old\n", "--- /dev/null\n+++ b/b.txt\n", "+b\n"}) {
    EXPECT_NE(diff.find(part), std::string::npos) << part << " in\n" << diff;
  }
  EXPECT_EQ(diff.find("out.o"), std::string::npos) << diff;
  EXPECT_EQ(evidence["diff_truncated"], false);
}

TEST_F(EvidenceTest, TheDiffIsMaskedAndStatusNamesIt) {
  if (std::system("command -v git >/dev/null") != 0)
    GTEST_SKIP() << "no git";
  std::string dir = MakeFolder(true);
  // A worker's new .env: its key is shown wherever the diff is, so it is
  // masked like output (doc/redaction.md). The key is built at run time:
  // the command line itself is not the point here.
  std::string id = Run("A=AKIA; B=IOSFODNN7EXAMPLE; echo \"KEY=$A$B\" > .env",
                       {"--cwd", dir, "--check", "true"});
  auto waited = Baton({"--json", "wait", "--timeout", "20s", id});
  auto evidence = waited.json()["ended"][0]["evidence"];
  ASSERT_TRUE(evidence.contains("diff_path")) << evidence.dump();
  std::string path = evidence["diff_path"];
  std::ifstream file(path);
  std::string diff((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(diff.find("+++ b/.env\n"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("AKIAIOSFODNN7EXAMPLE"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+KEY=[redacted: aws-key]"), std::string::npos) << diff;
  // `status` names the diff's file, so a person can open it.
  auto status = Baton({"status", id});
  EXPECT_NE(status.out.find("diff: " + path + "\n"), std::string::npos)
      << status.out;
}

// Issue 35, finding 10: git ran on batond's one loop, with no deadline, so
// a slow git (a lock, a network file system) froze every client. The
// evidence is collected off the loop now.
TEST_F(EvidenceTest, ASlowGitHoldsOnlyItsOwnTasksEvidence) {
  if (std::system("command -v git >/dev/null") != 0)
    GTEST_SKIP() << "no git";
  std::string dir = MakeFolder(true);
  // The task's PATH finds a git that takes its time over `status`.
  std::string bin = home_ + "/slow-bin";
  std::string began = home_ + "/git-status-began";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin + "/git");
    script << "#!/bin/sh\nif [ \"$1\" = status ]; then touch " << began
           << "; sleep 6; fi\nPATH=/usr/bin:/bin exec git \"$@\"\n";
  }
  std::filesystem::permissions(bin + "/git", std::filesystem::perms::owner_all);
  std::string id = Run("echo b > b.txt", {"--cwd", dir, "--check", "true"},
                       {{"PATH", bin + ":/usr/bin:/bin"}});
  for (int i = 0; i < 400 && !std::filesystem::exists(began); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(std::filesystem::exists(began)) << "the evidence never ran git";
  // batond answers while that git runs, and the task is not over yet.
  auto status = Baton({"--json", "status", id}, {}, std::chrono::seconds(4));
  ASSERT_FALSE(status.timed_out) << "batond waited for git";
  EXPECT_NE(status.json()["status"], "completed") << status.out;
  auto waited = Baton({"--json", "wait", "--timeout", "30s", id}, {},
                      std::chrono::seconds(40));
  auto task = waited.json()["ended"][0];
  EXPECT_EQ(task["status"], "completed") << waited.out;
  EXPECT_EQ(task["evidence"]["source"], "git");
  EXPECT_EQ(task["evidence"]["changed_files"], nlohmann::json({"b.txt"}));
}

TEST_F(EvidenceTest, PlainFolderUsesABeforeAfterScan) {
  std::string dir = MakeFolder(false);
  std::string id = Run("echo new > new.txt; mkdir -p sub; echo x > sub/y",
                       {"--cwd", dir, "--check", "test -f new.txt"});
  auto waited = Baton({"--json", "wait", "--timeout", "20s", id});
  auto evidence = waited.json()["ended"][0]["evidence"];
  EXPECT_EQ(evidence["source"], "scan");
  EXPECT_EQ(evidence["changed_files"], nlohmann::json({"new.txt", "sub/y"}));
  EXPECT_EQ(evidence["checks"][0]["exit_code"], 0);
  EXPECT_EQ(evidence["overlapping_tasks"], nlohmann::json::array());
  EXPECT_FALSE(evidence.contains("diff_path"));  // Not a git folder.
}

// Checks run with the environment the task ran with (its client's, its
// overrides, its id), not batond's, which came from whichever client
// started it.
TEST_F(EvidenceTest, ChecksSeeTheTasksEnvironment) {
  std::string dir = MakeFolder(false);
  ASSERT_EQ(
      Baton({"ls"}, {{"FROM_CLIENT", "<unset>"}, {"FROM_BATOND", "daemon"}})
          .exit_code,
      0);
  std::string show =
      "echo \"$FROM_CLIENT/$SET_FOR_TASK/$BATON_TASK_ID/$FROM_BATOND\"";
  std::string id = Run(
      show, {"--cwd", dir, "--env", "SET_FOR_TASK=override", "--check", show},
      {{"FROM_CLIENT", "client"}, {"FROM_BATOND", "<unset>"}});
  auto waited = Baton({"--json", "wait", "--timeout", "20s", id});
  auto evidence = waited.json()["ended"][0]["evidence"];
  std::string expected = "client/override/" + id + "/\n";
  EXPECT_EQ(Baton({"output", id}).out, expected);
  ASSERT_EQ(evidence["checks"].size(), 1u) << waited.out;
  EXPECT_EQ(evidence["checks"][0]["tail"], expected) << waited.out;
}

// Issue 13: a check that failed fails the task, and every place that tells
// its end tells the checks' outcome.
TEST_F(EvidenceTest, AFailedCheckFailsTheTaskAndItsEvidenceIsTold) {
  std::string dir = MakeFolder(false);
  auto ran = Baton({"run", "--cwd", dir, "--check", "echo boom; exit 3",
                    "--wait", "--", "echo hi > made.txt"});
  EXPECT_EQ(ran.exit_code, 1) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("failed (check failed: echo boom; exit 3 (exit code "
                         "3))"),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("check `echo boom; exit 3`: exit code 3\n    | boom"),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("changed files: 1 (made.txt)"), std::string::npos)
      << ran.out;
  auto waited = Baton({"wait", "shell-1"});
  EXPECT_EQ(waited.exit_code, 1);
  EXPECT_NE(waited.out.find("| boom"), std::string::npos) << waited.out;
  auto status = Baton({"status", "shell-1"});
  EXPECT_NE(status.out.find("check `echo boom; exit 3`: exit code 3"),
            std::string::npos)
      << status.out;
  auto task = Status("shell-1");
  EXPECT_EQ(task["status"], "failed");
  EXPECT_EQ(task["exit_code"], 0);

  // A passing check leaves a completed task and exit code 0.
  auto passed =
      Baton({"run", "--cwd", dir, "--check", "true", "--wait", "--", "true"});
  EXPECT_EQ(passed.exit_code, 0) << passed.out << passed.err;
  EXPECT_NE(passed.out.find("check `true`: exit code 0"), std::string::npos);
}

// The ended notice carries the evidence, in its text and its task object.
TEST_F(EvidenceTest, TheEndedNoticeTellsTheChecks) {
  std::string dir = MakeFolder(false);
  std::map<std::string, std::string> env = {{"BATON_SESSION", "director"}};
  std::string id =
      Run("true", {"--cwd", dir, "--check", "echo nope; exit 4"}, env);
  CommandResult listed;
  for (int i = 0; i < 100; ++i) {
    listed = Baton({"ls"}, env);
    if (listed.err.find("notice") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(listed.err.find("baton: notice: " + id +
                            " failed (check failed: echo nope; exit 4 (exit "
                            "code 4))\n  check `echo nope; exit 4`: exit code "
                            "4\n    | nope\n  changed files: 0"),
            std::string::npos)
      << listed.err;
}

}  // namespace
}  // namespace baton::testing
