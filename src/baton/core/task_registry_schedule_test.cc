// Queues, priorities, dependencies and retries (core/scheduler.h,
// doc/scheduling.md), over the in-memory store and a fake executor.
#include <gtest/gtest.h>

#include "baton/core/task_registry_test_fixture.h"

namespace baton {
namespace {

using registry_test::RegistryHarness;

using testing::FakeExecutor;
using testing::FakeTimeline;
using testing::InMemoryTaskStore;

class ScheduleTest : public RegistryHarness {
 protected:
  // Starts a shell task with `schedule`; its id, or the error's message.
  Result<std::string> Start(Schedule schedule,
                            std::vector<std::string> env = {},
                            RetryPolicy retry = {}) {
    TaskSpec spec;
    spec.shell_command = "true";
    spec.cwd = "/tmp";
    spec.schedule = std::move(schedule);
    spec.base_env = std::move(env);
    spec.retry = retry;
    Result<std::string> id = std::unexpected(Error{});
    registry_->Start(std::move(spec), [&](Result<TaskRecord> task) {
      if (task) {
        id = task->id.ToString();
      } else {
        id = std::unexpected(task.error());
      }
    });
    return id;
  }
  std::string MustStart(Schedule schedule) {
    auto id = Start(std::move(schedule));
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or("");
  }

  void Commit() { ASSERT_TRUE(registry_->Commit()); }
  // The ids the executor was asked to start, in order.
  std::vector<std::string> Started() const {
    std::vector<std::string> ids;
    for (const TaskRecord& task : executor_.started)
      ids.push_back(task.id.ToString());
    return ids;
  }
  // Spawns every started task and ends `id` with `code`.
  void End(const std::string& id, int code,
           ExitCause cause = ExitCause::kNatural) {
    executor_.Exit(*TaskId::Parse(id), code, cause);
  }
  // Starts a task of the default queue that retries `retries` times,
  // first after `delay_ms`; its id.
  std::string StartRetried(int64_t retries, int64_t delay_ms,
                           Schedule schedule = {},
                           std::vector<std::string> env = {}) {
    auto id = Start(std::move(schedule), std::move(env),
                    {.retries = retries, .delay_ms = delay_ms});
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or("");
  }
  TaskRecord Get(const std::string& id) { return *registry_->Get(id, ""); }
  void AddQueue(const std::string& name, int64_t max) {
    ASSERT_TRUE(registry_->ChangeQueue(
        {.kind = QueueChange::Kind::kAdd, .name = name, .max_running = max}));
  }
};

using IdList = std::vector<std::string>;

TEST_F(ScheduleTest, AQueueRunsAtMostItsLimitAndStartsTheNextWhenOneEnds) {
  AddQueue("build", 2);
  Commit();
  IdList ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(MustStart({.queue = "build"}));
  Commit();
  EXPECT_EQ(Started(), (IdList{ids[0], ids[1]}));
  EXPECT_EQ(Get(ids[2]).status, TaskStatus::kQueued);
  EXPECT_EQ(Get(ids[2]).detail, "queue build: 2 of 2 running");
  EXPECT_TRUE(Get(ids[2]).held);
  End(ids[0], 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{ids[0], ids[1], ids[2]}));
  EXPECT_EQ(Get(ids[2]).detail, "");
  EXPECT_FALSE(store_.flushed.at(*TaskId::Parse(ids[2])).held);
  End(ids[1], 1);  // A failure frees its slot too.
  Commit();
  EXPECT_EQ(Started().size(), 4u);
}

TEST_F(ScheduleTest, TheDefaultQueueIsNamedDefaultAndCanBeLimited) {
  ASSERT_TRUE(registry_->ChangeQueue({.name = "default", .max_running = 1}));
  std::string plain = MustStart({});
  std::string named = MustStart({.queue = "default"});
  Commit();
  EXPECT_EQ(Started(), (IdList{plain}));
  EXPECT_EQ(Get(named).detail, "queue default: 1 of 1 running");
  EXPECT_EQ(Get(named).spec.schedule.queue, "");  // Stored as "".
  End(plain, 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{plain, named}));
}

