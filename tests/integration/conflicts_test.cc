// The conflict radar (doc/conflicts.md) through the real daemon and CLI, on
// real git repositories: agent workers (`dsh`, the command adapter, with a
// stand-in that runs its brief as a shell script) in worktrees of one
// repository edit files, committed or not, and wait; their owners get one
// notice each when they touch the same lines ("conflict") or the same file
// in different places ("same file"), none for different files, and
// `baton conflicts` lists the overlaps.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class ConflictsTest : public FakeAgentTest {
 protected:
  void SetUp() override {
    FakeAgentTest::SetUp();
    if (IsSkipped())
      return;
    if (std::system("command -v git >/dev/null") != 0)
      GTEST_SKIP() << "git is not installed";
    // The stand-in agent runs its brief as a shell script in its worktree.
    std::string bin = home_ + "/agent-bin";
    std::filesystem::create_directories(bin);
    std::ofstream(bin + "/dsh") << "#!/bin/sh\nbrief=$(cat)\nexec sh -c "
                                   "\"$brief\"\n";
    ASSERT_EQ(::chmod((bin + "/dsh").c_str(), 0755), 0);
    env_["PATH"] = bin + ":" + env_["PATH"];
    repo_ = home_ + "/repo";
    ASSERT_EQ(std::system(("git init -q " + repo_ + " && cd " + repo_ +
                           " && printf 'a\\nb\\nc\\nd\\ne\\nf\\ng\\n' > "
                           "f.txt && echo x > g.txt && echo y > h.txt && git "
                           "add . && git -c user.email=t@example.com -c "
                           "user.name=t commit -qm base")
                              .c_str()),
              0);
  }
  void TearDown() override {
    // The workers end when told.
    std::ofstream(home_ + "/stop");
    for (const auto& [id, session] : workers_)
      Baton({"wait", "--timeout", "30s", id}, As(session));
    FakeAgentTest::TearDown();
  }

  std::map<std::string, std::string> As(const std::string& session) {
    auto env = env_;
    env["BATON_SESSION"] = session;
    return env;
  }
  // A worker of `session` in a worktree of the repository: runs `script`
  // there, then says so (a file `done-<n>`) and waits for the test's end.
  std::string Worker(const std::string& session, const std::string& script) {
    std::string done = home_ + "/done-" + std::to_string(workers_.size());
    std::string brief = script + " && touch " + done + " && while [ ! -e " +
                        home_ + "/stop ]; do sleep 0.05; done";
    auto result = Baton(
        {"delegate", "--agent", "dsh", "--worktree", "--cwd", repo_, brief},
        As(session));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::string id = result.out.substr(0, result.out.find('\n'));
    workers_.emplace_back(id, session);
    dones_.push_back(done);
    return id;
  }
  // Waits (bounded) until every worker did its part.
  void WaitWorkersDone() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (const std::string& done : dones_) {
      while (!std::filesystem::exists(done) &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      ASSERT_TRUE(std::filesystem::exists(done)) << done;
    }
  }
  nlohmann::json Conflicts(const std::string& session,
                           std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"--json", "conflicts"};
    args.insert(args.end(), more.begin(), more.end());
    auto result = Baton(args, As(session));
    EXPECT_EQ(result.exit_code, 0) << result.err << result.out;
    auto reply = result.json();
    Collect(session, reply);
    return reply;
  }
  // Every reply carries the session's notices: the overlap ones are kept.
  void Collect(const std::string& session, const nlohmann::json& reply) {
    if (!reply.is_object() || !reply.contains("notices"))
      return;
    for (const auto& notice : reply["notices"]) {
      if (notice.contains("overlap"))
        told_[session].push_back(notice);
    }
  }
  // Waits (bounded) until two radar rounds ended after now: what the
  // workers wrote before is in the answer then.
  nlohmann::json AfterTwoRounds(const std::string& session) {
    int64_t start = Conflicts(session).value("rounds", int64_t{0});
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    nlohmann::json reply;
    do {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      reply = Conflicts(session);
    } while (reply.value("rounds", int64_t{0}) < start + 2 &&
             std::chrono::steady_clock::now() < deadline);
    EXPECT_GE(reply.value("rounds", int64_t{0}), start + 2) << reply.dump();
    return reply;
  }
  // The overlap notices the session got since the last call of Told.
  std::vector<nlohmann::json> Told(const std::string& session) {
    auto result = Baton({"--json", "notices"}, As(session));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    Collect(session, result.json());
    return std::exchange(told_[session], {});
  }

  std::string repo_;
  std::vector<std::pair<std::string, std::string>> workers_;  // Id, session.
  std::vector<std::string> dones_;
  std::map<std::string, std::vector<nlohmann::json>> told_;  // By session.
};

