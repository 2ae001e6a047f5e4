// Agent budgets (doc/agents.md, "Budgets") through the real daemon and CLI,
// with the fake Claude Code CLI (tests/agents/fakes/claude), which reports
// usage in the real CLI's lines: each model reply 1000 tokens in and 100
// out, and a cost at each turn's end.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

class BudgetTest : public FakeAgentTest {};

// Turns: three may finish, the fourth reply gets the worker stopped (its
// turn interrupted, so it ends by itself) and the task ends killed.
TEST_F(BudgetTest, MaxTurnsStopsAWorkerThatGoesOn) {
  std::string id =
      Delegate({"--agent", "claude", "--max-turns", "3", "LOOP on and on"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "budget: max-turns 3 reached");
  EXPECT_EQ(task["agent"]["max_turns"], 3);
  const auto& usage = task["usage"];
  ASSERT_TRUE(usage.is_object()) << task.dump();
  // Stopped at its fourth reply: what came before the interrupt landed is
  // counted too, but the worker did not run on to its hundredth.
  EXPECT_GE(usage["turns"].get<int>(), 4);
  EXPECT_LT(usage["turns"].get<int>(), 20);
  EXPECT_EQ(usage["input_tokens"].get<int>(), 1000 * usage["turns"].get<int>());
  // It was asked to end its turn, and did: the interrupted result is there.
  auto results = EventsOfType(id, "result");
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results.back()["ok"], false);
}

// Issue 37: a one-turn worker's second model reply (its answer) crosses
// max-turns 1 before its result line comes; batond asks it to stop, but
// the turn ends with its result all the same. Its work is done: completed,
// with its result, and the detail says the budget was reached as it ended.
TEST_F(BudgetTest, AWorkerThatFinishesAsItsBudgetRunsOutCompletes) {
  std::string id =
      Delegate({"--agent", "claude", "--max-turns", "1", "LATE answer"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["exit_code"], 0) << task.dump();
  EXPECT_NE(task["detail"].get<std::string>().find(
                "budget: max-turns 1 reached as its work ended"),
            std::string::npos)
      << task.dump();
  EXPECT_EQ(task["usage"]["turns"], 2) << task.dump();
  auto results = EventsOfType(id, "result");
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results.back()["ok"], true);
  auto output = Baton({"output", id}, env_);
  EXPECT_NE(output.out.find("turn 1: LATE answer"), std::string::npos)
      << output.out;
}

TEST_F(BudgetTest, MaxTokensStopsItAndStatusShowsUsageAndBudget) {
  std::string id =
      Delegate({"--agent", "claude", "--max-tokens", "5500", "LOOP more"});
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "budget: max-tokens 5500 reached");
  int64_t in = task["usage"]["input_tokens"];
  int64_t out = task["usage"]["output_tokens"];
  EXPECT_GE(in + out, 5500);
  EXPECT_LT(in + out, 5500 + 11 * 1100);
  // The usage events are in its events, each with the totals so far.
  auto usages = EventsOfType(id, "usage");
  ASSERT_FALSE(usages.empty());
  EXPECT_EQ(usages.back()["input_tokens"], in);
  auto status = Baton({"status", id}, env_);
  EXPECT_NE(status.out.find("budget:   max-tokens 5500"), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find(fmt::format("usage:    {} turns, {} tokens ({} in, "
                                        "{} out)",
                                        task["usage"]["turns"].get<int>(),
                                        in + out, in, out)),
            std::string::npos)
      << status.out;
}

// Cost comes at a turn's end: a budget spent by then stops the worker
// before a queued follow-up runs on. A turn that ends the work is not
// stopped: nothing is left to stop, and the task completes with its usage.
TEST_F(BudgetTest, MaxCostStopsBeforeTheNextTurnNotAfterTheLast) {
  std::string last = Delegate({"--agent", "claude", "--max-cost", "0.005",
                               "one turn that costs 0.009"});
  auto done = WaitEnd(last);
  EXPECT_EQ(done["status"], "completed") << done.dump();
  EXPECT_GE(done["usage"]["cost_usd"].get<double>(), 0.005);

  std::string id = Delegate(
      {"--agent", "claude", "--max-cost", "0.005", "SLOW4 first turn"});
  // Messages go to running agents: a send that raced the spawn was refused
  // on a loaded machine (the task still queued).
  WaitStarted(id, env_);
  auto sent = Baton({"send", id, "a second turn"}, env_);
  EXPECT_EQ(sent.exit_code, 0) << sent.err;
  auto task = WaitEnd(id);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "budget: max-cost $0.005 reached");
}