TEST_F(ScheduleTest, AQueuesLimitsHoldItsTasksThatGiveNone) {
  ASSERT_TRUE(registry_->ChangeQueue({.kind = QueueChange::Kind::kAdd,
                                      .name = "big",
                                      .memory_bytes = 1 << 30,
                                      .cpu_millis = 2000}));
  std::string id = MustStart({.queue = "big"});
  EXPECT_EQ(Get(id).spec.limits,
            (ResourceLimits{.memory_bytes = 1 << 30, .cpu_millis = 2000}));
  // A change holds the tasks submitted after it; 0 removes a limit.
  ASSERT_TRUE(registry_->ChangeQueue({.name = "big", .cpu_millis = 0}));
  std::string later = MustStart({.queue = "big"});
  EXPECT_EQ(Get(later).spec.limits, (ResourceLimits{.memory_bytes = 1 << 30}));
  EXPECT_EQ(Get(id).spec.limits.cpu_millis, 2000);
  EXPECT_FALSE(registry_->ChangeQueue({.name = "big", .pids = -1}).has_value());
}

TEST_F(ScheduleTest, HigherPriorityStartsFirstThenTheOlder) {
  AddQueue("one", 1);
  std::string first = MustStart({.queue = "one"});
  std::string low = MustStart({.queue = "one"});
  std::string high = MustStart({.queue = "one", .priority = 5});
  std::string high2 = MustStart({.queue = "one", .priority = 5});
  Commit();
  EXPECT_EQ(Started(), (IdList{first}));
  for (const std::string& id : {first, high, high2}) {
    End(id, 0);
    Commit();
  }
  EXPECT_EQ(Started(), (IdList{first, high, high2, low}));
}

TEST_F(ScheduleTest, AfterStartsOnceAllCompleted) {
  std::string a = MustStart({});
  std::string b = MustStart({});
  std::string c = MustStart({.after = {a, b}});
  Commit();
  EXPECT_EQ(Started(), (IdList{a, b}));
  EXPECT_EQ(Get(c).detail, "after " + a + ", " + b);
  End(a, 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{a, b}));
  End(b, 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{a, b, c}));
  EXPECT_EQ(Get(c).spec.schedule.after, (IdList{a, b}));  // Kept for people.
}

TEST_F(ScheduleTest, AFailedDependencyFailsTheTaskWithoutRunningIt) {
  std::string a = MustStart({});
  std::string b = MustStart({.after = {a}});
  std::string c = MustStart({.after = {b}});
  Commit();
  End(a, 3);
  Commit();
  EXPECT_EQ(Get(b).status, TaskStatus::kFailed);
  EXPECT_EQ(Get(b).detail, "dependency " + a + " failed");
  // The chain goes down in the same commit: c waited for b.
  EXPECT_EQ(Get(c).status, TaskStatus::kFailed);
  EXPECT_EQ(Get(c).detail, "dependency " + b + " failed");
  EXPECT_EQ(Started(), (IdList{a}));
  // A dependency that had failed already at submit fails it too.
  std::string d = MustStart({.after = {a}});
  Commit();
  EXPECT_EQ(Get(d).detail, "dependency " + a + " failed");
}

TEST_F(ScheduleTest, AfterAnyStartsAtTheFirstEndHoweverItEnded) {
  std::string a = MustStart({});
  std::string b = MustStart({});
  std::string c = MustStart({.after = {a, b}, .after_any = true});
  Commit();
  EXPECT_EQ(Get(c).detail, "after any of " + a + ", " + b);
  End(b, 1);
  Commit();
  EXPECT_EQ(Started(), (IdList{a, b, c}));
}

