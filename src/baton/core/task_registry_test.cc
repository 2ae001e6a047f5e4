#include "baton/core/task_registry.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "baton/core/sessions.h"
#include "tests/support/fakes.h"

namespace baton {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeExecutor;
using testing::FakeTimeline;
using testing::InMemoryTaskStore;

class TaskRegistryTest : public ::testing::Test {
 protected:
  TaskRegistryTest() { Reset(); }

  void Reset() {
    registry_ = std::make_unique<TaskRegistry>(&store_, &executor_, &time_,
                                               &time_, TaskRegistry::Options{});
    executor_.SetListener(registry_.get());
  }

  TaskSpec Shell(std::string command, std::string owner = "") {
    TaskSpec spec;
    spec.shell_command = std::move(command);
    spec.cwd = "/tmp";
    spec.owner = std::move(owner);
    return spec;
  }

  // Starts and spawns a task; returns its id text.
  std::string StartRunning(std::string owner = "") {
    std::optional<Result<TaskRecord>> started;
    registry_->Start(Shell("true", owner),
                     [&](Result<TaskRecord> r) { started = std::move(r); });
    EXPECT_TRUE(started.has_value() && started->has_value());
    EXPECT_EQ((*started)->status, TaskStatus::kQueued);
    std::string id = (*started)->id.ToString();
    Commit();
    executor_.Spawn(executor_.started.back().id);
    EXPECT_EQ(registry_->Get(id, owner)->status, TaskStatus::kRunning);
    return id;
  }

  // Starts an agent task (kind agent); returns its id text.
  std::string StartAgent() {
    TaskSpec spec;
    spec.kind = TaskKind::kAgent;
    spec.argv = {"claude"};
    spec.cwd = "/tmp";
    spec.agent.emplace();
    std::string id;
    registry_->Start(std::move(spec), [&](Result<TaskRecord> r) {
      if (r)
        id = r->id.ToString();
    });
    return id;
  }

  TaskId Id(const std::string& text) { return *TaskId::Parse(text); }

  // The end of a loop iteration of the daemon: the store commits, then the
  // executor gets its requests.
  void Commit() { ASSERT_TRUE(registry_->Commit()); }
  void FailCommits() {
    store_.fail_flush = Error{ErrorCode::kIo, "disk full", ENOSPC};
  }