TEST_F(ConflictsTest, TheSameLinesAreAConflictToldToBothOwnersOnce) {
  // One leaves its change uncommitted, the other commits it.
  std::string first = Worker("alice", "sed -i 's/^a$/A1/' f.txt");
  std::string second =
      Worker("bob",
             "sed -i 's/^a$/A2/' f.txt && git -c user.email=b@example.com -c "
             "user.name=b commit -qam 'a is A2'");
  WaitWorkersDone();
  auto reply = AfterTwoRounds("alice");
  ASSERT_EQ(reply["overlaps"].size(), 1u) << reply.dump();
  auto overlap = reply["overlaps"][0];
  EXPECT_EQ(overlap["tasks"], nlohmann::json({first, second}));
  EXPECT_EQ(overlap["kind"], "conflict");
  EXPECT_EQ(overlap["files"], nlohmann::json({"f.txt"}));
  EXPECT_EQ(overlap["conflict_files"], nlohmann::json({"f.txt"}));
  EXPECT_EQ(overlap["repo"], repo_);
  EXPECT_EQ(reply["watched"], 2);

  for (const std::string& session : std::vector<std::string>{"alice", "bob"}) {
    auto told = Told(session);
    ASSERT_EQ(told.size(), 1u) << session;
    std::string text = told[0]["text"];
    EXPECT_TRUE(Has(text, first) && Has(text, second)) << text;
    EXPECT_TRUE(Has(text, "f.txt") && Has(text, "textual conflict")) << text;
    EXPECT_EQ(told[0]["overlap"]["kind"], "conflict");
    // The notice's task is the session's own.
    EXPECT_EQ(told[0]["task"]["id"], session == "alice" ? first : second);
  }
  // Told once: later rounds find the same overlap, and say nothing.
  AfterTwoRounds("alice");
  EXPECT_TRUE(Told("alice").empty());
  EXPECT_TRUE(Told("bob").empty());

  // The text form, and a task of its own.
  auto text = Baton({"conflicts", first}, As("alice"));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Has(text.out, first + " and " + second + " both changed f.txt"))
      << text.out;
}

TEST_F(ConflictsTest, TheSameFileInOtherPlacesIsOneSameFileNotice) {
  std::string first = Worker("alice", "sed -i 's/^a$/A1/' f.txt");
  std::string second = Worker("alice", "sed -i 's/^g$/G2/' f.txt");
  WaitWorkersDone();
  auto reply = AfterTwoRounds("alice");
  ASSERT_EQ(reply["overlaps"].size(), 1u) << reply.dump();
  EXPECT_EQ(reply["overlaps"][0]["kind"], "same_file");
  EXPECT_FALSE(reply["overlaps"][0].contains("conflict_files"));
  // One owner of both: one notice, on the older task.
  auto told = Told("alice");
  ASSERT_EQ(told.size(), 1u);
  std::string text = told[0]["text"];
  EXPECT_TRUE(Has(text, "same file") && Has(text, "f.txt")) << text;
  EXPECT_FALSE(Has(text, "textual conflict in")) << text;
  EXPECT_EQ(told[0]["task"]["id"], first);
  (void)second;
}

