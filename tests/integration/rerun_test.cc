// `baton rerun` (doc/tasks.md, "Run again") against a real batond: an ended
// task starts again as a new task with what it stored, and the client's
// environment now.
#include <chrono>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class RerunTest : public BatonTest {
 protected:
  // How many tasks `ls --all` shows.
  size_t TaskCount() {
    return Baton({"--json", "ls", "--all"}).json()["tasks"].size();
  }
};

TEST_F(RerunTest, AnEndedTaskRunsAgainWithWhatItStoredAndTheClientsEnvNow) {
  std::string first = Run("echo $MODE $FROM_SHELL; pwd",
                          {"--env", "MODE=fast", "--cwd", "/usr", "--label",
                           "nightly", "--check", "true", "--timeout", "45s"},
                          {{"FROM_SHELL", "then"}});
  Baton({"wait", first});
  auto rerun = Baton({"rerun", first}, {{"FROM_SHELL", "now"}});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  std::string second = rerun.out.substr(0, rerun.out.find('\n'));
  ASSERT_NE(second, first);
  Baton({"wait", second});
  EXPECT_EQ(Baton({"output", second}).out, "fast now\n/usr\n");
  auto task = Status(second);
  EXPECT_EQ(task["rerun_of"], first);
  EXPECT_EQ(task["label"], "nightly");
  EXPECT_EQ(task["env"]["MODE"], "fast");
  EXPECT_EQ(task["checks"], nlohmann::json::array({"true"}));
  EXPECT_EQ(task["timeout_ms"], 45000);
  EXPECT_EQ(task["status"], "completed");
  EXPECT_NE(Baton({"status", second}).out.find("rerun of: " + first),
            std::string::npos);
  // The old one is left as it was.
  EXPECT_FALSE(Status(first).contains("rerun_of"));
  // The audit trail says what happened.
  auto audit = Baton({"audit", "--task", second});
  EXPECT_NE(audit.out.find("rerun of " + first + ": echo"), std::string::npos)
      << audit.out;
}

TEST_F(RerunTest, WaitExitsWithTheNewTasksOwnCode) {
  std::string failed = Run("exit 3");
  Baton({"wait", failed});
  auto again = Baton({"rerun", "--wait", failed});
  EXPECT_EQ(again.exit_code, 3) << again.err;
}

TEST_F(RerunTest, ALiveOrUnknownTaskIsRefusedAndNothingStarts) {
  std::string live = Run("sleep 30");
  size_t before = TaskCount();
  auto busy = Baton({"rerun", live});
  EXPECT_EQ(busy.exit_code, 1);
  EXPECT_NE(busy.err.find("still"), std::string::npos) << busy.err;
  EXPECT_NE(busy.err.find("baton kill " + live), std::string::npos) << busy.err;
  auto unknown = Baton({"rerun", "shell-999"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("shell-999"), std::string::npos) << unknown.err;
  auto missing = Baton({"rerun"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_EQ(TaskCount(), before);
  Baton({"kill", live});
}

}  // namespace
}  // namespace baton::testing