  InMemoryTaskStore store_;
  FakeExecutor executor_;
  FakeTimeline time_;
  std::unique_ptr<TaskRegistry> registry_;
};

// The registry asks the store for the next number of the task's own kind,
// and keeps no count of its own that a restart could reset or that its
// live tasks could mislead.
TEST_F(TaskRegistryTest, IdsCountPerKindAndAreNeverReused) {
  EXPECT_EQ(StartRunning(), "shell-1");
  EXPECT_EQ(StartAgent(), "agent-1");
  EXPECT_EQ(StartRunning(), "shell-2");
  EXPECT_EQ(StartAgent(), "agent-2");
  executor_.Exit(Id("shell-2"), 0);
  executor_.Exit(Id("agent-2"), 0);
  Reset();  // A restarted daemon over the same store.
  ASSERT_TRUE(registry_->Recover());
  EXPECT_EQ(StartRunning(), "shell-3");
  EXPECT_EQ(StartAgent(), "agent-3");
  EXPECT_EQ(StartRunning(), "shell-4");
}

TEST_F(TaskRegistryTest, BadSpecIsRefusedBeforeAnythingIsStoredOrSpawned) {
  std::vector<TaskSpec> bad;
  bad.push_back(Shell("   "));
  bad.push_back(Shell("ls"));
  bad.back().cwd = "relative/dir";
  bad.push_back(Shell("ls"));
  bad.back().env_overrides["1BAD"] = "x";
  bad.push_back(Shell("ls"));
  bad.back().timeout = milliseconds(0);
  TaskSpec empty_argv;
  empty_argv.cwd = "/";
  bad.push_back(empty_argv);
  // Labels that would set a terminal's title, clear it, or forge a line.
  for (const char* label :
       {"\x1b]0;PWNED\a\x1b[2J\x1b[31mred", "two\nlines", "csi \xc2\x9b"}) {
    bad.push_back(Shell("ls"));
    bad.back().label = label;
  }
  for (auto& spec : bad) {
    std::optional<Result<TaskRecord>> result;
    registry_->Start(spec, [&](Result<TaskRecord> r) { result = r; });
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(result->has_value());
    EXPECT_EQ(result->error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(store_.tasks.empty());
  EXPECT_TRUE(executor_.started.empty());
  EXPECT_EQ(StartRunning(), "shell-1");  // No number was burnt.
}

TEST_F(TaskRegistryTest, TaskIsStoredAsQueuedBeforeTheSpawnIsRequested) {
  registry_->Start(Shell("true"), [](Result<TaskRecord>) {});
  EXPECT_EQ(store_.tasks.at(Id("shell-1")).status, TaskStatus::kQueued);
  EXPECT_TRUE(executor_.started.empty()) << "spawned before the commit";
  Commit();
  EXPECT_EQ(store_.flushed.at(Id("shell-1")).status, TaskStatus::kQueued);
  ASSERT_EQ(executor_.started.size(), 1u);
}

TEST_F(TaskRegistryTest, ExitStatusesMapToTheClosedSet) {
  std::string ok = StartRunning(), bad = StartRunning(), sig = StartRunning();
  executor_.Exit(Id(ok), 0);
  executor_.Exit(Id(bad), 3);
  ExitInfo by_signal;
  by_signal.signal = 11;
  registry_->OnTaskExited(Id(sig), by_signal);
  EXPECT_EQ(registry_->Get(ok, "")->status, TaskStatus::kCompleted);
  EXPECT_EQ(registry_->Get(bad, "")->status, TaskStatus::kFailed);
  EXPECT_EQ(registry_->Get(bad, "")->detail, "exit code: 3");
  EXPECT_EQ(registry_->Get(sig, "")->detail, "signal: SIGSEGV");
  EXPECT_EQ(registry_->live_count(), 0u);
}

// Issue 12, finding 12: batond died before it heard of the start; the end,
// recovered from the exit record, carries it.
TEST_F(TaskRegistryTest, AnEndCarriesTheStartBatondNeverHeardOf) {
  registry_->Start(Shell("true"), [](Result<TaskRecord>) {});
  ExitInfo exit;
  exit.exit_code = 0;
  exit.pid = 4321;
  exit.started_ms = 1500;
  exit.ended_ms = 2000;
  registry_->OnTaskExited(Id("shell-1"), exit);
  auto task = registry_->Get("shell-1", "");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->status, TaskStatus::kCompleted);
  EXPECT_EQ(task->pid, 4321);
  EXPECT_EQ(task->started_ms, 1500);
  // A start batond heard of stays as it was.
  std::string heard = StartRunning();
  exit.pid = 99;
  exit.started_ms = 1;
  registry_->OnTaskExited(Id(heard), exit);
  EXPECT_EQ(registry_->Get(heard, "")->pid, 100);
  EXPECT_EQ(registry_->Get(heard, "")->started_ms, 1000);
}

// Issue 13: what the executor stopped after the leader's exit is told.
TEST_F(TaskRegistryTest, LeftoversStoppedAreInTheDetail) {
  std::string one = StartRunning(), two = StartRunning();
  ExitInfo exit;
  exit.exit_code = 0;
  exit.leftovers_stopped = 1;
  registry_->OnTaskExited(Id(one), exit);
  exit.exit_code = 2;
  exit.leftovers_stopped = 3;
  registry_->OnTaskExited(Id(two), exit);
  EXPECT_EQ(registry_->Get(one, "")->status, TaskStatus::kCompleted);
  EXPECT_EQ(registry_->Get(one, "")->detail,
            "exit code: 0; stopped 1 leftover process");
  EXPECT_EQ(registry_->Get(two, "")->detail,
            "exit code: 2; stopped 3 leftover processes");
}

// Issue 13: a process that succeeded but whose check failed did not do its
// job; its exit code stays. A failed process keeps its own detail.
TEST_F(TaskRegistryTest, AFailedCheckFailsATaskThatExitedZero) {
  std::string ok = StartRunning(), bad = StartRunning(), two = StartRunning(),
              passed = StartRunning();
  ExitInfo exit;
  exit.exit_code = 0;
  exit.evidence =
      Evidence{"scan", {}, {{"true", 0, ""}, {"make test", 2, "FAIL"}}, {}};
  registry_->OnTaskExited(Id(ok), exit);
  exit.evidence->checks.push_back({"lint", 1, ""});
  registry_->OnTaskExited(Id(two), exit);
  exit.exit_code = 3;
  registry_->OnTaskExited(Id(bad), exit);
  exit.exit_code = 0;
  exit.evidence->checks = {{"true", 0, ""}};
  registry_->OnTaskExited(Id(passed), exit);
  auto task = registry_->Get(ok, "");
  EXPECT_EQ(task->status, TaskStatus::kFailed);
  EXPECT_EQ(task->detail, "check failed: make test (exit code 2)");
  EXPECT_EQ(task->exit_code, 0);
  EXPECT_EQ(registry_->Get(two, "")->detail,
            "check failed: make test (exit code 2) and 1 more");
  EXPECT_EQ(registry_->Get(bad, "")->detail, "exit code: 3");
  EXPECT_EQ(registry_->Get(passed, "")->status, TaskStatus::kCompleted);
}

TEST_F(TaskRegistryTest, OtherSessionsTasksAreInvisibleAndRefused) {
  std::string mine = StartRunning("alice");
  std::string shared = StartRunning("");
  size_t hidden;
  auto bobs = registry_->List("bob", true, &hidden);
  ASSERT_EQ(bobs->size(), 1u);
  EXPECT_EQ((*bobs)[0].id.ToString(), shared);
  auto refused = registry_->Get(mine, "bob");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_FALSE(registry_->Kill(mine, "bob", "", std::nullopt));
  EXPECT_FALSE(registry_->Read(mine, "bob", ReadMode::kAll));
  EXPECT_FALSE(
      registry_->Wait({mine}, "bob", false, std::nullopt, [](WaitResult) {}));
  EXPECT_TRUE(executor_.kills.empty());
  EXPECT_EQ(registry_->Get(mine, "alice")->status, TaskStatus::kRunning);
  auto unknown = registry_->Get("shell-99", "alice");
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(registry_->Get("nonsense", "").error().code,
            ErrorCode::kInvalidArgument);
}

// A person's session (core/sessions.h) sees and acts on every session's
// tasks, and nothing it does is the owner's: the owner is still told of
// the end it looked at, and of the kill it sent.
TEST_F(TaskRegistryTest, APersonSeesEverySessionsTasksAndTellsNoOwner) {
  const std::string person(kPersonSession);
  std::string looked = StartRunning("alice");
  std::string killed = StartRunning("bob");
  std::string shared = StartRunning("");
  size_t hidden;
  auto all = registry_->List(person, true, &hidden);
  ASSERT_TRUE(all);
  std::vector<std::string> ids;
  for (const auto& task : *all)
    ids.push_back(task.id.ToString());
  EXPECT_EQ(ids, (std::vector<std::string>{looked, killed, shared}));
  EXPECT_EQ(registry_->ListLive(person).size(), 3u);

  executor_.Exit(Id(looked), 0);
  Commit();
  auto task = registry_->Get(looked, person);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->status, TaskStatus::kCompleted);
  EXPECT_TRUE(registry_->Read(looked, person, ReadMode::kAll));
  ASSERT_TRUE(registry_->Kill(killed, person, "from the board", std::nullopt));
  Commit();
  executor_.Exit(Id(killed), 143, ExitCause::kKilled);
  Commit();
  EXPECT_TRUE(registry_->TakeNotices(person).empty());
  auto alices = registry_->TakeNotices("alice");
  ASSERT_EQ(alices.size(), 1u);
  EXPECT_EQ(alices[0].id.ToString(), looked);
  auto bobs = registry_->TakeNotices("bob");
  ASSERT_EQ(bobs.size(), 1u);
  EXPECT_EQ(bobs[0].status, TaskStatus::kKilled);
  EXPECT_EQ(bobs[0].kill_reason, "from the board");
}

TEST_F(TaskRegistryTest, WaitAnyReturnsAtTheFirstEndWithTheRestRunning) {
  std::string a = StartRunning(), b = StartRunning(), c = StartRunning();
  std::optional<WaitResult> result;
  ASSERT_TRUE(registry_->Wait({a, b, c}, "", false, std::nullopt,
                              [&](WaitResult r) { result = r; }));
  EXPECT_FALSE(result);
  executor_.Exit(Id(b), 0);
  ASSERT_TRUE(result);
  ASSERT_EQ(result->ended.size(), 1u);
  EXPECT_EQ(result->ended[0].id.ToString(), b);
  EXPECT_EQ(result->still_running_count(), 2u);
  EXPECT_FALSE(result->timed_out);
}

TEST_F(TaskRegistryTest, WaitAllWaitsForEveryTask) {
  std::string a = StartRunning(), b = StartRunning();
  std::optional<WaitResult> result;
  ASSERT_TRUE(registry_->Wait({a, b}, "", true, std::nullopt,
                              [&](WaitResult r) { result = r; }));
  executor_.Exit(Id(a), 0);
  EXPECT_FALSE(result);
  executor_.Exit(Id(b), 1);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->ended.size(), 2u);
}

