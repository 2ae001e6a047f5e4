// Session budgets (session_budgets.h; doc/agents.md, "Session
// budgets"), over the in-memory store and a fake executor.
#include <gtest/gtest.h>

#include <cerrno>

#include "baton/core/task_registry_test_fixture.h"

namespace baton {
namespace {

using registry_test::RegistryHarness;

using testing::FakeExecutor;
using testing::FakeTimeline;
using testing::InMemoryTaskStore;

class SessionBudgetTest : public RegistryHarness {
 protected:
  // Starts and spawns an agent task of `owner`; its id.
  TaskId StartAgent(const std::string& owner) {
    TaskSpec spec;
    spec.kind = TaskKind::kAgent;
    spec.argv = {"claude"};
    spec.cwd = "/tmp";
    spec.owner = owner;
    spec.agent.emplace();
    std::optional<TaskId> id;
    registry_->Start(std::move(spec), [&](Result<TaskRecord> task) {
      if (task)
        id = task->id;
    });
    EXPECT_TRUE(id);
    Commit();
    executor_.Spawn(*id);
    return *id;
  }

  void Commit() { ASSERT_TRUE(registry_->Commit()); }
};

TEST_F(SessionBudgetTest, SumsTheUsageOfTheSessionsAgentTasks) {
  TaskId a = StartAgent("build");
  TaskId b = StartAgent("build");
  TaskId other = StartAgent("docs");
  registry_->SetUsage(
      a,
      {.input_tokens = 100, .output_tokens = 20, .cost_usd = 0.5, .turns = 2});
  registry_->SetUsage(b, {.input_tokens = 50, .output_tokens = 5, .turns = 1});
  registry_->SetUsage(other, {.input_tokens = 9000, .turns = 9});

  auto view = registry_->budgets().Change("build", {.max_tokens = 1000});
  ASSERT_TRUE(view) << view.error().message;
  EXPECT_EQ(view->agent_tasks, 2);
  EXPECT_EQ(view->usage.input_tokens, 150);
  EXPECT_EQ(view->usage.output_tokens, 25);
  EXPECT_EQ(view->usage.turns, 3);
  EXPECT_EQ(view->usage.cost_usd, 0.5);
  EXPECT_EQ(view->reached, "");
  Commit();
  EXPECT_EQ(store_.budgets.at("build").max_tokens, 1000);

  // A report replaces a task's totals: the sum moves by the difference.
  registry_->SetUsage(
      a,
      {.input_tokens = 950, .output_tokens = 40, .cost_usd = 0.75, .turns = 3});
  EXPECT_EQ(registry_->budgets().Reached("build"),
            "budget: session build's max-tokens 1000 reached");
  EXPECT_EQ(registry_->budgets().Reached("docs"), "");
  auto again = registry_->budgets().Of("build");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->usage.tokens(), 1045);
  EXPECT_EQ(again->usage.cost_usd, 0.75);
  EXPECT_EQ(again->reached, "budget: session build's max-tokens 1000 reached");
}

TEST_F(SessionBudgetTest, EndedTasksCountAndARestartKeepsTheSum) {
  TaskId a = StartAgent("build");
  registry_->SetUsage(a, {.input_tokens = 10, .output_tokens = 0, .turns = 5});
  ASSERT_TRUE(registry_->budgets().Change("build", {.max_turns = 6}));
  Commit();
  executor_.Exit(a, 0);
  TaskId b = StartAgent("build");
  registry_->SetUsage(b, {.turns = 1});
  EXPECT_EQ(registry_->budgets().Reached("build"), "");
  registry_->SetUsage(b, {.turns = 2});  // 7 turns: past 6.
  EXPECT_EQ(registry_->budgets().Reached("build"),
            "budget: session build's max-turns 6 reached");
  Commit();

  Reset();
  ASSERT_TRUE(registry_->Recover());
  EXPECT_EQ(registry_->budgets().Reached("build"),
            "budget: session build's max-turns 6 reached");
  auto view = registry_->budgets().Of("build");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->usage.turns, 7);
  EXPECT_EQ(view->agent_tasks, 2);
}

