// The conflict radar's logic (doc/conflicts.md): shared files, which
// overlaps are news, and their words; and its git on real repositories:
// a worktree's snapshot, committed or not, that leaves the worktree as it
// was, and trial merges that tell a conflict from the same file.
#include "baton/daemon/conflict_overlaps.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "baton/daemon/conflict_git.h"
#include "baton/ipc/task_text.h"
#include "baton/util/environment.h"
#include "baton/util/git.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

OverlapInfo Pair(std::string a, std::string b, OverlapKind kind,
                 std::vector<std::string> files) {
  return {.tasks = {std::move(a), std::move(b)},
          .repo = "/repo",
          .kind = kind,
          .files = std::move(files)};
}

TEST(ConflictOverlapsTest, SharedFilesAreThoseBothChanged) {
  EXPECT_EQ(SharedFiles({"a", "b", "c"}, {"b", "c", "d"}),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(SharedFiles({"a"}, {"b"}).empty());
  EXPECT_TRUE(SharedFiles({}, {"b"}).empty());
}

TEST(ConflictOverlapsTest, ANewOverlapIsNewsOnceThenKeepsItsSince) {
  auto first = ReconcileOverlaps(
      {}, {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"})}, 100);
  ASSERT_EQ(first.news.size(), 1u);
  ASSERT_EQ(first.current.size(), 1u);
  EXPECT_EQ(first.current[0].since_ms, 100);
  EXPECT_EQ(first.current[0].checked_ms, 100);

  // The same again, with one more file: not news; since kept.
  auto second = ReconcileOverlaps(
      first.current,
      {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a", "b"})}, 200);
  EXPECT_TRUE(second.news.empty());
  ASSERT_EQ(second.current.size(), 1u);
  EXPECT_EQ(second.current[0].since_ms, 100);
  EXPECT_EQ(second.current[0].checked_ms, 200);
  EXPECT_EQ(second.current[0].files, (std::vector<std::string>{"a", "b"}));
}

TEST(ConflictOverlapsTest, ASameFileOverlapThatConflictsIsNewsAgain) {
  auto before = ReconcileOverlaps(
      {}, {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"})}, 100);
  auto worse = ReconcileOverlaps(
      before.current,
      {Pair("agent-1", "agent-2", OverlapKind::kConflict, {"a"})}, 200);
  ASSERT_EQ(worse.news.size(), 1u);
  EXPECT_EQ(worse.news[0].kind, OverlapKind::kConflict);
  EXPECT_EQ(worse.current[0].since_ms, 200);
  // Back to the same file (the conflict resolved): not news.
  auto better = ReconcileOverlaps(
      worse.current,
      {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"})}, 300);
  EXPECT_TRUE(better.news.empty());
  EXPECT_EQ(better.current[0].since_ms, 300);
}

TEST(ConflictOverlapsTest, AnOverlapThatWentAndCameBackIsNewsAgain) {
  auto before = ReconcileOverlaps(
      {}, {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"})}, 100);
  auto gone = ReconcileOverlaps(before.current, {}, 200);
  EXPECT_TRUE(gone.current.empty());
  EXPECT_TRUE(gone.news.empty());
  auto back = ReconcileOverlaps(
      gone.current, {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"})},
      300);
  EXPECT_EQ(back.news.size(), 1u);
}

TEST(ConflictOverlapsTest, PairsAreToldApart) {
  auto before = ReconcileOverlaps(
      {}, {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"})}, 100);
  auto more = ReconcileOverlaps(
      before.current,
      {Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a"}),
       Pair("agent-1", "agent-3", OverlapKind::kSameFile, {"a"})},
      200);
  ASSERT_EQ(more.news.size(), 1u);
  EXPECT_EQ(more.news[0].tasks,
            (std::vector<std::string>{"agent-1", "agent-3"}));
}

TEST(ConflictOverlapsTest, TheTextNamesTasksFilesAndKind) {
  auto conflict =
      Pair("agent-1", "agent-2", OverlapKind::kConflict, {"a.txt", "b.txt"});
  conflict.conflict_files = {"a.txt"};
  EXPECT_EQ(OverlapText(conflict),
            "agent-1 and agent-2 both changed a.txt, b.txt (in /repo): a "
            "textual conflict in a.txt (their changes would not merge)");
  EXPECT_EQ(OverlapText(
                Pair("agent-1", "agent-2", OverlapKind::kSameFile, {"a.txt"})),
            "agent-1 and agent-2 both changed a.txt (in /repo): the same "
            "file, no textual conflict (git merges them)");
  std::vector<std::string> many;
  for (int i = 0; i < 10; ++i)
    many.push_back("f" + std::to_string(i));
  std::string text =
      OverlapText(Pair("agent-1", "agent-2", OverlapKind::kSameFile, many));
  EXPECT_NE(text.find("f7 and 2 more files"), std::string::npos) << text;
  EXPECT_EQ(text.find("f8"), std::string::npos) << text;
}

// ---- git, on real repositories ---------------------------------------------

class ConflictGitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v git >/dev/null") != 0)
      GTEST_SKIP() << "git is not installed";
    env_ = RadarGitEnvironment(ProcessEnvironment());
    repo_ = dir_.MakeDir("repo");
    Sh("git init -q . && printf 'a\\nb\\nc\\nd\\ne\\nf\\ng\\n' > f.txt && "
       "echo x > g.txt && git add . && git -c user.name=t -c "
       "user.email=t@example.com commit -qm base && git worktree add -q -b "
       "w1 ../w1 && git worktree add -q -b w2 ../w2");
    base_ = Git(repo_, {"rev-parse", "HEAD"});
  }
  void Sh(const std::string& line, const std::string& cwd = "") {
    std::string in = cwd.empty() ? repo_ : cwd;
    ASSERT_EQ(std::system(("cd " + in + " && " + line).c_str()), 0) << line;
  }
  std::string Git(const std::string& cwd, std::vector<std::string> args) {
    auto result = RunGit(cwd, args, env_);
    EXPECT_TRUE(result && result->ok());
    return result ? result->out.substr(0, result->out.find('\n')) : "";
  }
  Worktree Tree(const std::string& name) {
    return {.repo = repo_,
            .path = dir_.path() + "/" + name,
            .branch = name,
            .base = base_};
  }
  WorktreeSnapshot Snapshot(const std::string& name) {
    auto snapshot = SnapshotWorktree(Tree(name), env_, dir_.path() + "/radar",
                                     std::chrono::seconds(30));
    EXPECT_TRUE(snapshot) << snapshot.error().message;
    return snapshot ? *snapshot : WorktreeSnapshot{};
  }
  TrialMerge Merge(const WorktreeSnapshot& a, const WorktreeSnapshot& b) {
    auto merged = TrialMergeCommits(repo_, a.commit, b.commit, env_,
                                    std::chrono::seconds(30));
    EXPECT_TRUE(merged) << merged.error().message;
    return merged ? *merged : TrialMerge{};
  }

  testing::TempDir dir_;
  std::vector<std::string> env_;
  std::string repo_;
  std::string base_;
};

TEST_F(ConflictGitTest, UncommittedChangesCountAndTheWorktreeStaysAsItWas) {
  std::string w1 = dir_.path() + "/w1";
  Sh("sed -i 's/^a$/A1/' f.txt && echo new > new.txt && git add f.txt", w1);
  std::string status_before = Git(w1, {"status", "--porcelain"});
  auto snapshot = Snapshot("w1");
  EXPECT_EQ(snapshot.files, (std::vector<std::string>{"f.txt", "new.txt"}));
  // Its index and files as they were: new.txt still untracked.
  auto status = RunGit(w1, {"status", "--porcelain"}, env_);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->out, "M  f.txt\n?? new.txt\n");
  // The same state is the same commit (its trial merges are kept), with
  // the last snapshot or without.
  EXPECT_EQ(Snapshot("w1").commit, snapshot.commit);
  auto again = SnapshotWorktree(Tree("w1"), env_, dir_.path() + "/radar",
                                std::chrono::seconds(30), &snapshot);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->commit, snapshot.commit);
  EXPECT_EQ(again->files, snapshot.files);
  // A change since is seen, the last snapshot given or not.
  Sh("echo more >> new.txt", w1);
  auto changed = SnapshotWorktree(Tree("w1"), env_, dir_.path() + "/radar",
                                  std::chrono::seconds(30), &snapshot);
  ASSERT_TRUE(changed);
  EXPECT_NE(changed->commit, snapshot.commit);
  // An unchanged worktree has no files.
  EXPECT_TRUE(Snapshot("w2").files.empty());
}

// A file rewritten in place with the same size in the second its index
// was written has the stat data of its index entry: only git's racy-clean
// rule (the file is not older than the index) makes it look at its
// content, which a copy of the index must keep (its mtime).
TEST_F(ConflictGitTest, ARewriteInTheSecondOfTheIndexCounts) {
  std::string w1 = dir_.path() + "/w1";
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto before = std::chrono::system_clock::now();
    Sh("echo A > g.txt && git add g.txt && echo B > g.txt", w1);
    auto after = std::chrono::system_clock::now();
    auto second = [](auto t) {
      return std::chrono::time_point_cast<std::chrono::seconds>(t);
    };
    if (second(before) == second(after))
      break;  // All in one second, as wanted; else again.
  }
  // The snapshot in a later second than the index's.
  auto written = std::filesystem::last_write_time(
      Git(w1, {"rev-parse", "--git-path", "index"}));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::file_clock::now() - written < std::chrono::seconds(1) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto snapshot = Snapshot("w1");
  EXPECT_EQ(snapshot.files, (std::vector<std::string>{"g.txt"}));
  auto shown = RunGit(w1, {"show", snapshot.commit + ":g.txt"}, env_);
  ASSERT_TRUE(shown);
  EXPECT_EQ(shown->out, "B\n");
}

TEST_F(ConflictGitTest, CommittedChangesCountToo) {
  std::string w1 = dir_.path() + "/w1";
  Sh("echo more >> g.txt && git -c user.name=t -c user.email=t@example.com "
     "commit -qam more",
     w1);
  EXPECT_EQ(Snapshot("w1").files, (std::vector<std::string>{"g.txt"}));
}

TEST_F(ConflictGitTest, TheSameLinesConflictOtherLinesMerge) {
  std::string w1 = dir_.path() + "/w1", w2 = dir_.path() + "/w2";
  Sh("sed -i 's/^a$/A1/' f.txt", w1);
  Sh("sed -i 's/^g$/G2/' f.txt", w2);
  auto clean = Merge(Snapshot("w1"), Snapshot("w2"));
  EXPECT_FALSE(clean.conflict);
  EXPECT_TRUE(clean.conflict_files.empty());

  Sh("sed -i 's/^a$/A2/' f.txt", w2);
  auto conflict = Merge(Snapshot("w1"), Snapshot("w2"));
  EXPECT_TRUE(conflict.conflict);
  EXPECT_EQ(conflict.conflict_files, (std::vector<std::string>{"f.txt"}));
}

TEST_F(ConflictGitTest, AGoneWorktreeIsAnErrorNotACrash) {
  auto snapshot = SnapshotWorktree(Tree("nowhere"), env_, dir_.path() + "/r",
                                   std::chrono::seconds(30));
  EXPECT_FALSE(snapshot);
}

}  // namespace
}  // namespace baton
