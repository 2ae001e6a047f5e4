// The Scheduler alone, over a fake host that owns the tasks as the
// registry does (task_registry_schedule_test.cc drives it through the
// registry).
#include "baton/core/scheduler.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "tests/support/fakes.h"

namespace baton {
namespace {

using testing::FakeTimeline;
using testing::InMemoryTaskStore;

class FakeHost : public Scheduler::Host {
 public:
  std::map<TaskId, TaskRecord>& Live() override { return live; }
  Result<TaskRecord> LookupTask(const TaskId& id) override {
    if (auto it = live.find(id); it != live.end())
      return it->second;
    if (auto it = ended.find(id); it != ended.end())
      return it->second;
    return MakeError(ErrorCode::kNotFound, "no " + id.ToString());
  }
  Result<TaskRecord> ResolveTask(std::string_view id,
                                 const std::string&) override {
    auto parsed = TaskId::Parse(id);
    if (!parsed)
      return std::unexpected(parsed.error());
    return LookupTask(*parsed);
  }
  void SaveTask(const TaskRecord& task) override { live[task.id] = task; }
  void StartTask(TaskRecord& task) override {
    started.push_back(task.id.ToString());
  }
  void FailTask(TaskRecord task) override {
    live.erase(task.id);
    failed.push_back(task.id.ToString() + ": " + task.detail);
    ended[task.id] = std::move(task);
  }

  std::map<TaskId, TaskRecord> live;
  std::map<TaskId, TaskRecord> ended;
  std::vector<std::string> started;
  std::vector<std::string> failed;
};

class SchedulerTest : public ::testing::Test {
 protected:
  // A new task of `schedule`, admitted as the registry admits one.
  std::string Submit(Schedule schedule, int64_t number) {
    TaskRecord task;
    task.id = TaskId{TaskKind::kShell, number};
    task.spec.schedule = std::move(schedule);
    task.status = TaskStatus::kQueued;
    task.created_ms = number;
    EXPECT_TRUE(scheduler_.Prepare(task.spec.schedule, ""));
    if (!scheduler_.HoldIfNeeded(task))
      host_.started.push_back(task.id.ToString());
    host_.live[task.id] = task;
    return task.id.ToString();
  }
  void End(const std::string& id, TaskStatus status) {
    TaskId task_id = *TaskId::Parse(id);
    TaskRecord task = host_.live.at(task_id);
    task.status = status;
    host_.live.erase(task_id);
    scheduler_.Remove(task);
    host_.ended[task_id] = task;
  }

  FakeHost host_;
  InMemoryTaskStore store_;
  FakeTimeline timeline_;
  Scheduler scheduler_{&host_, &store_, &timeline_, &timeline_};
};

using Ids = std::vector<std::string>;

TEST_F(SchedulerTest, AFullQueueStartsItsHeldTasksByPriorityAsSlotsFree) {
  ASSERT_TRUE(scheduler_.ChangeQueue(
      {.kind = QueueChange::Kind::kAdd, .name = "build", .max_running = 1}));
  std::string first = Submit({.queue = "build"}, 1);
  std::string low = Submit({.queue = "build"}, 2);
  std::string high = Submit({.queue = "build", .priority = 5}, 3);
  scheduler_.Pass();
  EXPECT_EQ(host_.started, (Ids{first}));
  EXPECT_EQ(scheduler_.HeldDetail(host_.live.at(*TaskId::Parse(low))),
            "queue build: 1 of 1 running");
  End(first, TaskStatus::kCompleted);
  scheduler_.Pass();
  EXPECT_EQ(host_.started, (Ids{first, high}));
  ASSERT_EQ(scheduler_.Queues().size(), 2u);
}

TEST_F(SchedulerTest, AFailedDependencyEndsTheTaskThatWaitedForIt) {
  std::string build = Submit({}, 1);
  std::string deploy = Submit({.after = {build}}, 2);
  scheduler_.Pass();
  EXPECT_EQ(host_.started, (Ids{build}));
  End(build, TaskStatus::kFailed);
  scheduler_.Pass();
  EXPECT_EQ(host_.started, (Ids{build}));
  EXPECT_EQ(host_.failed, (Ids{deploy + ": dependency " + build + " failed"}));
}

TEST_F(SchedulerTest, AFailedCommitTakesAQueueChangeBack) {
  ASSERT_TRUE(scheduler_.ChangeQueue(
      {.kind = QueueChange::Kind::kAdd, .name = "build", .max_running = 1}));
  scheduler_.Committed();
  ASSERT_TRUE(scheduler_.ChangeQueue(
      {.name = "build", .max_running = 4, .paused = true}));
  ASSERT_TRUE(scheduler_.ChangeQueue(
      {.kind = QueueChange::Kind::kAdd, .name = "new", .max_running = 2}));
  scheduler_.RollBack();
  std::vector<QueueView> queues = scheduler_.Queues();
  ASSERT_EQ(queues.size(), 2u);  // "new" is gone.
  EXPECT_EQ(queues[1].record.name, "build");
  EXPECT_EQ(queues[1].record.max_running, 1);
  EXPECT_FALSE(queues[1].record.paused);
}

TEST_F(SchedulerTest, ARetryJoinsItsQueueAtItsTime) {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, 1};
  task.status = TaskStatus::kFailed;
  task.spec.retry = {.retries = 2, .delay_ms = 1000};
  task.attempts.push_back({.detail = "exit code: 1"});
  scheduler_.HoldForRetry(task);
  TaskRecord& held = host_.live.at(task.id);
  EXPECT_TRUE(held.held);
  EXPECT_EQ(held.status, TaskStatus::kQueued);
  scheduler_.Pass();
  EXPECT_TRUE(host_.started.empty());
  timeline_.Advance(std::chrono::milliseconds(1000));
  scheduler_.Pass();
  EXPECT_EQ(host_.started, (Ids{"shell-1"}));
}

}  // namespace
}  // namespace baton
