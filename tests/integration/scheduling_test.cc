// Queues, priorities, dependencies and retries through the CLI and the real
// daemon (issue 16, doc/scheduling.md). The tasks write what they do to a
// shared journal, so a limit is observed, not assumed.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::seconds;

class SchedulingTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    journal_ = home_ + "/journal";
  }

  // A command that appends "+NAME" to the journal, waits until `gate`
  // exists (if given), then `pause` seconds, then appends "-NAME". Appends
  // of one short line are atomic (O_APPEND).
  std::string Step(const std::string& name, const std::string& gate = "",
                   const std::string& pause = "0.3") {
    std::string wait = "sleep " + pause;
    if (!gate.empty())
      wait = "while [ ! -e " + gate + " ]; do sleep 0.01; done; " + wait;
    return "echo +" + name + " >> " + journal_ + "; " + wait + "; echo -" +
           name + " >> " + journal_;
  }

  std::vector<std::string> Journal() {
    std::ifstream in(journal_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }

  // The most tasks that ran at once, by the journal.
  int MostAtOnce() {
    int now = 0;
    int most = 0;
    for (const std::string& line : Journal()) {
      now += line[0] == '+' ? 1 : -1;
      most = std::max(most, now);
    }
    return most;
  }

  // The names in the order they started.
  std::vector<std::string> StartOrder() {
    std::vector<std::string> names;
    for (const std::string& line : Journal()) {
      if (line[0] == '+')
        names.push_back(line.substr(1));
    }
    return names;
  }

  void WaitAll(const std::vector<std::string>& ids) {
    std::vector<std::string> args = {"wait", "--all", "--timeout", "60s"};
    args.insert(args.end(), ids.begin(), ids.end());
    auto waited = Baton(args, {}, seconds(90));
    EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  }

  // The record of `id` once its first attempt ended (polled, bounded).
  nlohmann::json AfterFirstAttempt(const std::string& id) {
    nlohmann::json task;
    for (int i = 0; i < 300; ++i) {
      task = Status(id);
      if (task["attempts"].size() == 1)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return task;
  }

  std::string journal_;
};

TEST_F(SchedulingTest, AQueueOfTwoNeverRunsMoreThanTwo) {
  auto added = Baton({"queue", "add", "build", "--max", "2"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(added.out, "queue build: at most 2 at once; 0 running, 0 queued\n");
  // Each waits for the gate, so that all six are in before any ends.
  std::string gate = home_ + "/gate";
  std::vector<std::string> ids;
  for (int i = 1; i <= 6; ++i) {
    ids.push_back(
        Run(Step("t" + std::to_string(i), gate), {"--queue", "build"}));
  }
  // The last ones wait, and say why.
  auto held = Status(ids.back());
  EXPECT_EQ(held["status"], "queued");
  EXPECT_EQ(held["detail"], "queue build: 2 of 2 running");
  EXPECT_EQ(held["schedule"]["queue"], "build");
  auto listed = Baton({"queue", "ls"});
  EXPECT_NE(
      listed.out.find("build                    2        2       4  open"),
      std::string::npos)
      << listed.out;
  std::ofstream{gate};
  WaitAll(ids);
  EXPECT_EQ(Journal().size(), 12u);
  EXPECT_EQ(MostAtOnce(), 2);  // The limit, and used.
  for (const std::string& id : ids)
    EXPECT_EQ(Status(id)["status"], "completed") << id;
}

TEST_F(SchedulingTest, HigherPriorityStartsFirst) {
  ASSERT_EQ(Baton({"queue", "add", "one", "--max", "1"}).exit_code, 0);
  std::string gate = home_ + "/gate";
  std::vector<std::string> ids = {
      Run(Step("first", gate), {"--queue", "one"}),
      Run(Step("low"), {"--queue", "one"}),
      Run(Step("high"), {"--queue", "one", "--priority", "5"}),
      Run(Step("middle"), {"--queue", "one", "--priority", "2"}),
  };
  std::ofstream{gate};
  WaitAll(ids);
  EXPECT_EQ(StartOrder(),
            (std::vector<std::string>{"first", "high", "middle", "low"}));
  EXPECT_EQ(MostAtOnce(), 1);
}

TEST_F(SchedulingTest, AQueueSurvivesAKillOfBatondMidQueue) {
  ASSERT_EQ(Baton({"queue", "add", "one", "--max", "1"}).exit_code, 0);
  std::string gate = home_ + "/gate";
  std::vector<std::string> ids = {
      Run(Step("a", gate), {"--queue", "one"}),
      Run(Step("b"), {"--queue", "one"}),
      Run(Step("c"), {"--queue", "one"}),
  };
  ASSERT_EQ(WaitStarted(ids[0])["status"], "running");
  KillDaemonHard();
  // The next command starts a new batond, which must keep b and c held.
  auto held = Status(ids[1]);
  EXPECT_EQ(held["status"], "queued");
  EXPECT_EQ(held["detail"], "queue one: 1 of 1 running");
  std::ofstream{gate};
  WaitAll(ids);
  EXPECT_EQ(StartOrder(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(MostAtOnce(), 1);
}

TEST_F(SchedulingTest, AnAfterChainRunsInOrderAndAFailureStopsIt) {
  std::string gate = home_ + "/gate";
  std::string a = Run(Step("a", gate));
  std::string b = Run(Step("b"), {"--after", a});
  std::string c = Run(Step("c"), {"--after", b});
  EXPECT_EQ(Status(c)["detail"], "after " + b);
  EXPECT_EQ(Status(b)["schedule"]["after"], nlohmann::json::array({a}));
  std::ofstream{gate};
  WaitAll({c});
  EXPECT_EQ(StartOrder(), (std::vector<std::string>{"a", "b", "c"}));

  std::string bad = Run("exit 3");
  std::string after_bad = Run(Step("never"), {"--after", bad + "," + a});
  auto waited = Baton({"wait", "--timeout", "30s", after_bad});
  EXPECT_EQ(waited.exit_code, 1) << waited.out << waited.err;
  auto status = Status(after_bad);
  EXPECT_EQ(status["status"], "failed");
  EXPECT_EQ(status["detail"], "dependency " + bad + " failed");
  EXPECT_EQ(status["started_at"], nullptr);  // It never ran.

  // --after-any starts at the first end, even a failure.
  std::string any = Run(Step("any"), {"--after-any", bad});
  WaitAll({any});
  EXPECT_EQ(StartOrder().back(), "any");
}

TEST_F(SchedulingTest, BadSchedulesAreRefusedWithNoTask) {
  auto no_queue = Baton({"run", "--queue", "nope", "--", "true"});
  EXPECT_EQ(no_queue.exit_code, 1) << no_queue.err;
  EXPECT_NE(no_queue.err.find("no queue 'nope'; create it first: baton "
                              "queue add nope --max N"),
            std::string::npos)
      << no_queue.err;
  auto unknown = Baton({"run", "--after", "shell-99", "--", "true"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("after: "), std::string::npos) << unknown.err;
  auto both = Baton(
      {"run", "--after", "shell-1", "--after-any", "shell-1", "--", "true"});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.err.find("do not go together"), std::string::npos) << both.err;
  auto twice = Baton({"queue", "add", "default"});
  EXPECT_NE(twice.exit_code, 0);
  EXPECT_NE(twice.err.find("queue 'default' exists"), std::string::npos)
      << twice.err;
  auto bad_name = Baton({"queue", "add", "a/b"});
  EXPECT_NE(bad_name.exit_code, 0);
  auto unknown_set = Baton({"queue", "set", "nope", "--max", "2"});
  EXPECT_NE(unknown_set.exit_code, 0);
  auto listed = Baton({"--json", "ls", "--all"}).json();
  EXPECT_TRUE(listed["tasks"].empty()) << listed.dump();
}

TEST_F(SchedulingTest, APausedQueueHoldsItsTasksUntilResumed) {
  ASSERT_EQ(Baton({"queue", "add", "q"}).exit_code, 0);
  ASSERT_EQ(Baton({"queue", "pause", "q"}).exit_code, 0);
  std::string id = Run(Step("p"), {"--queue", "q"});
  EXPECT_EQ(Status(id)["detail"], "queue q: paused");
  auto resumed = Baton({"queue", "resume", "q"});
  EXPECT_EQ(resumed.out, "queue q: no limit; 0 running, 1 queued\n")
      << resumed.err;
  WaitAll({id});
  EXPECT_EQ(Status(id)["status"], "completed");
}

TEST_F(SchedulingTest, KillingAHeldTaskEndsItBeforeItRuns) {
  ASSERT_EQ(Baton({"queue", "add", "one", "--max", "1"}).exit_code, 0);
  std::string gate = home_ + "/gate";
  std::string a = Run(Step("a", gate), {"--queue", "one"});
  std::string b = Run(Step("b"), {"--queue", "one"});
  auto killed = Baton({"kill", "--reason", "not needed", b});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  auto status = Status(b);
  EXPECT_EQ(status["status"], "killed");
  EXPECT_EQ(status["detail"], "killed before it started");
  EXPECT_EQ(status["kill_reason"], "not needed");
  std::ofstream{gate};
  WaitAll({a});
  EXPECT_EQ(StartOrder(), (std::vector<std::string>{"a"}));
}

// A command that counts its runs in `counter` and fails until run
// `succeeds_at` (never when 0), printing "attempt N".
std::string Flaky(const std::string& counter, int succeeds_at) {
  return "n=$(cat " + counter +
         " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + counter +
         "; echo attempt $n; [ " + std::to_string(succeeds_at) +
         " -gt 0 ] && [ $n -ge " + std::to_string(succeeds_at) + " ]";
}

TEST_F(SchedulingTest, RetriesRunAgainUnderOneIdAndRecordEachAttempt) {
  std::string counter = home_ + "/count";
  std::string id =
      Run(Flaky(counter, 3), {"--retry", "3", "--retry-delay", "100ms"});
  auto waited = Baton({"wait", id, "--timeout", "60s"}, {}, seconds(90));
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  auto task = Status(id);
  EXPECT_EQ(task["status"], "completed");
  EXPECT_EQ(task["detail"], "exit code: 0; attempt 3 of 4");
  EXPECT_EQ(task["retry"]["retries"], 3);
  EXPECT_EQ(task["retry"]["delay_ms"], 100);
  ASSERT_EQ(task["attempts"].size(), 2u) << task.dump();
  // One log, each attempt after a marker, and each attempt's bytes known.
  std::string first = "attempt 1\n";
  std::string second =
      "[baton: attempt 2 of 4 (attempt 1: exit code: 1)]\nattempt 2\n";
  std::string third =
      "[baton: attempt 3 of 4 (attempt 2: exit code: 1)]\nattempt 3\n";
  EXPECT_EQ(Baton({"output", id}).out, first + second + third);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(task["attempts"][i]["exit_code"], 1);
    EXPECT_EQ(task["attempts"][i]["detail"], "exit code: 1");
  }
  EXPECT_EQ(task["attempts"][0]["output_from"], 0);
  EXPECT_EQ(task["attempts"][0]["output_to"], first.size());
  EXPECT_EQ(task["attempts"][1]["output_from"], first.size());
  EXPECT_EQ(task["attempts"][1]["output_to"], first.size() + second.size());
  // Backoff: the second retry waited at least twice the first's delay.
  EXPECT_GE(task["attempts"][1]["started_ms"].get<int64_t>() -
                task["attempts"][0]["ended_ms"].get<int64_t>(),
            100);
  auto shown = Baton({"status", id});
  EXPECT_NE(shown.out.find("retries:  up to 3, the first after"),
            std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("attempts: attempt 1: exit code: 1, ran"),
            std::string::npos)
      << shown.out;
}

TEST_F(SchedulingTest, ARetryThatWaitsOutABatondCrashStillRunsOnce) {
  std::string counter = home_ + "/count";
  std::string id =
      Run(Flaky(counter, 2), {"--retry", "1", "--retry-delay", "2s"});
  // Held for its retry, then batond dies.
  nlohmann::json held = AfterFirstAttempt(id);
  ASSERT_EQ(held["status"], "queued") << held.dump();
  EXPECT_EQ(held["detail"], "retry 1 of 1 in 2s (attempt 1: exit code: 1)");
  EXPECT_TRUE(held.contains("retry_at"));
  KillDaemonHard();
  auto waited = Baton({"wait", id, "--timeout", "60s"}, {}, seconds(90));
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  EXPECT_EQ(Status(id)["status"], "completed");
  std::ifstream in(counter);
  int runs = 0;
  in >> runs;
  EXPECT_EQ(runs, 2);  // Once each: the retry neither lost nor doubled.
}

TEST_F(SchedulingTest, AKillStopsTheRetriesAndBadRetriesAreRefused) {
  std::string counter = home_ + "/count";
  std::string id =
      Run(Flaky(counter, 0), {"--retry", "5", "--retry-delay", "30s"});
  nlohmann::json held = AfterFirstAttempt(id);
  EXPECT_EQ(held["detail"], "retry 1 of 5 in 30s (attempt 1: exit code: 1)");
  ASSERT_EQ(Baton({"kill", id}).exit_code, 0);
  auto killed = Status(id);
  EXPECT_EQ(killed["status"], "killed");
  EXPECT_EQ(killed["detail"], "killed while it waited to retry");
  auto refused =
      Baton({"run", "--retry", "1", "--retry-delay", "11m", "--", "true"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.err.find("--retry-delay 11m is longer than 10m"),
            std::string::npos)
      << refused.err;
  auto listed = Baton({"ls", "--json", "--all"});
  EXPECT_EQ(listed.json()["tasks"].size(), 1u) << listed.out;  // Nothing new.
}

}  // namespace
}  // namespace baton::testing