TEST_F(TaskRegistryTest, WaitOnAnEndedTaskAnswersAtOnce) {
  std::string a = StartRunning();
  executor_.Exit(Id(a), 0);
  std::optional<WaitResult> result;
  ASSERT_TRUE(registry_->Wait({a}, "", false, seconds(5),
                              [&](WaitResult r) { result = r; }));
  ASSERT_TRUE(result);
  EXPECT_EQ(time_.pending_timers(), 0u);
}

TEST_F(TaskRegistryTest, WaitTimesOutWithTheStateOnly) {
  std::string a = StartRunning();
  std::optional<WaitResult> result;
  int calls = 0;
  ASSERT_TRUE(registry_->Wait({a}, "", false, seconds(2), [&](WaitResult r) {
    ++calls;
    result = r;
  }));
  time_.Advance(milliseconds(1999));
  EXPECT_FALSE(result);
  time_.Advance(milliseconds(1));
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->timed_out);
  EXPECT_EQ(result->still_running_count(), 1u);
  EXPECT_TRUE(result->ended.empty());
  executor_.Exit(Id(a), 0);  // Must not call the finished wait again.
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(result->timed_out);
  EXPECT_TRUE(result->ended.empty());
}

TEST_F(TaskRegistryTest, CancelledWaitIsNeverCalled) {
  std::string a = StartRunning();
  bool called = false;
  auto wait = registry_->Wait({a}, "", false, seconds(1),
                              [&](WaitResult) { called = true; });
  registry_->CancelWait(*wait);
  executor_.Exit(Id(a), 0);
  time_.Advance(seconds(2));
  EXPECT_FALSE(called);
}

