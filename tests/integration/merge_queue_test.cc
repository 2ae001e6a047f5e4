// The merge queue (doc/land.md) through the real daemon and CLI, on real
// git repositories: agent workers (`dsh`, the command adapter, with a
// stand-in that runs its brief as a shell script) commit in their
// worktrees and end; `baton land` queues their branches, batond brings
// them onto main in a scratch worktree, runs the check (a shell line that
// counts its runs), and moves main forward.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::seconds;

class MergeQueueTest : public FakeAgentTest {
 protected:
  void SetUp() override {
    FakeAgentTest::SetUp();
    if (IsSkipped())
      return;
    if (std::system("command -v git >/dev/null") != 0)
      GTEST_SKIP() << "git is not installed";
    std::string bin = home_ + "/agent-bin";
    std::filesystem::create_directories(bin);
    std::ofstream(bin + "/dsh") << "#!/bin/sh\nbrief=$(cat)\nexec sh -c "
                                   "\"$brief\"\n";
    ASSERT_EQ(::chmod((bin + "/dsh").c_str(), 0755), 0);
    env_["PATH"] = bin + ":" + env_["PATH"];
    repo_ = home_ + "/repo";
    runs_ = home_ + "/runs";
    // The identity is the repository's: batond's rebases use it too.
    Git("git init -q -b main " + repo_ + " && cd " + repo_ +
        " && git config user.email t@example.com && git config user.name t "
        "&& printf 'a\\nb\\nc\\n' > f.txt && git add . && git commit -qm "
        "base");
  }

  static void Git(const std::string& script) {
    ASSERT_EQ(std::system(script.c_str()), 0) << script;
  }
  // The output of a shell line, without its last newline.
  static std::string Shell(const std::string& line) {
    std::string out;
    if (FILE* pipe = ::popen(line.c_str(), "r")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
        out.append(buf, n);
      ::pclose(pipe);
    }
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    return out;
  }
  // A worker that runs `script` in its worktree and ends; its id, once it
  // ended completed.
  std::string Worker(const std::string& script) {
    auto result = Baton(
        {"delegate", "--agent", "dsh", "--worktree", "--cwd", repo_, script},
        env_);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, result.out.find('\n'));
  }
  // A worker that commits a file of its own, `name`.
  std::string Committer(const std::string& name) {
    return Worker("echo " + name + " > " + name + ".txt && git add . && git " +
                  "commit -qm " + name);
  }
  void Ended(const std::vector<std::string>& ids) {
    for (const std::string& id : ids)
      ASSERT_EQ(WaitEnd(id)["status"], "completed") << id;
  }
  // The check: counts its runs; red when `red_file` is in the tree.
  std::string Check(const std::string& red_file = "") {
    std::string check = "echo run >> " + runs_;
    if (!red_file.empty())
      check += " && ! test -e " + red_file;
    return check;
  }
  int Runs() {
    std::ifstream in(runs_);
    int n = 0;
    for (std::string line; std::getline(in, line);)
      ++n;
    return n;
  }
  nlohmann::json Lands() {
    auto result = Baton({"--json", "lands"}, env_);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.json();
  }
  // Waits (bounded) until no entry is queued or testing; the entries.
  nlohmann::json Settled() {
    auto deadline = std::chrono::steady_clock::now() + seconds(60);
    nlohmann::json reply;
    for (;;) {
      reply = Lands();
      bool busy = false;
      for (const auto& entry : reply["entries"]) {
        busy |= entry["state"] == "queued" || entry["state"] == "testing";
      }
      if (!busy || std::chrono::steady_clock::now() > deadline)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return reply["entries"];
  }
  std::string Land(std::vector<std::string> args, int expect = 0) {
    args.insert(args.begin(), "land");
    auto result = Baton(args, env_);
    EXPECT_EQ(result.exit_code, expect) << result.out << result.err;
    return result.out + result.err;
  }

  std::string repo_;
  std::string runs_;
};

TEST_F(MergeQueueTest, TenBranchesLandInOrderInOneCheckRun) {
  std::string base = Shell("git -C " + repo_ + " rev-parse main");
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i)
    ids.push_back(Committer("w" + std::to_string(i)));
  Ended(ids);
  std::vector<std::string> args = ids;
  args.insert(args.end(), {"--check", Check()});
  std::string said = Land(args);
  EXPECT_TRUE(Has(said, ids[0] + ": queued as entry 1, baton/" + ids[0] +
                            " onto main in " + repo_))
      << said;
  auto entries = Settled();
  ASSERT_EQ(entries.size(), 10u) << entries.dump();
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["state"], "landed") << entries[i].dump();
    EXPECT_EQ(entries[i]["task"], ids[i]);
    EXPECT_EQ(entries[i]["onto"], base);
  }
  // One run for the ten; main moved to the last one's commit, in order,
  // linear (rebased), and its checkout (the repository's folder) with it.
  EXPECT_EQ(Runs(), 1);
  EXPECT_EQ(Lands()["check_runs"], 1);
  std::printf("check runs for ten green: %d\n", Runs());
  EXPECT_EQ(Shell("git -C " + repo_ + " rev-parse main"),
            entries[9]["result"].get<std::string>());
  EXPECT_EQ(Shell("git -C " + repo_ + " log --reverse --format=%s " + base +
                  "..main | tr '\\n' ' '"),
            "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ");
  EXPECT_EQ(Shell("git -C " + repo_ + " rev-list --merges --count main"), "0");
  EXPECT_TRUE(std::filesystem::exists(repo_ + "/w9.txt"));
  EXPECT_EQ(Shell("git -C " + repo_ + " status --porcelain"), "");
  // Each land is in the audit trail, the request's and batond's.
  auto audit = Baton({"--json", "audit", "--task", ids[3]}, env_).json();
  std::set<std::string> actions;
  for (const auto& record : audit["records"])
    actions.insert(record["action"].get<std::string>());
  EXPECT_TRUE(actions.contains("land") && actions.contains("landed"))
      << audit.dump();
}