TEST_F(ScheduleTest, UnknownQueuesAndTasksAreRefusedAndNothingIsStored) {
  auto no_queue = Start({.queue = "nope"});
  ASSERT_FALSE(no_queue);
  EXPECT_EQ(no_queue.error().code, ErrorCode::kNotFound);
  EXPECT_NE(no_queue.error().message.find("baton queue add nope --max N"),
            std::string::npos)
      << no_queue.error().message;
  auto no_task = Start({.after = {"shell-41"}});
  ASSERT_FALSE(no_task);
  EXPECT_EQ(no_task.error().code, ErrorCode::kNotFound);
  auto twice = Start({.after = {"shell-1", "shell-1"}});
  ASSERT_FALSE(twice);
  auto any_alone = Start({.after_any = true});
  ASSERT_FALSE(any_alone);
  EXPECT_EQ(any_alone.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(store_.tasks.empty());
  auto exists = registry_->ChangeQueue(
      {.kind = QueueChange::Kind::kAdd, .name = "default"});
  ASSERT_FALSE(exists);
  EXPECT_EQ(exists.error().code, ErrorCode::kAlreadyExists);
  auto bad =
      registry_->ChangeQueue({.kind = QueueChange::Kind::kAdd, .name = "a b"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ScheduleTest, APausedQueueStartsNothingUntilResumed) {
  AddQueue("q", 0);
  ASSERT_TRUE(registry_->ChangeQueue({.name = "q", .paused = true}));
  std::string a = MustStart({.queue = "q"});
  Commit();
  EXPECT_TRUE(Started().empty());
  EXPECT_EQ(Get(a).detail, "queue q: paused");
  ASSERT_TRUE(registry_->ChangeQueue({.name = "q", .paused = false}));
  Commit();
  EXPECT_EQ(Started(), (IdList{a}));
}

TEST_F(ScheduleTest, RaisingALimitStartsMoreAtOnce) {
  AddQueue("q", 1);
  IdList ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(MustStart({.queue = "q"}));
  Commit();
  EXPECT_EQ(Started().size(), 1u);
  ASSERT_TRUE(registry_->ChangeQueue({.name = "q", .max_running = 3}));
  Commit();
  EXPECT_EQ(Started(), ids);
}

TEST_F(ScheduleTest, HeldTasksSurviveARestartWithTheirEnvironment) {
  AddQueue("q", 1);
  std::string a = MustStart({.queue = "q"});
  auto b = Start({.queue = "q"}, {"SECRETISH=1", "PATH=/x"});
  ASSERT_TRUE(b);
  Commit();
  executor_.Spawn(*TaskId::Parse(a));
  Reset();
  ASSERT_TRUE(registry_->Recover());
  // The held task is not the executor's to adopt; the running one is.
  ASSERT_EQ(executor_.adopted.size(), 1u);
  EXPECT_EQ(executor_.adopted[0].id.ToString(), a);
  Commit();
  EXPECT_EQ(Started(), (IdList{a}));  // Still only one at a time.
  End(a, 0);
  Commit();
  ASSERT_EQ(Started(), (IdList{a, *b}));
  EXPECT_EQ(executor_.started.back().spec.base_env,
            (IdList{"SECRETISH=1", "PATH=/x"}));
  // Once started, the environment is no longer stored.
  EXPECT_TRUE(store_.flushed.at(*TaskId::Parse(*b)).spec.base_env.empty());
}

TEST_F(ScheduleTest, KillingAHeldTaskEndsItAndFailsItsDependents) {
  AddQueue("q", 1);
  std::string a = MustStart({.queue = "q"});
  std::string b = MustStart({.queue = "q"});
  std::string c = MustStart({.after = {b}});
  Commit();
  ASSERT_TRUE(registry_->Kill(b, "", "not needed", std::nullopt));
  EXPECT_EQ(Get(b).status, TaskStatus::kKilled);
  EXPECT_EQ(Get(b).detail, "killed before it started");
  Commit();
  EXPECT_EQ(Get(c).status, TaskStatus::kFailed);
  EXPECT_EQ(Get(c).detail, "dependency " + b + " was killed");
  End(a, 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{a}));  // b never runs.
}

TEST_F(ScheduleTest, AFailedCommitTakesBackAHeldTaskAndItsPlace) {
  AddQueue("q", 1);
  std::string a = MustStart({.queue = "q"});
  Commit();
  store_.fail_flush = Error{ErrorCode::kIo, "disk full"};
  std::string b = MustStart({.queue = "q"});
  std::vector<TaskId> dropped;
  EXPECT_FALSE(registry_->Commit(&dropped));
  ASSERT_EQ(dropped.size(), 1u);
  store_.fail_flush.reset();
  std::string c = MustStart({.queue = "q"});
  Commit();
  End(a, 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{a, c}));
  auto queues = registry_->Queues();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[1].record.name, "q");
  EXPECT_EQ(queues[1].running, 1);
  EXPECT_EQ(queues[1].queued, 0);
}

TEST(RetryDelayTest, DoublesFromTheDelayUpToTenMinutesOrTheDelay) {
  RetryPolicy policy{.retries = 20, .delay_ms = 5000};
  EXPECT_EQ(RetryDelayMs(policy, 1), 5000);
  EXPECT_EQ(RetryDelayMs(policy, 2), 10000);
  EXPECT_EQ(RetryDelayMs(policy, 3), 20000);
  EXPECT_EQ(RetryDelayMs(policy, 8), 600000);  // 640 s, capped.
  EXPECT_EQ(RetryDelayMs(policy, 20), 600000);
  EXPECT_EQ(RetryDelayMs({.retries = 3, .delay_ms = 0}, 3), 0);
  policy.delay_ms = 600000;
  EXPECT_EQ(RetryDelayMs(policy, 4), 600000);
}