TEST_F(TaskRegistryTest, AnsweredAndCancelledWaitsLeaveNothingBehind) {
  std::string a = StartRunning(), b = StartRunning(), c = StartRunning();
  int any_calls = 0;
  std::optional<WaitResult> any;
  ASSERT_TRUE(
      registry_->Wait({a, b, c, b}, "", false, std::nullopt, [&](WaitResult r) {
        ++any_calls;
        any = std::move(r);
      }));
  bool cancelled_called = false;
  auto cancelled =
      registry_->Wait({b, c}, "", true, std::nullopt,
                      [&](WaitResult) { cancelled_called = true; });
  registry_->CancelWait(*cancelled);
  executor_.Exit(Id(a), 0);
  ASSERT_TRUE(any);
  ASSERT_EQ(any->ended.size(), 1u);
  EXPECT_EQ(any->ended[0].id.ToString(), a);
  // Each id once, in the order asked.
  ASSERT_EQ(any->still_running_count(), 2u);
  std::vector<TaskId> running = any->StillRunning();
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].ToString(), b);
  EXPECT_EQ(running[1].ToString(), c);

  // A new wait on a task the old ones named sees only itself.
  std::optional<WaitResult> later;
  ASSERT_TRUE(registry_->Wait({c, b}, "", true, std::nullopt,
                              [&](WaitResult r) { later = std::move(r); }));
  executor_.Exit(Id(b), 0);
  EXPECT_FALSE(later);
  executor_.Exit(Id(c), 1);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->ended.size(), 2u);
  EXPECT_EQ(later->ended[0].id.ToString(), c);
  EXPECT_EQ(later->ended[0].status, TaskStatus::kFailed);
  EXPECT_EQ(later->ended[1].id.ToString(), b);
  EXPECT_EQ(later->still_running_count(), 0u);
  EXPECT_TRUE(later->StillRunning().empty());
  EXPECT_EQ(any_calls, 1);
  EXPECT_FALSE(cancelled_called);
}

TEST_F(TaskRegistryTest, WaitForAllAnswersWhenTheLastTaskEnds) {
  std::string a = StartRunning(), b = StartRunning(), c = StartRunning();
  executor_.Exit(Id(c), 0);
  std::vector<TaskId> killed = registry_->KillAll("daemon stopped");
  ASSERT_EQ(killed.size(), 2u);
  bool done = false;
  registry_->WaitForAll({Id(a), Id(b), Id(c)}, [&] { done = true; });
  executor_.Exit(Id(a), 0, ExitCause::kKilled);
  EXPECT_FALSE(done);
  executor_.Exit(Id(b), 0, ExitCause::kKilled);
  EXPECT_TRUE(done);

  bool none_live = false;
  registry_->WaitForAll({Id(a)}, [&] { none_live = true; });
  EXPECT_TRUE(none_live);
}

TEST_F(TaskRegistryTest, KillIsRequestedOnceThenAlreadyTerminal) {
  std::string a = StartRunning();
  EXPECT_EQ(*registry_->Kill(a, "", "not needed", milliseconds(100)),
            KillOutcome::kRequested);
  EXPECT_TRUE(executor_.kills.empty()) << "signalled before the commit";
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(executor_.kills[0].second, milliseconds(100));
  EXPECT_EQ(registry_->Get(a, "")->status, TaskStatus::kStopping);
  executor_.Exit(Id(a), 143, ExitCause::kKilled);
  auto task = registry_->Get(a, "");
  EXPECT_EQ(task->status, TaskStatus::kKilled);
  EXPECT_EQ(task->detail, "killed: not needed");
  EXPECT_EQ(*registry_->Kill(a, "", "", std::nullopt),
            KillOutcome::kAlreadyTerminal);
  EXPECT_EQ(executor_.kills.size(), 1u);
}