TEST_F(ConflictsTest, ASameFileOverlapThatBecomesAConflictIsToldAgain) {
  std::string go = home_ + "/go";
  std::string first = Worker("alice", "sed -i 's/^a$/A1/' f.txt");
  std::string second =
      Worker("alice", "sed -i 's/^g$/G2/' f.txt && touch " + home_ +
                          "/edited && while [ ! -e " + go +
                          " ]; do sleep 0.05; done && sed -i 's/^a$/A2/' "
                          "f.txt");
  // The second worker's first edit: the same file, other lines.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(home_ + "/edited") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto before = AfterTwoRounds("alice");
  ASSERT_EQ(before["overlaps"].size(), 1u) << before.dump();
  EXPECT_EQ(before["overlaps"][0]["kind"], "same_file");
  auto told = Told("alice");
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0]["overlap"]["kind"], "same_file");

  // Then the same line as the first: a conflict, told again.
  std::ofstream(go).close();
  WaitWorkersDone();
  auto after = AfterTwoRounds("alice");
  ASSERT_EQ(after["overlaps"].size(), 1u) << after.dump();
  EXPECT_EQ(after["overlaps"][0]["kind"], "conflict");
  told = Told("alice");
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0]["overlap"]["kind"], "conflict");
  EXPECT_TRUE(Has(told[0]["text"], "textual conflict in f.txt"));
  (void)first;
  (void)second;
}

TEST_F(ConflictsTest, ARestartedBatondFindsTheOverlapAgain) {
  std::string first = Worker("alice", "sed -i 's/^a$/A1/' f.txt");
  std::string second = Worker("alice", "sed -i 's/^a$/A2/' f.txt");
  WaitWorkersDone();
  ASSERT_EQ(AfterTwoRounds("alice")["overlaps"].size(), 1u);
  ASSERT_EQ(Told("alice").size(), 1u);
  // Its notices are in batond's memory only (doc/conflicts.md): a new
  // batond, which adopts the workers, finds the overlap and tells it once
  // more.
  KillDaemonHard();
  // The next command starts a new batond. Soon after a worktree delegate,
  // its first request finds its connection closed ("batond closed the
  // connection"), with `ls` as with `conflicts`, and with a batond without
  // the radar too (a kill -9 just after `delegate --worktree`, by hand).
  // Not this test's subject: a few tries, bounded.
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (Baton({"ls"}, As("alice")).exit_code == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto again = AfterTwoRounds("alice");
  ASSERT_EQ(again["overlaps"].size(), 1u) << again.dump();
  EXPECT_EQ(again["overlaps"][0]["tasks"], nlohmann::json({first, second}));
  EXPECT_EQ(again["overlaps"][0]["kind"], "conflict");
  EXPECT_EQ(Told("alice").size(), 1u);
}

TEST_F(ConflictsTest, DifferentFilesAreNoOverlap) {
  Worker("alice", "echo changed > g.txt");
  Worker("alice", "echo changed > h.txt && echo new > new.txt");
  WaitWorkersDone();
  auto reply = AfterTwoRounds("alice");
  EXPECT_TRUE(reply["overlaps"].empty()) << reply.dump();
  EXPECT_EQ(reply["watched"], 2);
  EXPECT_TRUE(Told("alice").empty());
}

TEST_F(ConflictsTest, BadTaskIdsAreRefusedWithTheWayOn) {
  std::string first = Worker("alice", "true");
  auto unknown = Baton({"conflicts", "agent-99"}, As("alice"));
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(Has(unknown.err, "agent-99")) << unknown.err;
  auto other = Baton({"conflicts", first}, As("bob"));
  EXPECT_NE(other.exit_code, 0);
  EXPECT_TRUE(Has(other.err, first)) << other.err;
}

}  // namespace
}  // namespace baton::testing