TEST(RetryDelayTest, RunNamesNameEachAttemptOnce) {
  TaskRecord task;
  task.id = {TaskKind::kShell, 7};
  EXPECT_EQ(RunName(task), "shell-7");
  task.attempts.resize(2);
  EXPECT_EQ(RunName(task), "shell-7.3");
  EXPECT_EQ(TaskIdOfRun("shell-7.3")->ToString(), "shell-7");
  EXPECT_EQ(TaskIdOfRun("shell-7")->ToString(), "shell-7");
  for (const char* bad : {"shell-7.", "shell-7.1", "shell-7.x", "shell-7.2.2"})
    EXPECT_FALSE(TaskIdOfRun(bad)) << bad;
}

TEST_F(ScheduleTest, AFailedAttemptIsRecordedAndTheTaskRunsAgainAfterItsDelay) {
  std::string id = StartRetried(2, 5000);
  Commit();
  TaskId task_id = *TaskId::Parse(id);
  executor_.Spawn(task_id);
  executor_.output_sizes[task_id] = 40;
  bool waited = false;
  ASSERT_TRUE(registry_->Wait({id}, "", false, std::nullopt,
                              [&](WaitResult) { waited = true; }));
  End(id, 3);
  Commit();
  // Not an end: no wait answered, no notice, held until its retry.
  EXPECT_FALSE(waited);
  TaskRecord held = Get(id);
  EXPECT_EQ(held.status, TaskStatus::kQueued);
  EXPECT_TRUE(held.held);
  EXPECT_EQ(held.detail, "retry 1 of 2 in 5s (attempt 1: exit code: 3)");
  ASSERT_EQ(held.attempts.size(), 1u);
  EXPECT_EQ(held.attempts[0].exit_code, 3);
  EXPECT_EQ(held.attempts[0].output_from, 0);
  EXPECT_EQ(held.attempts[0].output_to, 40);
  EXPECT_FALSE(held.exit_code);
  EXPECT_EQ(store_.flushed.at(task_id).attempts.size(), 1u);
  time_.Advance(std::chrono::milliseconds(4999));
  Commit();
  EXPECT_EQ(Started().size(), 1u);
  time_.Advance(std::chrono::milliseconds(1));
  Commit();
  ASSERT_EQ(Started(), (IdList{id, id}));
  EXPECT_EQ(RunName(executor_.started.back()), id + ".2");
  EXPECT_EQ(Get(id).detail, "attempt 2 of 3");
  // The second retry waits twice as long.
  executor_.Spawn(task_id);
  executor_.output_sizes[task_id] = 100;
  End(id, 1);
  Commit();
  EXPECT_EQ(Get(id).detail, "retry 2 of 2 in 10s (attempt 2: exit code: 1)");
  EXPECT_EQ(Get(id).attempts[1].output_from, 40);
  EXPECT_EQ(Get(id).attempts[1].output_to, 100);
  time_.Advance(std::chrono::seconds(10));
  Commit();
  ASSERT_EQ(Started().size(), 3u);
  executor_.Spawn(task_id);
  End(id, 0);
  Commit();
  EXPECT_TRUE(waited);
  TaskRecord done = Get(id);
  EXPECT_EQ(done.status, TaskStatus::kCompleted);
  EXPECT_EQ(done.detail, "exit code: 0; attempt 3 of 3");
  EXPECT_EQ(done.attempts.size(), 2u);
}

TEST_F(ScheduleTest, TheLastAttemptsFailureEndsTheTaskAndATimeoutIsRetried) {
  std::string id = StartRetried(1, 0);
  Commit();
  executor_.Spawn(*TaskId::Parse(id));
  End(id, 0, ExitCause::kTimedOut);
  Commit();
  EXPECT_EQ(Get(id).attempts.size(), 1u);
  time_.Advance(std::chrono::milliseconds(0));
  Commit();
  ASSERT_EQ(Started().size(), 2u);
  executor_.Spawn(*TaskId::Parse(id));
  End(id, 2);
  Commit();
  EXPECT_EQ(Get(id).status, TaskStatus::kFailed);
  EXPECT_EQ(Get(id).detail, "exit code: 2; attempt 2 of 2");
  EXPECT_EQ(Get(id).exit_code, 2);
}

