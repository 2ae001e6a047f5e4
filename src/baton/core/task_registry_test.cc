#include "baton/core/task_registry_test_fixture.h"

namespace baton {
namespace registry_test {
namespace {

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
TEST_F(TaskRegistryTest, ARemoteJobIsQueuedWhilePendingAndKilledThere) {
  TaskSpec spec = Shell("true");
  spec.remote = RemoteRequest{.executor = "slurm"};
  std::string id;
  registry_->Start(std::move(spec), [&](Result<TaskRecord> r) {
    ASSERT_TRUE(r);
    id = r->id.ToString();
  });
  Commit();
  registry_->OnTaskPlaced(Id(id), Placement{.executor = "slurm",
                                            .job_id = "12",
                                            .partition = "debug",
                                            .state = "PENDING",
                                            .reason = "Resources"});
  Commit();
  TaskRecord task = *registry_->Get(id, "");
  EXPECT_EQ(task.status, TaskStatus::kQueued);
  EXPECT_EQ(task.detail, "slurm job 12 pending (Resources)");
  ASSERT_TRUE(task.placement);
  EXPECT_EQ(task.placement->job_id, "12");
  EXPECT_EQ(store_.flushed.at(Id(id)).placement, task.placement);  // Stored.
  // Pending is not yet spawned, but a job to cancel: the kill goes out.
  ASSERT_TRUE(registry_->Kill(id, "", "", std::nullopt));
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(executor_.kills[0].first, Id(id));
  registry_->OnTaskPlaced(
      Id(id),
      Placement{.executor = "slurm", .job_id = "12", .unreachable = true});
  EXPECT_EQ(registry_->Get(id, "")->status, TaskStatus::kStopping);
}

// A kill that comes while the spawn is in flight is sent once the spawn
// is reported, with the grace it asked for (it was the default's once:
// `kill --grace 300ms` waited 5 s).
TEST_F(TaskRegistryTest, AKillDuringTheSpawnKeepsItsGrace) {
  std::string id;
  registry_->Start(Shell("true"), [&](Result<TaskRecord> r) {
    ASSERT_TRUE(r);
    id = r->id.ToString();
  });
  Commit();
  ASSERT_TRUE(
      registry_->Kill(id, "", "enough", std::chrono::milliseconds(300)));
  Commit();
  EXPECT_TRUE(executor_.kills.empty());  // Nothing to signal yet.
  executor_.Spawn(Id(id));
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(executor_.kills[0].second, std::chrono::milliseconds(300));
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
}  // namespace registry_test
}  // namespace baton