TEST_F(SessionBudgetTest, AChangeKeepsWhatItDoesNotNameAndZeroOrClearRemoves) {
  ASSERT_TRUE(registry_->budgets().Change(
      "build", {.max_turns = 3, .max_cost_usd = 2.0}));
  auto view = registry_->budgets().Change("build", {.max_tokens = 5});
  ASSERT_TRUE(view);
  EXPECT_EQ(
      view->budget,
      (AgentBudget{.max_turns = 3, .max_tokens = 5, .max_cost_usd = 2.0}));
  view = registry_->budgets().Change("build", {.max_turns = 0});
  ASSERT_TRUE(view);
  EXPECT_EQ(view->budget, (AgentBudget{.max_tokens = 5, .max_cost_usd = 2.0}));
  Commit();
  EXPECT_EQ(store_.budgets.at("build"), view->budget);
  ASSERT_TRUE(registry_->budgets().Change("build", {.clear = true}));
  Commit();
  EXPECT_FALSE(store_.budgets.contains("build"));
  EXPECT_FALSE(registry_->budgets().Of("build")->budget.any());
}

TEST_F(SessionBudgetTest, BadBudgetsAndNoSessionAreRefused) {
  auto none = registry_->budgets().Change("", {.max_tokens = 5});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(none.error().message.find("BATON_SESSION"), std::string::npos);
  auto negative = registry_->budgets().Change("build", {.max_turns = -1});
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("max-turns must be 0 (none) or more"),
            std::string::npos);
  EXPECT_FALSE(registry_->budgets().Change("build", {.max_cost_usd = -1}));
  EXPECT_FALSE(registry_->budgets().Change("build", {.max_cost_usd = 2e9}));
  EXPECT_TRUE(store_.budgets.empty());  // Nothing changed.
}

// A change whose commit fails is taken back, in the store and in memory:
// its reply is an error, so nothing may hold it.
TEST_F(SessionBudgetTest, AFailedCommitTakesTheChangeBack) {
  TaskId a = StartAgent("build");
  registry_->SetUsage(a, {.input_tokens = 40});
  ASSERT_TRUE(registry_->budgets().Change("build", {.max_tokens = 100}));
  Commit();
  store_.fail_flush = Error{ErrorCode::kIo, "disk full", ENOSPC};
  ASSERT_TRUE(registry_->budgets().Change("build", {.max_tokens = 10}));
  EXPECT_FALSE(registry_->Commit());
  EXPECT_EQ(registry_->budgets().Reached("build"), "");
  EXPECT_EQ(store_.budgets.at("build").max_tokens, 100);
  // Removed and taken back: the sum is there again.
  ASSERT_TRUE(registry_->budgets().Change("build", {.clear = true}));
  EXPECT_FALSE(registry_->Commit());
  store_.fail_flush.reset();
  ASSERT_EQ(registry_->budgets().Of("build")->budget.max_tokens, 100);
  registry_->SetUsage(a, {.input_tokens = 100});
  EXPECT_EQ(registry_->budgets().Reached("build"),
            "budget: session build's max-tokens 100 reached");
}

TEST(AgentUsageSums, SaturateAndNeverGoBelowZero) {
  AgentUsage big{.input_tokens = kMaxUsageCount, .output_tokens = 1};
  AgentUsage sum = AddUsage(big, big);
  EXPECT_EQ(sum.input_tokens, kMaxUsageCount);
  EXPECT_GT(sum.tokens(), 0);  // No overflow.
  EXPECT_FALSE(sum.cost_usd);
  AgentUsage rest = SubtractUsage({.input_tokens = 5, .cost_usd = 1.0},
                                  {.input_tokens = 9, .cost_usd = 3.0});
  EXPECT_EQ(rest.input_tokens, 0);
  EXPECT_EQ(rest.cost_usd, 0.0);
}

}  // namespace
}  // namespace baton