// A budget's kill (doc/agents.md, "Budgets") ends the task with the
// budget as its detail, as a timeout does; usage is kept with the task. It
// is batond's own kill, not the owner's: the owner is still told of the end.
TEST_F(TaskRegistryTest, ASlurmJobIsQueuedWhilePendingAndKilledThere) {
  TaskSpec spec = Shell("true");
  spec.slurm = SlurmRequest{.partition = "debug"};
  std::string id;
  registry_->Start(std::move(spec), [&](Result<TaskRecord> r) {
    ASSERT_TRUE(r);
    id = r->id.ToString();
  });
  Commit();
  registry_->OnTaskPlaced(Id(id), SlurmJob{.job_id = "12",
                                           .partition = "debug",
                                           .state = "PENDING",
                                           .reason = "Resources"});
  Commit();
  TaskRecord task = *registry_->Get(id, "");
  EXPECT_EQ(task.status, TaskStatus::kQueued);
  EXPECT_EQ(task.detail, "slurm job 12 pending (Resources)");
  ASSERT_TRUE(task.slurm_job);
  EXPECT_EQ(task.slurm_job->job_id, "12");
  EXPECT_EQ(store_.flushed.at(Id(id)).slurm_job, task.slurm_job);  // Stored.
  // Pending is not yet spawned, but a job to cancel: the kill goes out.
  ASSERT_TRUE(registry_->Kill(id, "", "", std::nullopt));
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(executor_.kills[0].first, Id(id));
  registry_->OnTaskPlaced(Id(id),
                          SlurmJob{.job_id = "12", .unreachable = true});
  EXPECT_EQ(registry_->Get(id, "")->status, TaskStatus::kStopping);
}

TEST_F(TaskRegistryTest, ABudgetKillEndsWithTheBudgetAsDetail) {
  std::string a = StartRunning("alice");
  AgentUsage usage{.input_tokens = 150000, .output_tokens = 60000, .turns = 4};
  registry_->SetUsage(Id(a), usage);
  AgentSpec agent;
  agent.max_tokens = 200000;
  std::string reason = BudgetReached(agent, usage);
  EXPECT_EQ(reason, "budget: max-tokens 200000 reached");
  ASSERT_TRUE(registry_->Kill(a, "alice", reason, std::nullopt, milliseconds(0),
                              KillOrigin::kLimit));
  Commit();
  executor_.Exit(Id(a), 143, ExitCause::kKilled);
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(NoticeText(notices[0]),
            a + " killed (budget: max-tokens 200000 reached)");
  auto task = registry_->Get(a, "alice");
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->status, TaskStatus::kKilled);
  EXPECT_EQ(task->detail, "budget: max-tokens 200000 reached");
  EXPECT_TRUE(task->killed_at_limit);
  ASSERT_TRUE(task->usage);
  EXPECT_EQ(*task->usage, usage);
}

// The same words from a client are a reason like any other.
TEST_F(TaskRegistryTest, AClientsKillIsNeverTakenForALimit) {
  std::string a = StartRunning("alice");
  ASSERT_TRUE(registry_->Kill(a, "alice", "budget: mine", std::nullopt));
  Commit();
  executor_.Exit(Id(a), 143, ExitCause::kKilled);
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());  // It knows.
  auto task = registry_->Get(a, "alice");
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->detail, "killed: budget: mine");
  EXPECT_FALSE(task->killed_at_limit);
}

TEST(BudgetReachedTest, EachLimitAndItsEdge) {
  AgentSpec agent;
  AgentUsage usage{.input_tokens = 90, .output_tokens = 10, .turns = 3};
  EXPECT_EQ(BudgetReached(agent, usage), "");  // No budget, no limit.
  agent.max_turns = 3;  // Three turns may finish; the fourth is stopped.
  EXPECT_EQ(BudgetReached(agent, usage), "");
  usage.turns = 4;
  EXPECT_EQ(BudgetReached(agent, usage), "budget: max-turns 3 reached");
  agent.max_turns.reset();
  agent.max_tokens = 101;
  EXPECT_EQ(BudgetReached(agent, usage), "");
  agent.max_tokens = 100;
  EXPECT_EQ(BudgetReached(agent, usage), "budget: max-tokens 100 reached");
  agent.max_tokens.reset();
  agent.max_cost_usd = 0.5;
  EXPECT_EQ(BudgetReached(agent, usage), "");  // No cost reported.
  usage.cost_usd = 0.5;
  EXPECT_EQ(BudgetReached(agent, usage), "budget: max-cost $0.5 reached");
}