TEST_F(BudgetTest, AProfileBudgetAndADelegateOverridingIt) {
  UseConfig(
      "[agents.thrifty]\nadapter = \"claude\"\ncommand = [\"claude\"]\n"
      "max_turns = 2\nmax_cost_usd = 1.5\n");
  std::string profiled = Delegate({"--agent", "thrifty", "LOOP a"});
  std::string overridden =
      Delegate({"--agent", "thrifty", "--max-turns", "5", "LOOP b"});
  auto a = WaitEnd(profiled);
  auto b = WaitEnd(overridden);
  EXPECT_EQ(a["detail"], "budget: max-turns 2 reached");
  EXPECT_EQ(a["agent"]["max_cost_usd"], 1.5);
  EXPECT_EQ(b["detail"], "budget: max-turns 5 reached");
  EXPECT_EQ(b["agent"]["max_cost_usd"], 1.5);  // The profile's, kept.
}

TEST_F(BudgetTest, BadBudgetsAreRefusedAndNothingStarts) {
  for (std::vector<std::string> flags :
       {std::vector<std::string>{"--max-turns", "0"},
        {"--max-tokens", "-5"},
        {"--max-tokens", "many"},
        {"--max-cost", "0"}}) {
    std::vector<std::string> args = {"delegate", "--agent", "claude", "--cwd",
                                     work_};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("LOOP");
    auto refused = Baton(args, env_);
    EXPECT_NE(refused.exit_code, 0) << flags[0] << " " << flags[1];
    EXPECT_NE(refused.err.find(flags[0]), std::string::npos) << refused.err;
  }
  UseConfig("[agents.bad]\nadapter = \"claude\"\nmax_tokens = 0\n");
  auto refused =
      Baton({"delegate", "--agent", "claude", "--cwd", work_, "LOOP"}, env_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("max_tokens"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("at least 1"), std::string::npos) << refused.err;
  EXPECT_EQ(Baton({"ls", "--all", "--quiet"}, env_).out, "");
}

// Usage is stored with the task: a batond killed while the worker runs
// comes back with it, and the budget still holds.
TEST_F(BudgetTest, UsageSurvivesABatondCrash) {
  std::string id =
      Delegate({"--agent", "claude", "--max-turns", "12", "LOOP long"});
  // A task has no `usage` until the agent first reports some.
  auto turns = [&] {
    auto usage = Status(id, env_)["usage"];
    return usage.is_object() ? usage.value("turns", 0) : 0;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && turns() < 3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(turns(), 3);
  KillDaemonHard();
  auto task = WaitEnd(id);  // Starts a new batond, which adopts it.
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "budget: max-turns 12 reached");
  EXPECT_GE(task["usage"]["turns"].get<int>(), 13);
}

// A session's budget (doc/agents.md, "Session budgets"): the sum over its
// agent tasks. Reached, it stops every working agent of the session, and a
// new delegate is refused; another session's agents go on.
TEST_F(BudgetTest, ASessionBudgetStopsAllItsWorkersAndRefusesNewOnes) {
  env_["BATON_SESSION"] = "build";
  auto set = Baton({"budget", "--max-tokens", "8000"}, env_);
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out,
            "session build: budget max-tokens 8000\n"
            "spent: 0 agent tasks, 0 turns, 0 tokens (0 in, 0 out)\n");
  auto other_env = env_;
  other_env["BATON_SESSION"] = "docs";
  auto other = Baton({"delegate", "--cwd", work_, "--agent", "claude",
                      "--max-turns", "8", "LOOP elsewhere"},
                     other_env);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  std::string other_id = other.out.substr(0, other.out.find('\n'));
  std::string a = Delegate({"--agent", "claude", "LOOP one"});
  std::string b = Delegate({"--agent", "claude", "LOOP two"});
  for (const std::string& id : {a, b}) {
    auto task = WaitEnd(id);
    EXPECT_EQ(task["status"], "killed") << task.dump();
    EXPECT_EQ(task["detail"],
              "budget: session build's max-tokens 8000 reached");
  }
  auto refused =
      Baton({"--json", "delegate", "--cwd", work_, "LOOP three"}, env_);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.json()["error"]["code"], "budget_spent") << refused.out;
  EXPECT_NE(refused.out.find("session build's max-tokens 8000 reached; no "
                             "new agent task starts in it"),
            std::string::npos)
      << refused.out;
  auto shown = Baton({"--json", "budget"}, env_);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  auto budget = nlohmann::json::parse(shown.out);
  EXPECT_EQ(budget["session"], "build");
  EXPECT_EQ(budget["agent_tasks"], 2);  // The refused one is no task.
  EXPECT_EQ(budget["budget"], nlohmann::json({{"max_tokens", 8000}}));
  int64_t tokens = budget["usage"]["input_tokens"].get<int64_t>() +
                   budget["usage"]["output_tokens"].get<int64_t>();
  EXPECT_GE(tokens, 8000);
  EXPECT_EQ(budget["reached"],
            "budget: session build's max-tokens 8000 reached");
  // The other session's worker ran on to its own budget (read as its
  // session: another's tasks are not visible).
  env_ = other_env;
  EXPECT_EQ(WaitEnd(other_id)["detail"], "budget: max-turns 8 reached");
}

