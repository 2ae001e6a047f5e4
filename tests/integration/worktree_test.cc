// Agent workers in worktrees of their own (`delegate --worktree`; issue 16,
// doc/agents.md "Worktrees"): through the real daemon and CLI, a stand-in
// agent (`dsh`, the command adapter: the brief on stdin) that edits and
// commits the same file in two tasks at once, their evidence, and
// `baton worktree ls|clean`.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class WorktreeTest : public FakeAgentTest {
 protected:
  void SetUp() override {
    FakeAgentTest::SetUp();
    if (IsSkipped())
      return;
    if (std::system("command -v git >/dev/null") != 0)
      GTEST_SKIP() << "git is not installed";
    // The stand-in agent. Its brief says what to do:
    //   commit:TEXT  writes TEXT to shared.txt and commits it;
    //   dirty:TEXT   writes TEXT to shared.txt and a new file, no commit;
    //   wait:PATH    waits until PATH exists.
    std::string bin = home_ + "/agent-bin";
    std::filesystem::create_directories(bin);
    {
      std::ofstream script(bin + "/dsh");
      script << R"sh(#!/bin/sh
brief=$(cat)
case "$brief" in
  commit:*)
    printf '%s\n' "${brief#commit:}" > shared.txt
    git add shared.txt
    git -c user.email=agent@example.com -c user.name=agent commit -qm "${brief#commit:}" ;;
  dirty:*)
    printf '%s\n' "${brief#dirty:}" > shared.txt
    echo new > new.txt ;;
  wait:*)
    while [ ! -e "${brief#wait:}" ]; do sleep 0.02; done ;;
esac
echo "worked in $(pwd)"
)sh";
    }
    ASSERT_EQ(::chmod((bin + "/dsh").c_str(), 0755), 0);
    env_["PATH"] = bin + ":" + env_["PATH"];
    repo_ = home_ + "/repo";
    Git("git init -q " + repo_ + " && cd " + repo_ +
        " && echo base > shared.txt && mkdir sub && echo s > sub/s.txt && "
        "git add . && git -c user.email=t@example.com -c user.name=t commit "
        "-qm base");
  }

  static void Git(const std::string& script) {
    ASSERT_EQ(std::system(script.c_str()), 0) << script;
  }
  // The output of a shell line, or "" when it failed.
  static std::string Shell(const std::string& line) {
    std::string out;
    if (FILE* pipe = ::popen(line.c_str(), "r")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
        out.append(buf, n);
      if (::pclose(pipe) != 0)
        return "";
    }
    return out;
  }
  static std::string ReadText(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string repo_;
};

TEST_F(WorktreeTest, TwoWorkersChangeTheSameFileEachOnItsOwnBranch) {
  std::string first = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_, "commit:first"});
  std::string second = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_, "commit:second"});
  auto a = WaitEnd(first);
  auto b = WaitEnd(second);
  ASSERT_EQ(a["status"], "completed") << a.dump();
  ASSERT_EQ(b["status"], "completed") << b.dump();

  // Each ran in its own folder, on its own branch, from the same base.
  auto wa = a["agent"]["worktree"], wb = b["agent"]["worktree"];
  EXPECT_EQ(wa["branch"], "baton/" + first);
  EXPECT_EQ(wb["branch"], "baton/" + second);
  EXPECT_EQ(wa["repo"], repo_);
  EXPECT_NE(wa["path"], wb["path"]);
  EXPECT_EQ(a["cwd"], wa["path"]);
  std::string base = Shell("git -C " + repo_ + " rev-parse HEAD");
  EXPECT_EQ(wa["base"].get<std::string>() + "\n", base);
  EXPECT_NE(Baton({"output", first}, env_)
                .out.find("worked in " + wa["path"].get<std::string>()),
            std::string::npos);

  // Both kept, neither touched the repository's own folder.
  EXPECT_EQ(Shell("git -C " + repo_ + " show baton/" + first + ":shared.txt"),
            "first\n");
  EXPECT_EQ(Shell("git -C " + repo_ + " show baton/" + second + ":shared.txt"),
            "second\n");
  EXPECT_EQ(ReadText(repo_ + "/shared.txt"), "base\n");
  EXPECT_EQ(Shell("git -C " + repo_ + " status --porcelain"), "");

  // The evidence names the branch, its commit and its diff.
  auto evidence = a["evidence"];
  EXPECT_EQ(evidence["source"], "worktree") << evidence.dump();
  EXPECT_EQ(evidence["changed_files"], nlohmann::json({"shared.txt"}));
  EXPECT_EQ(evidence["branch"]["branch"], "baton/" + first);
  ASSERT_EQ(evidence["branch"]["commits"].size(), 1u) << evidence.dump();
  EXPECT_NE(evidence["branch"]["commits"][0].get<std::string>().find(" first"),
            std::string::npos);
  EXPECT_NE(evidence["branch"]["diff_stat"].get<std::string>().find(
                "shared.txt | 2 +-"),
            std::string::npos)
      << evidence.dump();
  EXPECT_EQ(evidence["branch"]["uncommitted"], false);
  auto status = Baton({"status", first}, env_);
  EXPECT_NE(status.out.find("branch baton/" + first + ": 1 commit on "),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("worktree: branch baton/" + first),
            std::string::npos)
      << status.out;
}