TEST_F(ScheduleTest, AKillStopsTheRetriesWhetherItRunsOrWaits) {
  std::string running = StartRetried(3, 1000);
  std::string waiting = StartRetried(3, 1000);
  Commit();
  for (const std::string& id : {running, waiting})
    executor_.Spawn(*TaskId::Parse(id));
  End(waiting, 1);
  Commit();
  ASSERT_TRUE(registry_->Kill(running, "", "enough", std::nullopt));
  ASSERT_TRUE(registry_->Kill(waiting, "", "enough", std::nullopt));
  Commit();
  End(running, 1);  // Its end after the signal.
  Commit();
  EXPECT_EQ(Get(running).status, TaskStatus::kKilled);
  EXPECT_TRUE(Get(running).attempts.empty());
  EXPECT_EQ(Get(waiting).status, TaskStatus::kKilled);
  EXPECT_EQ(Get(waiting).detail, "killed while it waited to retry");
  time_.Advance(std::chrono::seconds(5));
  Commit();
  EXPECT_EQ(Started().size(), 2u);  // Neither ran again.
}

TEST_F(ScheduleTest, ARetryGivesUpItsSlotAndQueuesAgain) {
  AddQueue("one", 1);
  std::string flaky = StartRetried(1, 1000, {.queue = "one"});
  std::string next = MustStart({.queue = "one"});
  Commit();
  executor_.Spawn(*TaskId::Parse(flaky));
  End(flaky, 1);
  Commit();
  // Its slot went to the next one while it waits.
  EXPECT_EQ(Started(), (IdList{flaky, next}));
  time_.Advance(std::chrono::seconds(1));
  Commit();
  EXPECT_EQ(Get(flaky).detail, "queue one: 1 of 1 running");
  End(next, 0);
  Commit();
  EXPECT_EQ(Started(), (IdList{flaky, next, flaky}));
}

TEST_F(ScheduleTest, ARetrySurvivesARestartWithItsEnvironment) {
  std::string id = StartRetried(2, 3000, {}, {"PATH=/x"});
  Commit();
  // The environment stays stored while a retry may need it.
  EXPECT_EQ(store_.flushed.at(*TaskId::Parse(id)).spec.base_env,
            (IdList{"PATH=/x"}));
  executor_.Spawn(*TaskId::Parse(id));
  End(id, 1);
  Commit();
  time_.Advance(std::chrono::seconds(1));
  Reset();
  ASSERT_TRUE(registry_->Recover());
  EXPECT_TRUE(executor_.adopted.empty());  // Held: nothing to adopt.
  time_.Advance(std::chrono::milliseconds(1999));
  Commit();
  EXPECT_EQ(Started().size(), 1u);
  time_.Advance(std::chrono::milliseconds(1));
  Commit();
  ASSERT_EQ(Started().size(), 2u);
  EXPECT_EQ(executor_.started.back().spec.base_env, (IdList{"PATH=/x"}));
  EXPECT_EQ(executor_.started.back().attempts.size(), 1u);
}

TEST_F(ScheduleTest, RetriesAreRefusedForAgentsAndOutOfRange) {
  TaskSpec spec;
  spec.shell_command = "true";
  spec.cwd = "/tmp";
  spec.retry.retries = kMaxRetries + 1;
  std::string message;
  registry_->Start(spec, [&](Result<TaskRecord> task) {
    message = task ? "" : task.error().message;
  });
  EXPECT_EQ(message, "retries must be 0 to 100, not 101");
  spec.retry.retries = 1;
  spec.retry.delay_ms = kMaxRetryBackoffMs + 1;
  registry_->Start(spec, [&](Result<TaskRecord> task) {
    message = task ? "" : task.error().message;
  });
  EXPECT_EQ(message, "the retry delay must be 0 to 10 minutes, e.g. 5 s");
  EXPECT_EQ(registry_->live_count(), 0u);
  // An agent may be retried: it starts again from its brief, which its
  // worker writes to the next attempt's stdin (doc/agents.md, "Retries").
  spec.retry.delay_ms = 0;
  spec.kind = TaskKind::kAgent;
  spec.agent = AgentSpec{};
  spec.stdin_pipe = true;
  registry_->Start(spec, [&](Result<TaskRecord> task) {
    message = task ? "" : task.error().message;
  });
  EXPECT_EQ(message, "");
  EXPECT_EQ(registry_->live_count(), 1u);
}

}  // namespace
}  // namespace baton