// A task asked to stop by itself (an agent ending its turn) gets
// `stop_delay` to exit; it is killed all the same, and signalled only if it
// is still there.
TEST_F(TaskRegistryTest, AStopDelayHoldsTheSignalsBack) {
  std::string a, b;
  registry_->Start(Shell("an-agent"), [&](auto r) { a = r->id.ToString(); });
  registry_->Start(Shell("an-agent"), [&](auto r) { b = r->id.ToString(); });
  Commit();
  executor_.Spawn(Id(a));
  executor_.Spawn(Id(b));
  for (const auto& id : {a, b}) {
    EXPECT_EQ(*registry_->Kill(id, "", "", std::nullopt, milliseconds(3000)),
              KillOutcome::kRequested);
    EXPECT_EQ(registry_->Get(id, "")->status, TaskStatus::kStopping);
  }
  Commit();
  EXPECT_TRUE(executor_.kills.empty());
  executor_.Exit(Id(a), 0);  // Ended its turn and exited by itself.
  EXPECT_EQ(registry_->Get(a, "")->status, TaskStatus::kKilled);
  EXPECT_EQ(registry_->Get(a, "")->detail, "killed: by request");
  EXPECT_EQ(registry_->Get(a, "")->exit_code, 0);
  time_.Advance(milliseconds(2999));
  EXPECT_TRUE(executor_.kills.empty());
  time_.Advance(milliseconds(1));
  ASSERT_EQ(executor_.kills.size(), 1u);  // Only the one still there.
  EXPECT_EQ(executor_.kills[0].first, Id(b));
}

TEST_F(TaskRegistryTest, KillBeforeTheSpawnLandsKillsRightAfter) {
  std::optional<Result<TaskRecord>> started;
  registry_->Start(Shell("sleep 9"), [&](auto r) { started = r; });
  EXPECT_EQ(*registry_->Kill("shell-1", "", "", std::nullopt),
            KillOutcome::kRequested);
  Commit();
  EXPECT_TRUE(executor_.kills.empty());
  executor_.Spawn(Id("shell-1"));
  Commit();
  EXPECT_EQ(executor_.kills.size(), 1u);
}

TEST_F(TaskRegistryTest, ConsumingReadsArePerSessionOffsetReadsConsumeNothing) {
  std::string a = StartRunning("alice");
  executor_.output_sizes[Id(a)] = 10;
  auto first = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(first->from, 0u);
  EXPECT_EQ(first->to, 10u);
  executor_.output_sizes[Id(a)] = 25;
  auto peek = registry_->Read(a, "alice", ReadMode::kOffset, 5);
  EXPECT_EQ(peek->from, 5u);
  EXPECT_EQ(peek->to, 25u);
  auto second = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(second->from, 10u);
  EXPECT_EQ(second->to, 25u);
  auto third = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(third->from, 25u);
  EXPECT_EQ(third->to, 25u);
  EXPECT_EQ(registry_->Read(a, "alice", ReadMode::kAll)->from, 0u);
}

TEST_F(TaskRegistryTest, NoticeIsDeliveredOnce) {
  std::string a = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  EXPECT_TRUE(registry_->TakeNotices("bob").empty());
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(NoticeText(notices[0]), a + " completed (exit code: 0)");
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
  Reset();  // Delivered is durable.
  ASSERT_TRUE(registry_->Recover());
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
}

TEST_F(TaskRegistryTest, NoNoticeWhenTheOwnerAlreadySawTheEnd) {
  std::string waited = StartRunning("alice");
  std::string read = StartRunning("alice");
  std::string killed = StartRunning("alice");
  std::string unseen = StartRunning("alice");
  ASSERT_TRUE(registry_->Wait({waited}, "alice", false, std::nullopt,
                              [](WaitResult) {}));
  executor_.Exit(Id(waited), 0);
  executor_.Exit(Id(read), 0);
  ASSERT_TRUE(registry_->Read(read, "alice", ReadMode::kNew));
  ASSERT_TRUE(registry_->Kill(killed, "alice", "", std::nullopt));
  executor_.Exit(Id(killed), 0, ExitCause::kKilled);
  executor_.Exit(Id(unseen), 0);
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].id.ToString(), unseen);
}

