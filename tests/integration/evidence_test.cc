// Checks and evidence: commands run in the task's folder when it ends, the
// files changed during the run, and the tasks that overlapped there.
#include <cstdlib>
#include <fstream>

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
  EXPECT_EQ(task["status"], "completed") << waited.out;
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

}  // namespace
}  // namespace baton::testing