TEST_F(WorktreeTest, ASubfolderRunsInTheSameSubfolderOfTheWorktree) {
  std::string id = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_ + "/sub", "dirty:x"});
  auto task = WaitEnd(id);
  std::string path = task["agent"]["worktree"]["path"];
  EXPECT_EQ(task["cwd"], path + "/sub");
  // Uncommitted work counts as changed, new files too.
  EXPECT_EQ(task["evidence"]["changed_files"],
            nlohmann::json({"sub/new.txt", "sub/shared.txt"}))
      << task.dump();
  EXPECT_EQ(task["evidence"]["branch"]["uncommitted"], true);
}

// Issue 35, finding 10: the worktree's git runs off batond's loop. A git
// that takes its time over `worktree add` holds only that delegate's
// answer; other clients are answered meanwhile.
TEST_F(WorktreeTest, ASlowGitHoldsOnlyItsOwnDelegate) {
  std::string bin = home_ + "/slow-bin";
  std::string began = home_ + "/git-worktree-began";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin + "/git");
    script << "#!/bin/sh\nif [ \"$1\" = worktree ]; then touch " << began
           << "; sleep 4; fi\nPATH=/usr/bin:/bin exec git \"$@\"\n";
  }
  ASSERT_EQ(::chmod((bin + "/git").c_str(), 0755), 0);
  auto slow_env = env_;
  slow_env["PATH"] = bin + ":" + env_["PATH"];
  ASSERT_EQ(Baton({"ls"}, env_).exit_code, 0);  // batond is up.
  CommandResult delegated;
  std::thread client([&] {
    delegated = Baton({"delegate", "--agent", "dsh", "--worktree", "--cwd",
                       repo_, "commit:slow"},
                      slow_env, std::chrono::seconds(30));
  });
  for (int i = 0; i < 400 && !std::filesystem::exists(began); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  bool git_began = std::filesystem::exists(began);
  auto listed =
      Baton({"ls", "--all", "--quiet"}, env_, std::chrono::seconds(3));
  client.join();
  ASSERT_TRUE(git_began) << "the delegate never ran git worktree";
  EXPECT_FALSE(listed.timed_out) << "batond waited for git";
  EXPECT_EQ(listed.out, "");  // Not stored before its worktree is made.
  ASSERT_EQ(delegated.exit_code, 0) << delegated.err;
  std::string id = delegated.out.substr(0, delegated.out.find('\n'));
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["evidence"]["branch"]["commits"].size(), 1u) << task.dump();
}

