// Editing a held task (task_registry_edit.cc, doc/tasks.md, "Editing a
// queued task"), over the in-memory store and a fake executor.
#include <gtest/gtest.h>

#include <cerrno>

#include "baton/core/task_registry_test_fixture.h"

namespace baton {
namespace {

using registry_test::RegistryHarness;

class EditTest : public RegistryHarness {
 protected:
  std::string MustStart(Schedule schedule, std::string owner = "") {
    TaskSpec spec;
    spec.shell_command = "true";
    spec.cwd = "/tmp";
    spec.owner = std::move(owner);
    spec.schedule = std::move(schedule);
    std::string id;
    registry_->Start(std::move(spec), [&](Result<TaskRecord> task) {
      ASSERT_TRUE(task) << task.error().message;
      id = task->id.ToString();
    });
    return id;
  }
  void Commit() { ASSERT_TRUE(registry_->Commit()); }
  std::vector<std::string> Started() const {
    std::vector<std::string> ids;
    for (const TaskRecord& task : executor_.started)
      ids.push_back(task.id.ToString());
    return ids;
  }
  TaskRecord Get(const std::string& id) { return *registry_->Get(id, ""); }
  // Edits `id` as `change` says, as session `session`.
  template <class Change>
  Result<TaskRecord> Edit(const std::string& id, Change change,
                          const std::string& session = "") {
    auto task = registry_->Editable(id, session);
    if (!task)
      return task;
    TaskSpec spec = task->spec;
    change(spec);
    return registry_->Edit(task->id, std::move(spec), session);
  }
  void AddQueue(const std::string& name, int64_t max) {
    ASSERT_TRUE(registry_->ChangeQueue(
        {.kind = QueueChange::Kind::kAdd, .name = name, .max_running = max}));
  }
};

using IdList = std::vector<std::string>;

TEST_F(EditTest, ANewPriorityPlacesAHeldTaskAheadAndIsStored) {
  AddQueue("build", 1);
  std::string first = MustStart({.queue = "build"});
  std::string second = MustStart({.queue = "build"});
  std::string third = MustStart({.queue = "build"});
  Commit();
  ASSERT_EQ(Started(), (IdList{first}));
  auto edited = Edit(third, [](TaskSpec& spec) { spec.schedule.priority = 5; });
  ASSERT_TRUE(edited) << edited.error().message;
  EXPECT_EQ(edited->status, TaskStatus::kQueued);
  EXPECT_EQ(edited->detail, "queue build: 1 of 1 running");
  Commit();
  EXPECT_EQ(store_.flushed.at(*TaskId::Parse(third)).spec.schedule.priority, 5);
  executor_.Exit(*TaskId::Parse(first), 0, ExitCause::kNatural);
  Commit();
  EXPECT_EQ(Started(), (IdList{first, third}));
}

TEST_F(EditTest, AnotherQueueWithRoomStartsItAtTheNextCommit) {
  AddQueue("build", 1);
  AddQueue("fast", 1);
  std::string running = MustStart({.queue = "build"});
  std::string held = MustStart({.queue = "build"});
  Commit();
  ASSERT_EQ(Started(), (IdList{running}));
  auto edited =
      Edit(held, [](TaskSpec& spec) { spec.schedule.queue = "fast"; });
  ASSERT_TRUE(edited) << edited.error().message;
  Commit();
  EXPECT_EQ(Started(), (IdList{running, held}));
  EXPECT_FALSE(Get(held).held);
}

// A failed commit (a full disk) takes the edit back whole, and the start
// the same batch made of the edited task: nothing runs that the client was
// told failed, and the task waits again where it was.
TEST_F(EditTest, AFailedCommitTakesTheEditAndItsStartBack) {
  AddQueue("build", 1);
  AddQueue("fast", 1);
  std::string running = MustStart({.queue = "build"});
  std::string held = MustStart({.queue = "build"});
  Commit();
  ASSERT_EQ(Started(), (IdList{running}));
  auto edited = Edit(held, [](TaskSpec& spec) {
    spec.schedule.queue = "fast";  // Room there: the commit's pass starts it.
    spec.label = "moved";
  });
  ASSERT_TRUE(edited) << edited.error().message;
  store_.fail_flush = Error{ErrorCode::kIo, "disk full", ENOSPC};
  EXPECT_FALSE(registry_->Commit());
  store_.fail_flush.reset();
  TaskRecord back = Get(held);
  EXPECT_TRUE(back.held);
  EXPECT_EQ(back.spec.schedule.queue, "build");
  EXPECT_EQ(back.spec.label, "");
  EXPECT_EQ(back.detail, "queue build: 1 of 1 running");
  Commit();
  EXPECT_EQ(Started(), (IdList{running}));  // Its start never went out.
  EXPECT_EQ(store_.flushed.at(*TaskId::Parse(held)).spec.schedule.queue,
            "build");
  // It is in its old place: the old queue's slot starts it.
  executor_.Exit(*TaskId::Parse(running), 0, ExitCause::kNatural);
  Commit();
  EXPECT_EQ(Started(), (IdList{running, held}));
  EXPECT_EQ(executor_.started.back().spec.label, "");
}

TEST_F(EditTest, AfterIsReplacedAndATaskThatWouldWaitForItselfIsRefused) {
  AddQueue("build", 1);
  std::string running = MustStart({.queue = "build"});
  std::string held = MustStart({.after = {running}});
  std::string later = MustStart({.after = {held}});
  Commit();
  EXPECT_EQ(Get(held).detail, "after " + running);
  auto itself =
      Edit(held, [&](TaskSpec& spec) { spec.schedule.after = {held}; });
  ASSERT_FALSE(itself);
  EXPECT_NE(itself.error().message.find("would wait for itself"),
            std::string::npos)
      << itself.error().message;
  auto cycle =
      Edit(held, [&](TaskSpec& spec) { spec.schedule.after = {later}; });
  ASSERT_FALSE(cycle);
  EXPECT_NE(cycle.error().message.find("through the tasks it names"),
            std::string::npos)
      << cycle.error().message;
  EXPECT_EQ(Get(held).spec.schedule.after, (IdList{running}));
  // Waiting for nothing any more: it starts at once.
  auto freed = Edit(held, [](TaskSpec& spec) { spec.schedule.after.clear(); });
  ASSERT_TRUE(freed) << freed.error().message;
  Commit();
  EXPECT_EQ(Started(), (IdList{running, held}));
  // The one it waited for ending does not start it twice.
  executor_.Exit(*TaskId::Parse(running), 0, ExitCause::kNatural);
  Commit();
  EXPECT_EQ(Started(), (IdList{running, held}));
}

TEST_F(EditTest, OnlyAHeldTaskOfTheSessionWithGoodValuesIsEdited) {
  AddQueue("build", 1);
  std::string running = MustStart({.queue = "build"});
  std::string held = MustStart({.queue = "build"});
  std::string owned = MustStart({.queue = "build"}, "alice");
  Commit();
  auto started = Edit(running, [](TaskSpec& spec) { spec.label = "x"; });
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().message,
            running +
                " is running: only a queued task can be edited; once "
                "it ended, baton rerun " +
                running + " starts a copy (stop it first: baton kill " +
                running + ")");
  auto other = Edit(
      owned, [](TaskSpec& spec) { spec.label = "x"; }, "bob");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ErrorCode::kPermissionDenied);
  auto queue = Edit(held, [](TaskSpec& spec) {
    spec.label = "renamed";
    spec.schedule.queue = "nope";
  });
  ASSERT_FALSE(queue);
  EXPECT_EQ(queue.error().code, ErrorCode::kNotFound);
  auto cwd = Edit(held, [](TaskSpec& spec) { spec.cwd = "relative"; });
  ASSERT_FALSE(cwd);
  EXPECT_EQ(cwd.error().code, ErrorCode::kInvalidArgument);
  // Nothing changed.
  EXPECT_EQ(Get(held).spec.label, "");
  EXPECT_EQ(Get(held).spec.schedule.queue, "build");
  EXPECT_EQ(Get(held).spec.cwd, "/tmp");
  executor_.Exit(*TaskId::Parse(running), 0, ExitCause::kNatural);
  Commit();
  EXPECT_EQ(Started(), (IdList{running, held}));
}

}  // namespace
}  // namespace baton