// A delegate accepted while the session had budget left, held in a queue,
// starts after the budget was reached: it is stopped at once.
TEST_F(BudgetTest, AQueuedDelegateStartingInASpentSessionIsStopped) {
  env_["BATON_SESSION"] = "build";
  ASSERT_EQ(Baton({"queue", "add", "one", "--max", "1"}, env_).exit_code, 0);
  ASSERT_EQ(Baton({"budget", "--max-tokens", "3000"}, env_).exit_code, 0);
  std::string first = Delegate({"--agent", "claude", "--queue", "one", "LOOP"});
  std::string held =
      Delegate({"--agent", "claude", "--queue", "one", "one turn"});
  EXPECT_EQ(Status(held, env_)["status"], "queued");
  EXPECT_EQ(WaitEnd(first)["detail"],
            "budget: session build's max-tokens 3000 reached");
  auto task = WaitEnd(held);
  EXPECT_EQ(task["status"], "killed") << task.dump();
  EXPECT_EQ(task["detail"], "budget: session build's max-tokens 3000 reached");
}

// The budget is stored: it holds across a batond crash. Raised or
// cleared, delegates start again; bad values change nothing.
TEST_F(BudgetTest, ASessionBudgetSurvivesACrashAndCanBeClearedButNotBroken) {
  env_["BATON_SESSION"] = "build";
  ASSERT_EQ(Baton({"budget", "--max-turns", "1", "--max-cost", "2.5"}, env_)
                .exit_code,
            0);
  std::string id = Delegate({"--agent", "claude", "LOOP on"});
  EXPECT_EQ(WaitEnd(id)["detail"],
            "budget: session build's max-turns 1 reached");
  KillDaemonHard();
  auto shown = Baton({"budget"}, env_);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("session build: budget max-turns 1, max-cost $2.5"),
            std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("reached: budget: session build's max-turns 1 "
                           "reached"),
            std::string::npos)
      << shown.out;

  for (std::vector<std::string> bad :
       {std::vector<std::string>{"budget", "--max-turns", "-1"},
        {"budget", "--max-cost", "many"},
        {"budget", "--clear", "--max-turns", "3"}}) {
    auto refused = Baton(bad, env_);
    EXPECT_NE(refused.exit_code, 0) << bad[1];
    EXPECT_FALSE(refused.err.empty()) << bad[1];
  }
  auto unowned = env_;
  unowned.erase("BATON_SESSION");
  auto none = Baton({"budget", "--max-turns", "3"}, unowned);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("BATON_SESSION"), std::string::npos) << none.err;
  EXPECT_NE(Baton({"budget"}, env_).out.find("budget max-turns 1, max-cost"),
            std::string::npos);  // Unchanged.

  // A limit set to 0 goes; --clear removes the rest.
  auto lifted = Baton({"budget", "--max-turns", "0"}, env_);
  EXPECT_NE(lifted.out.find("session build: budget max-cost $2.5\n"),
            std::string::npos)
      << lifted.out;
  auto cleared = Baton({"budget", "--clear"}, env_);
  EXPECT_NE(cleared.out.find("session build: no budget\n"), std::string::npos)
      << cleared.out;
  EXPECT_EQ(WaitEnd(Delegate({"--agent", "claude", "one turn"}))["status"],
            "completed");
}

}  // namespace
}  // namespace baton::testing