// Issue 13: a question is noticed like an end, once; a wait, a read or a
// status that showed it counts as told. The next question is news again.
TEST_F(TaskRegistryTest, AQuestionIsNoticedOnceUntilTheNextOne) {
  std::string asks = StartRunning("alice"), looked = StartRunning("alice");
  registry_->SetWaiting(Id(asks), true);
  registry_->SetWaiting(Id(looked), true);
  ASSERT_TRUE(registry_->Get(looked, "alice"));  // A status tells it.
  EXPECT_TRUE(registry_->TakeNotices("bob").empty());
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].id.ToString(), asks);
  EXPECT_EQ(NoticeText(notices[0]), asks + " waiting (asks a question)");
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
  Commit();
  Reset();  // Told is durable.
  ASSERT_TRUE(registry_->Recover());
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
  // Answered, then a new question: news again; its end is news too.
  registry_->SetWaiting(Id(asks), false);
  registry_->SetWaiting(Id(asks), true);
  EXPECT_EQ(registry_->TakeNotices("alice").size(), 1u);
  executor_.Exit(Id(asks), 0);
  EXPECT_EQ(registry_->TakeNotices("alice").size(), 1u);
}

// Issue 13: a wait means "tell me something new". After collecting one
// task, waiting again on the same list blocks until another ends; when
// every one ended and was told, it answers at once with all of them.
TEST_F(TaskRegistryTest, AWaitReturnsOnlyForNews) {
  std::string a = StartRunning("alice"), b = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  std::optional<WaitResult> first;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { first = std::move(r); }));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->ended.size(), 1u);
  std::optional<WaitResult> again;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { again = std::move(r); }));
  EXPECT_FALSE(again) << "a was collected: not news";
  executor_.Exit(Id(b), 1);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->ended.size(), 1u);
  EXPECT_EQ(again->ended[0].id.ToString(), b);
  ASSERT_EQ(again->already_told.size(), 1u);
  EXPECT_EQ(again->already_told[0].ToString(), a);
  // Everything ended and told: at once, with all.
  std::optional<WaitResult> all_told;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { all_told = std::move(r); }));
  ASSERT_TRUE(all_told);
  EXPECT_EQ(all_told->ended.size(), 2u);
  EXPECT_TRUE(all_told->already_told.empty());
}

// A wait sent again after its batond died (news_since_ms) gets an end told
// since its first send once more: the lost answer may have told it. An end
// told before that stays collected.
TEST_F(TaskRegistryTest, AResentWaitIsToldAgainWhatTheLostAnswerMayHaveTold) {
  std::string a = StartRunning("alice"), b = StartRunning("alice");
  executor_.Exit(Id(a), 0);  // Ends at wall time 2000 (FakeExecutor).
  std::optional<WaitResult> told;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { told = std::move(r); }));
  ASSERT_TRUE(told && told->ended.size() == 1u);
  // The answer was lost: the resend of a wait first sent before the end.
  std::optional<WaitResult> resent;
  ASSERT_TRUE(registry_->Wait(
      {a, b}, "alice", false, std::nullopt,
      [&](WaitResult r) { resent = std::move(r); }, false, 1500));
  ASSERT_TRUE(resent) << "a resent wait lost an end told meanwhile";
  ASSERT_EQ(resent->ended.size(), 1u);
  EXPECT_EQ(resent->ended[0].id.ToString(), a);
  // A wait first sent after the end (and its telling) blocks as before.
  std::optional<WaitResult> later;
  ASSERT_TRUE(registry_->Wait(
      {a, b}, "alice", false, std::nullopt,
      [&](WaitResult r) { later = std::move(r); }, false, 2500));
  EXPECT_FALSE(later) << "a was collected before this wait began";
}

// A question told by a wait is not news to the next wait; the task's end,
// or a new question, is.
TEST_F(TaskRegistryTest, AToldQuestionDoesNotEndTheNextWait) {
  std::string asks = StartRunning("alice"), other = StartRunning("alice");
  registry_->SetWaiting(Id(asks), true);
  std::optional<WaitResult> first, second;
  ASSERT_TRUE(registry_->Wait({asks, other}, "alice", false, std::nullopt,
                              [&](WaitResult r) { first = std::move(r); }));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->ended[0].status, TaskStatus::kWaiting);
  ASSERT_TRUE(registry_->Wait({asks, other}, "alice", false, std::nullopt,
                              [&](WaitResult r) { second = std::move(r); }));
  EXPECT_FALSE(second);
  registry_->SetWaiting(Id(asks), false);
  registry_->SetWaiting(Id(asks), true);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->ended[0].id.ToString(), asks);
}