TEST_F(WorktreeTest, OutsideARepositoryItIsRefusedAndNothingIsStarted) {
  auto refused = Baton(
      {"delegate", "--agent", "dsh", "--worktree", "--cwd", work_, "commit:x"},
      env_);
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find(work_ + " is not in a git repository"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(Baton({"ls", "--all", "--quiet"}, env_).out, "");
  // A repository without a commit has no HEAD to start from.
  Git("git init -q " + work_);
  refused = Baton(
      {"delegate", "--agent", "dsh", "--worktree", "--cwd", work_, "commit:x"},
      env_);
  EXPECT_NE(refused.err.find("has no commit yet; commit something first"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(Baton({"ls", "--all", "--quiet"}, env_).out, "");
}

TEST_F(WorktreeTest, AProfileDefaultAndNoWorktreeOverridingIt) {
  UseConfig(
      "[agents.isolated]\nadapter = \"command\"\ncommand = [\"dsh\"]\n"
      "worktree = true\n");
  std::string isolated =
      Delegate({"--agent", "isolated", "--cwd", repo_, "commit:iso"});
  std::string shared = Delegate(
      {"--agent", "isolated", "--no-worktree", "--cwd", repo_, "wait:/"});
  auto a = WaitEnd(isolated);
  auto b = WaitEnd(shared);
  EXPECT_EQ(a["agent"]["worktree"]["branch"], "baton/" + isolated);
  EXPECT_FALSE(b["agent"].contains("worktree")) << b.dump();
  EXPECT_EQ(b["cwd"], repo_);
}

TEST_F(WorktreeTest, CleanRemovesOnlyWhatLosesNothing) {
  std::string gate = home_ + "/gate";
  std::string merged = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_, "commit:merged"});
  std::string unmerged = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_, "commit:unmerged"});
  std::string dirty =
      Delegate({"--agent", "dsh", "--worktree", "--cwd", repo_, "dirty:wip"});
  std::string running = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_, "wait:" + gate});
  for (const auto& id : {merged, unmerged, dirty})
    ASSERT_NE(WaitEnd(id)["status"], "running");
  auto path = [&](const std::string& id) {
    return Status(id, env_)["agent"]["worktree"]["path"].get<std::string>();
  };
  Git("git -C " + repo_ + " merge -q --ff-only baton/" + merged);

  auto listed = Baton({"worktree", "ls"}, env_);
  EXPECT_NE(listed.out.find("merged"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("1 commit not merged"), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("uncommitted changes"), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("task running"), std::string::npos) << listed.out;

  // Without names: only the merged one goes, its branch with it.
  auto cleaned = Baton({"worktree", "clean"}, env_);
  EXPECT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_NE(cleaned.out.find(merged + ": removed " + path(merged) +
                             "; deleted branch baton/" + merged + " (merged)"),
            std::string::npos)
      << cleaned.out;
  EXPECT_FALSE(std::filesystem::exists(path(merged)));
  EXPECT_EQ(Shell("git -C " + repo_ + " branch --list baton/" + merged), "");
  // A removal is a control action: the audit trail names it.
  auto audit = Baton({"audit", "--task", merged}, env_);
  EXPECT_NE(audit.out.find("worktree_remove"), std::string::npos) << audit.out;
  EXPECT_TRUE(std::filesystem::exists(path(unmerged)));
  EXPECT_NE(cleaned.out.find(unmerged + ": kept: branch baton/" + unmerged +
                             " has 1 commit not in HEAD"),
            std::string::npos)
      << cleaned.out;
  EXPECT_NE(cleaned.out.find(dirty + ": kept: uncommitted changes"),
            std::string::npos)
      << cleaned.out;
  EXPECT_NE(cleaned.out.find(running + ": kept: it is running"),
            std::string::npos)
      << cleaned.out;
  EXPECT_TRUE(std::filesystem::exists(path(running)));

  // Named: an unmerged one's folder goes, its branch (the work) stays.
  cleaned = Baton({"worktree", "clean", unmerged}, env_);
  EXPECT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_FALSE(std::filesystem::exists(path(unmerged)));
  EXPECT_EQ(
      Shell("git -C " + repo_ + " show baton/" + unmerged + ":shared.txt"),
      "unmerged\n");

  // Uncommitted work only with --force; a running task's never.
  cleaned = Baton({"worktree", "clean", dirty, running}, env_);
  EXPECT_EQ(cleaned.exit_code, 1) << cleaned.out;
  EXPECT_EQ(ReadText(path(dirty) + "/shared.txt"), "wip\n");
  // --force loses nothing either: the work is committed on the branch.
  cleaned = Baton({"worktree", "clean", "--force", dirty}, env_);
  EXPECT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_NE(
      cleaned.out.find("committed its uncommitted work on baton/" + dirty),
      std::string::npos)
      << cleaned.out;
  EXPECT_FALSE(std::filesystem::exists(path(dirty)));
  EXPECT_EQ(Shell("git -C " + repo_ + " show baton/" + dirty + ":shared.txt"),
            "wip\n");
  EXPECT_EQ(Shell("git -C " + repo_ + " show baton/" + dirty + ":new.txt"),
            "new\n");

  EXPECT_EQ(Baton({"worktree", "clean", "agent-99"}, env_).exit_code, 1);
  std::ofstream{gate};
  EXPECT_EQ(WaitEnd(running)["status"], "completed");
}

