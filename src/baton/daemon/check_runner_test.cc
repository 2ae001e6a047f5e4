#include "baton/daemon/check_runner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>

#include "baton/util/file_util.h"
#include "tests/support/fakes.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

class CheckRunnerTest : public ::testing::Test {
 protected:
  TaskRecord Task(int64_t number, std::vector<std::string> checks) {
    TaskRecord task;
    task.id = TaskId{TaskKind::kShell, number};
    task.spec.shell_command = "true";
    task.spec.cwd = work_;
    task.spec.checks = std::move(checks);
    return task;
  }

  // TakeBefore, to its `made`; whether `made` ran inside the call.
  Result<TaskRecord> TakeBefore(TaskRecord task, bool* at_once) {
    std::optional<Result<TaskRecord>> made;
    checks_.TakeBefore(std::move(task),
                       [&](Result<TaskRecord> r) { made = std::move(r); });
    *at_once = made.has_value();
    for (int i = 0; i < 1000 && !made; ++i)
      loop_.RunOnce(milliseconds(10));
    EXPECT_TRUE(made) << "not made in 10 s";
    return made.value_or(MakeError(ErrorCode::kInternal, "not made"));
  }

  testing::TempDir tmp_;
  std::string work_ = tmp_.MakeDir("work");
  EventLoop loop_;
  SystemClock clock_;
  testing::InMemoryTaskStore store_;
  testing::FolderExecutor executor_{tmp_.path() + "/tasks"};
  TaskRegistry registry_{&store_, &executor_, &loop_, &clock_,
                         TaskRegistry::Options{}};
  CheckRunner checks_{&loop_, &executor_, &registry_};
};

// Issue 36, part 3: the "before" scan of a task with checks (up to 20,000
// files) ran on batond's loop and held every client meanwhile. It is taken
// on a thread: the task is made from the loop, once its "before" is on
// disk, and a task without checks pays nothing.
TEST_F(CheckRunnerTest, TheBeforeScanIsTakenOffTheLoop) {
  std::ofstream{work_ + "/kept.txt"} << "x";
  bool at_once = true;
  auto made = TakeBefore(Task(1, {"true"}), &at_once);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_FALSE(at_once);
  EXPECT_EQ(made->id.ToString(), "shell-1");
  auto before = ReadFile(executor_.TaskDir(made->id) + "/before.json");
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_NE(before->find("kept.txt"), std::string::npos) << *before;

  made = TakeBefore(Task(2, {}), &at_once);
  ASSERT_TRUE(made);
  EXPECT_TRUE(at_once);
  EXPECT_FALSE(ReadFile(executor_.TaskDir(made->id) + "/before.json"));
}

}  // namespace
}  // namespace baton
