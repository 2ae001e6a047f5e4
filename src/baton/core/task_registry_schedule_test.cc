// Queues, priorities and dependencies (task_registry_schedule.cc,
// doc/scheduling.md), over the in-memory store and a fake executor.
#include <gtest/gtest.h>

#include "baton/core/task_registry.h"
#include "tests/support/fakes.h"

namespace baton {
namespace {

using testing::FakeExecutor;
using testing::FakeTimeline;
using testing::InMemoryTaskStore;

class ScheduleTest : public ::testing::Test {
 protected:
  ScheduleTest() { Reset(); }

  void Reset() {
    registry_ = std::make_unique<TaskRegistry>(&store_, &executor_, &time_,
                                               &time_, TaskRegistry::Options{});
    executor_.SetListener(registry_.get());
  }

  // Starts a shell task with `schedule`; its id, or the error's message.
  Result<std::string> Start(Schedule schedule,
                            std::vector<std::string> env = {}) {
    TaskSpec spec;
    spec.shell_command = "true";
    spec.cwd = "/tmp";
    spec.schedule = std::move(schedule);
    spec.base_env = std::move(env);
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
  void End(const std::string& id, int code) {
    executor_.Exit(*TaskId::Parse(id), code);
  }
  TaskRecord Get(const std::string& id) { return *registry_->Get(id, ""); }
  void AddQueue(const std::string& name, int64_t max) {
    ASSERT_TRUE(registry_->ChangeQueue(
        {.kind = QueueChange::Kind::kAdd, .name = name, .max_running = max}));
  }

  InMemoryTaskStore store_;
  FakeExecutor executor_;
  FakeTimeline time_;
  std::unique_ptr<TaskRegistry> registry_;
};

using Ids = std::vector<std::string>;

TEST_F(ScheduleTest, AQueueRunsAtMostItsLimitAndStartsTheNextWhenOneEnds) {
  AddQueue("build", 2);
  Commit();
  Ids ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(MustStart({.queue = "build"}));
  Commit();
  EXPECT_EQ(Started(), (Ids{ids[0], ids[1]}));
  EXPECT_EQ(Get(ids[2]).status, TaskStatus::kQueued);
  EXPECT_EQ(Get(ids[2]).detail, "queue build: 2 of 2 running");
  EXPECT_TRUE(Get(ids[2]).held);
  End(ids[0], 0);
  Commit();
  EXPECT_EQ(Started(), (Ids{ids[0], ids[1], ids[2]}));
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
  EXPECT_EQ(Started(), (Ids{plain}));
  EXPECT_EQ(Get(named).detail, "queue default: 1 of 1 running");
  EXPECT_EQ(Get(named).spec.schedule.queue, "");  // Stored as "".
  End(plain, 0);
  Commit();
  EXPECT_EQ(Started(), (Ids{plain, named}));
}

TEST_F(ScheduleTest, HigherPriorityStartsFirstThenTheOlder) {
  AddQueue("one", 1);
  std::string first = MustStart({.queue = "one"});
  std::string low = MustStart({.queue = "one"});
  std::string high = MustStart({.queue = "one", .priority = 5});
  std::string high2 = MustStart({.queue = "one", .priority = 5});
  Commit();
  EXPECT_EQ(Started(), (Ids{first}));
  for (const std::string& id : {first, high, high2}) {
    End(id, 0);
    Commit();
  }
  EXPECT_EQ(Started(), (Ids{first, high, high2, low}));
}

TEST_F(ScheduleTest, AfterStartsOnceAllCompleted) {
  std::string a = MustStart({});
  std::string b = MustStart({});
  std::string c = MustStart({.after = {a, b}});
  Commit();
  EXPECT_EQ(Started(), (Ids{a, b}));
  EXPECT_EQ(Get(c).detail, "after " + a + ", " + b);
  End(a, 0);
  Commit();
  EXPECT_EQ(Started(), (Ids{a, b}));
  End(b, 0);
  Commit();
  EXPECT_EQ(Started(), (Ids{a, b, c}));
  EXPECT_EQ(Get(c).spec.schedule.after, (Ids{a, b}));  // Kept for people.
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
  EXPECT_EQ(Started(), (Ids{a}));
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
  EXPECT_EQ(Started(), (Ids{a, b, c}));
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
  EXPECT_EQ(Started(), (Ids{a}));
}

TEST_F(ScheduleTest, RaisingALimitStartsMoreAtOnce) {
  AddQueue("q", 1);
  Ids ids;
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
  EXPECT_EQ(Started(), (Ids{a}));  // Still only one at a time.
  End(a, 0);
  Commit();
  ASSERT_EQ(Started(), (Ids{a, *b}));
  EXPECT_EQ(executor_.started.back().spec.base_env,
            (Ids{"SECRETISH=1", "PATH=/x"}));
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
  EXPECT_EQ(Started(), (Ids{a}));  // b never runs.
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
  EXPECT_EQ(Started(), (Ids{a, c}));
  auto queues = registry_->Queues();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[1].record.name, "q");
  EXPECT_EQ(queues[1].running, 1);
  EXPECT_EQ(queues[1].queued, 0);
}

}  // namespace
}  // namespace baton