// Issue 39, part 3: a running task's worktree is locked against git and
// people (git worktree remove refuses it), and unlocked when it ends.
TEST_F(WorktreeTest, ARunningTasksWorktreeIsLockedUntilItEnds) {
  std::string gate = home_ + "/gate";
  std::string id = Delegate(
      {"--agent", "dsh", "--worktree", "--cwd", repo_, "wait:" + gate});
  std::string path =
      Status(id, env_)["agent"]["worktree"]["path"].get<std::string>();
  std::string list = Shell("git -C " + repo_ + " worktree list --porcelain");
  EXPECT_NE(list.find("locked baton: task " + id + " runs in it"),
            std::string::npos)
      << list;
  EXPECT_NE(std::system(("git -C " + repo_ + " worktree remove --force " +
                         path + " 2>/dev/null")
                            .c_str()),
            0);
  EXPECT_TRUE(std::filesystem::exists(path));
  std::ofstream{gate};
  EXPECT_EQ(WaitEnd(id)["status"], "completed");
  list = Shell("git -C " + repo_ + " worktree list --porcelain");
  EXPECT_EQ(list.find("locked"), std::string::npos) << list;
}

// Never removed, whoever asks and with --force: commits on no branch (a
// detached HEAD), or a lock someone else put on it.
TEST_F(WorktreeTest, CommitsOnNoBranchAndAPersonsLockKeepIt) {
  std::string detached =
      Delegate({"--agent", "dsh", "--worktree", "--cwd", repo_, "commit:one"});
  std::string locked =
      Delegate({"--agent", "dsh", "--worktree", "--cwd", repo_, "commit:two"});
  for (const auto& id : {detached, locked})
    ASSERT_EQ(WaitEnd(id)["status"], "completed");
  auto path = [&](const std::string& id) {
    return Status(id, env_)["agent"]["worktree"]["path"].get<std::string>();
  };
  Git("cd " + path(detached) +
      " && git checkout -q --detach && echo loose > loose.txt && git add . "
      "&& git -c user.email=t@example.com -c user.name=t commit -qm loose");
  Git("git -C " + repo_ + " worktree lock --reason 'mine, hands off' " +
      path(locked));

  auto cleaned =
      Baton({"worktree", "clean", "--force", detached, locked}, env_);
  EXPECT_EQ(cleaned.exit_code, 1) << cleaned.out;
  EXPECT_NE(cleaned.out.find(detached + ": kept: its HEAD holds 1 commit on "
                                        "no branch"),
            std::string::npos)
      << cleaned.out;
  EXPECT_NE(cleaned.out.find(locked + ": kept: locked: mine, hands off"),
            std::string::npos)
      << cleaned.out;
  EXPECT_TRUE(std::filesystem::exists(path(detached) + "/loose.txt"));
  EXPECT_TRUE(std::filesystem::exists(path(locked)));
  auto listed = Baton({"--json", "worktree", "ls"}, env_);
  EXPECT_NE(listed.out.find("\"commits_on_no_branch\":1"), std::string::npos)
      << listed.out;
}

// A resume goes on in the worktree of the task it resumes: locked for it,
// and the first task's worktree is not cleaned while it runs.
TEST_F(WorktreeTest, AResumeGoesOnInTheSameWorktreeAndHoldsIt) {
  std::string first = Delegate(
      {"--agent", "claude", "--worktree", "--cwd", repo_, "say hello"});
  ASSERT_EQ(WaitEnd(first)["status"], "completed");
  std::string path =
      Status(first, env_)["agent"]["worktree"]["path"].get<std::string>();
  // Not Delegate(): it would name a folder, and the resume is to go on
  // where the first ran.
  auto started = Baton({"delegate", "--resume", first, "ASK me"}, env_);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string resumed = started.out.substr(0, started.out.find('\n'));
  ASSERT_TRUE(WaitForEvent(resumed, "question").is_object());
  auto status = Status(resumed, env_);
  EXPECT_EQ(status["agent"]["worktree"]["path"], path) << status.dump();
  EXPECT_EQ(status["cwd"], path) << status.dump();
  std::string list = Shell("git -C " + repo_ + " worktree list --porcelain");
  EXPECT_NE(list.find("locked baton: task " + resumed + " runs in it"),
            std::string::npos)
      << list;

  auto cleaned = Baton({"worktree", "clean", "--force", first}, env_);
  EXPECT_EQ(cleaned.exit_code, 1) << cleaned.out;
  EXPECT_NE(cleaned.out.find(first + ": kept: " + resumed + " goes on in it"),
            std::string::npos)
      << cleaned.out;
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(Baton({"kill", resumed}, env_).exit_code, 0);
  EXPECT_NE(WaitEnd(resumed)["status"], "running");
  cleaned = Baton({"worktree", "clean", first}, env_);
  EXPECT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace baton::testing