TEST_F(MergeQueueTest, AUserCommitOnTheTargetMeanwhileIsTakenIntoAccount) {
  std::vector<std::string> ids = {Committer("w0"), Committer("w1")};
  Ended(ids);
  // The first run commits on main itself, as a person would meanwhile:
  // the tested commit is not on main's tip any more, so it is tried again.
  std::string user = "if [ ! -e " + home_ + "/once ]; then touch " + home_ +
                     "/once; cd " + repo_ +
                     " && echo u > user.txt && git add user.txt && git "
                     "commit -qm user; fi";
  Land({ids[0], ids[1], "--check", Check() + "; " + user});
  auto entries = Settled();
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& entry : entries)
    EXPECT_EQ(entry["state"], "landed") << entry.dump();
  EXPECT_EQ(Runs(), 2);
  // On top of the user's commit, which stays.
  EXPECT_EQ(Shell("git -C " + repo_ +
                  " log --reverse --format=%s main | tr "
                  "'\\n' ' '"),
            "base user w0 w1 ");
  EXPECT_EQ(entries[0]["onto"].get<std::string>(),
            Shell("git -C " + repo_ + " rev-parse main~2"));
}

TEST_F(MergeQueueTest, AConflictFailsWithItsFilesAndTheOthersLand) {
  std::string first = Worker("sed -i 's/^a$/A1/' f.txt && git commit -qam A1");
  std::string second = Worker("sed -i 's/^a$/A2/' f.txt && git commit -qam A2");
  std::string third = Committer("w3");
  Ended({first, second, third});
  Land({first, second, third, "--check", Check()});
  auto entries = Settled();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0]["state"], "landed");
  EXPECT_EQ(entries[1]["state"], "failed") << entries[1].dump();
  EXPECT_EQ(entries[1]["files"], nlohmann::json({"f.txt"}));
  std::string reason = entries[1]["reason"];
  EXPECT_TRUE(Has(reason, "conflict with main in f.txt")) << reason;
  std::string hunks = entries[1]["output"];
  EXPECT_TRUE(Has(hunks, "<<<<<<<") && Has(hunks, "A2")) << hunks;
  EXPECT_EQ(entries[2]["state"], "landed");
  EXPECT_EQ(Shell("git -C " + repo_ + " show main:f.txt | head -1"), "A1");
  EXPECT_EQ(Shell("git -C " + repo_ + " status --porcelain"), "");
  // The text form says it too.
  auto text = Baton({"lands"}, env_);
  EXPECT_TRUE(Has(text.out, "failed") && Has(text.out, "f.txt")) << text.out;
}

TEST_F(MergeQueueTest, ARedBranchAmongTenIsIsolatedInFewRunsAndTheOthersLand) {
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i)
    ids.push_back(Committer(i == 6 ? "bad" : "w" + std::to_string(i)));
  Ended(ids);
  std::vector<std::string> args = ids;
  args.insert(args.end(), {"--check", Check("bad.txt")});
  Land(args);
  auto entries = Settled();
  ASSERT_EQ(entries.size(), 10u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["state"], i == 6 ? "failed" : "landed")
        << entries[i].dump();
  }
  std::string reason = entries[6]["reason"];
  EXPECT_TRUE(Has(reason, "land check failed on main")) << reason;
  EXPECT_TRUE(Has(entries[6]["output"].get<std::string>(), "exit code 1"))
      << entries[6].dump();
  // 1 + ceil(log2 10) + 1 at most (the bound).
  EXPECT_LE(Runs(), 6);
  std::printf("check runs for one red among ten: %d\n", Runs());
  EXPECT_FALSE(Has(Shell("git -C " + repo_ + " log --format=%s main"), "bad"));
  EXPECT_EQ(Shell("git -C " + repo_ + " log --format=%s main | wc -l"), "10");
}

