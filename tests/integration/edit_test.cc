// `baton edit` (doc/tasks.md, "Editing a queued task") against a real
// batond: a held task takes new values before it starts and runs with
// them; a task that started or a bad value is refused and nothing changes
// (another session's task: the registry's test, task_registry_edit_test).
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class EditTest : public BatonTest {
 protected:
  // A queue of one, busy with a sleeper: what is run into it next is held.
  std::string FillQueue() {
    auto added = Baton({"queue", "add", "one", "--max", "1"});
    EXPECT_EQ(added.exit_code, 0) << added.err;
    return Run("sleep 30", {"--queue", "one"});
  }
};

TEST_F(EditTest, AHeldTaskRunsWithItsNewValues) {
  std::string sleeper = FillQueue();
  std::string held = Run("echo $MODE before", {"--queue", "one", "--label",
                                               "old", "--env", "MODE=first"});
  ASSERT_EQ(Status(held)["status"], "queued");
  auto edited =
      Baton({"edit", held, "--label", "new", "--priority", "3", "--env",
             "MODE=edited", "--timeout", "45s", "--", "echo $MODE after"});
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_EQ(edited.out, held + " edited: queued (queue one: 1 of 1 running)\n");
  auto task = Status(held);
  EXPECT_EQ(task["status"], "queued");
  EXPECT_EQ(task["label"], "new");
  EXPECT_EQ(task["env"]["MODE"], "edited");
  EXPECT_EQ(task["timeout_ms"], 45000);
  EXPECT_EQ(task["command"], "echo $MODE after");
  EXPECT_EQ(task["schedule"]["priority"], 3);
  // The audit trail says what changed (names of variables, not values).
  auto audit = Baton({"audit", "--task", held});
  EXPECT_NE(audit.out.find("edit"), std::string::npos) << audit.out;
  EXPECT_NE(audit.out.find("label 'old' -> 'new'; priority 0 -> 3"),
            std::string::npos)
      << audit.out;
  EXPECT_EQ(audit.out.find("MODE=edited"), std::string::npos) << audit.out;
  // Out of its queue: it starts at once, with the new command.
  auto moved = Baton({"edit", held, "--queue", "default"});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  Baton({"wait", held});
  EXPECT_EQ(Baton({"output", held}).out, "edited after\n");
  EXPECT_EQ(Status(held)["status"], "completed");
  Baton({"kill", sleeper});
}

TEST_F(EditTest, AStartedTaskABadValueOrNothingIsRefusedAndNothingChanges) {
  std::string sleeper = FillQueue();
  std::string held = Run("true", {"--queue", "one", "--label", "kept"});
  WaitStarted(sleeper);
  auto started = Baton({"edit", sleeper, "--label", "x"});
  EXPECT_EQ(started.exit_code, 1);
  EXPECT_NE(started.err.find(sleeper +
                             " is running: only a queued task can be edited"),
            std::string::npos)
      << started.err;
  EXPECT_NE(started.err.find("baton rerun " + sleeper), std::string::npos)
      << started.err;
  auto folder = Baton({"edit", held, "--label", "y", "--cwd", "/no/such/dir"});
  EXPECT_NE(folder.exit_code, 0);
  EXPECT_NE(folder.err.find("/no/such/dir"), std::string::npos) << folder.err;
  auto queue = Baton({"edit", held, "--label", "y", "--queue", "nope"});
  EXPECT_NE(queue.exit_code, 0);
  EXPECT_NE(queue.err.find("baton queue add nope"), std::string::npos)
      << queue.err;
  auto itself = Baton({"edit", held, "--after", held});
  EXPECT_NE(itself.exit_code, 0);
  EXPECT_NE(itself.err.find("would wait for itself"), std::string::npos)
      << itself.err;
  auto nothing = Baton({"edit", held});
  EXPECT_NE(nothing.exit_code, 0);
  EXPECT_NE(nothing.err.find("nothing to change"), std::string::npos)
      << nothing.err;
  auto task = Status(held);
  EXPECT_EQ(task["label"], "kept");
  EXPECT_EQ(task["cwd"], Status(sleeper)["cwd"]);
  EXPECT_FALSE(task.contains("schedule") &&
               task["schedule"].contains("after") &&
               !task["schedule"]["after"].empty());
  Baton({"kill", sleeper, held});
}

}  // namespace
}  // namespace baton::testing