// A wait that asked for turns returns at an agent's turn end, with the
// turn's text; other waits do not.
TEST_F(TaskRegistryTest, ATurnsWaitReturnsAtATurnsEnd) {
  std::string agent = StartRunning("alice");
  std::optional<WaitResult> turns, ends;
  ASSERT_TRUE(registry_->Wait(
      {agent}, "alice", false, std::nullopt,
      [&](WaitResult r) { turns = std::move(r); }, /*turns=*/true));
  ASSERT_TRUE(registry_->Wait({agent}, "alice", false, std::nullopt,
                              [&](WaitResult r) { ends = std::move(r); }));
  registry_->TurnEnded(Id(agent), "done with step 1");
  ASSERT_TRUE(turns);
  EXPECT_FALSE(ends);
  ASSERT_EQ(turns->ended.size(), 1u);
  EXPECT_EQ(turns->ended[0].status, TaskStatus::kRunning);
  ASSERT_EQ(turns->turns.size(), 1u);
  EXPECT_EQ(turns->turns[0].second, "done with step 1");
  EXPECT_EQ(turns->still_running_count(), 0u);
  executor_.Exit(Id(agent), 0);
  EXPECT_TRUE(ends);
}

TEST_F(TaskRegistryTest, NoticesSurviveARestart) {
  std::string a = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  Reset();
  ASSERT_TRUE(registry_->Recover());
  EXPECT_EQ(registry_->TakeNotices("alice").size(), 1u);
}

TEST_F(TaskRegistryTest, LeaseExpiryStopsTheSessionsLiveTasks) {
  registry_->Attach("mcp");
  std::string mine = StartRunning("mcp");
  std::string other = StartRunning("cli");
  registry_->Detach("mcp");
  time_.Advance(std::chrono::minutes(4));
  registry_->Attach("mcp");  // Reattach cancels the lease.
  registry_->Detach("mcp");
  time_.Advance(std::chrono::minutes(4));
  Commit();
  EXPECT_TRUE(executor_.kills.empty());
  time_.Advance(std::chrono::minutes(2));
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(executor_.kills[0].first.ToString(), mine);
  executor_.Exit(Id(mine), 143, ExitCause::kKilled);
  EXPECT_EQ(registry_->Get(mine, "mcp")->detail,
            "killed: session lease expired");
  EXPECT_EQ(registry_->Get(other, "cli")->status, TaskStatus::kRunning);
  // batond's own action, in the audit trail.
  ASSERT_EQ(store_.audit.size(), 1u);
  EXPECT_EQ(store_.audit[0].action, "lease_expired");
  EXPECT_EQ(store_.audit[0].task, mine);
  EXPECT_EQ(store_.audit[0].session, "mcp");
  EXPECT_EQ(store_.audit[0].client, "batond");
}

TEST_F(TaskRegistryTest, LeaseRestartsAfterADaemonRestart) {
  registry_->Attach("mcp");
  std::string mine = StartRunning("mcp");
  Reset();
  ASSERT_TRUE(registry_->Recover());
  EXPECT_EQ(executor_.adopted.size(), 1u);
  time_.Advance(std::chrono::minutes(6));
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
}

TEST_F(TaskRegistryTest, SpawnFailureLeavesACollectableFailedTask) {
  std::optional<Result<TaskRecord>> started;
  registry_->Start(Shell("x"), [&](auto r) { started = r; });
  registry_->OnTaskSpawnFailed(Id("shell-1"),
                               Error{ErrorCode::kSpawnFailed, "chdir: gone"});
  ASSERT_TRUE(started && started->has_value());
  EXPECT_EQ((*started)->status, TaskStatus::kQueued);
  auto task = registry_->Get("shell-1", "");
  EXPECT_EQ(task->status, TaskStatus::kFailed);
  EXPECT_EQ(task->detail, "spawn failed: chdir: gone");
}

TEST_F(TaskRegistryTest, ListShowsLiveAndRecentTerminalInCreationOrder) {
  for (int i = 0; i < 25; ++i) {
    std::string id = StartRunning();
    time_.Advance(milliseconds(1));
    if (i != 3)
      executor_.Exit(Id(id), 0);
  }
  size_t hidden = 0;
  auto tasks = registry_->List("", false, &hidden);
  ASSERT_EQ(tasks->size(), 21u);  // shell-4 live + 20 most recent ended.
  EXPECT_EQ((*tasks)[0].id.ToString(), "shell-4");
  EXPECT_EQ(tasks->back().id.ToString(), "shell-25");
  EXPECT_EQ(hidden, 4u);
  EXPECT_EQ(registry_->List("", true, &hidden)->size(), 25u);
  executor_.Exit(Id("shell-4"), 0);  // The kept count follows.
  ASSERT_EQ(registry_->List("", false, &hidden)->size(), 20u);
  EXPECT_EQ(hidden, 5u);
}

}  // namespace
}  // namespace baton