TEST_F(MergeQueueTest, WhatCannotLandIsRefusedAndNothingIsQueued) {
  std::string done = Committer("w0");
  std::string empty = Worker("true");
  std::string running =
      Worker("while [ ! -e " + home_ + "/go ]; do sleep 0.05; done");
  Ended({done, empty});
  std::string shell = Run("true");

  auto unknown = Baton({"land", "agent-999"}, env_);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(Has(unknown.err, "agent-999")) << unknown.err;
  EXPECT_TRUE(Has(Land({shell}, 1), "did not run in a worktree"));
  EXPECT_TRUE(Has(Land({running}, 1), "land it once it ended completed"));
  EXPECT_TRUE(Has(Land({done, empty}, 1),
                  "baton/" + empty + " has no commit that main lacks"));
  EXPECT_TRUE(Has(Land({done, "--onto", "nope"}, 1), "has no branch nope"));
  EXPECT_TRUE(Has(Land({done, done}, 1), "named twice"));
  EXPECT_TRUE(Lands()["entries"].empty()) << Lands().dump();

  std::ofstream(home_ + "/go");
  EXPECT_EQ(WaitEnd(running)["status"], "completed");
}

TEST_F(MergeQueueTest, ATargetCheckedOutWithChangesWaitsAndSaysWhy) {
  std::string id = Committer("w0");
  Ended({id});
  std::string base = Shell("git -C " + repo_ + " rev-parse main");
  Git("echo dirty >> " + repo_ + "/f.txt");
  Land({id});
  auto deadline = std::chrono::steady_clock::now() + seconds(30);
  nlohmann::json entry;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    entry = Lands()["entries"][0];
  } while (!Has(entry.value("reason", ""), "uncommitted changes") &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(entry["state"], "queued") << entry.dump();
  EXPECT_TRUE(Has(entry.value("reason", ""), repo_)) << entry.dump();
  EXPECT_EQ(Shell("git -C " + repo_ + " rev-parse main"), base);
  // The person's change is untouched; once it is gone, the entry goes on.
  EXPECT_TRUE(Has(Shell("cat " + repo_ + "/f.txt"), "dirty"));
  Git("git -C " + repo_ + " checkout -q -- f.txt");
  auto entries = Settled();
  EXPECT_EQ(entries[0]["state"], "landed") << entries.dump();
  EXPECT_TRUE(std::filesystem::exists(repo_ + "/w0.txt"));
}

// batond killed (kill -9) just before it moves the target, and just after:
// a new batond finishes the entry; main is before it or after it, never
// at an untested commit, and the branch's commit is on it once.
TEST_F(MergeQueueTest, BatondKilledDuringALandLeavesTheTargetBeforeOrAfter) {
  for (const char* point : {"land-before-move", "land-after-move"}) {
    SCOPED_TRACE(point);
    std::string id = Committer(point);
    Ended({id});
    std::string before = Shell("git -C " + repo_ + " rev-parse main");
    Baton({"daemon", "stop"}, env_);
    auto crashing = env_;
    crashing["BATON_CRASH_AT"] = std::string(point) + ":1";
    ASSERT_EQ(Baton({"daemon", "start"}, crashing).exit_code, 0);
    int pid = DaemonPids().first;
    ASSERT_GT(pid, 0);
    // The check notes each commit it tested.
    Land({id, "--check", "git rev-parse HEAD >> " + home_ + "/tested"});
    ASSERT_TRUE(WaitForPidGone(pid, seconds(30)));
    std::string after_crash = Shell("git -C " + repo_ + " rev-parse main");
    std::string tested = Shell("cat " + home_ + "/tested");
    if (std::string(point) == "land-before-move") {
      EXPECT_EQ(after_crash, before);
    } else {
      EXPECT_NE(after_crash, before);
      EXPECT_TRUE(Has(tested, after_crash)) << tested;
    }
    // A new batond (started by this call) takes the entry up again.
    auto entries = Settled();
    ASSERT_FALSE(entries.empty());
    auto entry = entries.back();
    EXPECT_EQ(entry["state"], "landed") << entry.dump();
    std::string now = Shell("git -C " + repo_ + " rev-parse main");
    EXPECT_EQ(entry["result"], now);
    EXPECT_TRUE(Has(Shell("cat " + home_ + "/tested"), now));
    EXPECT_EQ(Shell("git -C " + repo_ + " log --format=%s main | grep -c " +
                    std::string(point)),
              "1");
  }
}

// The default target is the branch the worktree was made from, not what
// the repository has checked out by the time the worker is landed.
TEST_F(MergeQueueTest, ItLandsOnTheBranchItsWorktreeWasMadeFrom) {
  std::string id = Committer("w");
  Ended({id});
  EXPECT_EQ(Status(id, env_)["agent"]["worktree"]["from"], "main");
  Git("git -C " + repo_ + " checkout -q -b elsewhere");
  EXPECT_TRUE(Has(Land({id, "--check", Check()}), "onto main"));
  auto entries = Settled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["state"], "landed") << entries.dump();
  EXPECT_EQ(Shell("git -C " + repo_ + " show main:w.txt"), "w");
  EXPECT_EQ(Shell("git -C " + repo_ + " rev-parse elsewhere"),
            Shell("git -C " + repo_ + " rev-parse main~1"));
}

}  // namespace
}  // namespace baton::testing
