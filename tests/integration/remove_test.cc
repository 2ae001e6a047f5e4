// `baton rm` and `baton clear` (doc/tasks.md, "Removing ended tasks")
// against a real batond: ended tasks go with their output; what a live
// task still needs stays, and says why.
#include <sys/stat.h>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string FolderOf(const std::string& path) {
  return path.substr(0, path.rfind('/'));
}

class RemoveTest : public BatonTest {};

TEST_F(RemoveTest, AnEndedTaskGoesWithItsOutputAndTheAuditKeepsIt) {
  std::string id = Run("echo kept-nowhere");
  Baton({"wait", id});
  std::string folder = FolderOf(Status(id)["output_path"]);
  ASSERT_TRUE(Exists(folder));
  auto removed = Baton({"rm", id});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(removed.out, "removed " + id + ", with its output\n");
  EXPECT_FALSE(Exists(folder));
  auto status = Baton({"status", id});
  EXPECT_NE(status.exit_code, 0);
  EXPECT_NE(status.err.find("no task " + id), std::string::npos) << status.err;
  auto audit = Baton({"audit", "--task", id});
  EXPECT_NE(audit.out.find("remove"), std::string::npos) << audit.out;
  EXPECT_NE(audit.out.find("removed with its output"), std::string::npos)
      << audit.out;
  // Its id is never handed out again.
  EXPECT_NE(Run("true"), id);
}

TEST_F(RemoveTest, WhatALiveTaskNeedsIsRefusedAndNothingIsRemoved) {
  std::string live = Run("sleep 30");
  std::string ended = Run("true");
  Baton({"wait", ended});
  // Held until both ended: it needs `ended`'s record.
  std::string held = Run("true", {"--after", ended + "," + live});
  auto busy = Baton({"rm", live});
  EXPECT_EQ(busy.exit_code, 1);
  EXPECT_NE(busy.err.find("is still running; stop it first (baton kill " +
                          live + ")"),
            std::string::npos)
      << busy.err;
  auto needed = Baton({"rm", ended});
  EXPECT_EQ(needed.exit_code, 1);
  EXPECT_NE(needed.err.find("needed by a live task"), std::string::npos)
      << needed.err;
  auto unknown = Baton({"rm", "shell-999"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_EQ(Status(ended)["status"], "completed");
  // `clear` keeps it too, and says why; nothing live goes.
  auto cleared = Baton({"clear"});
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.out.find("kept " + ended + ": " + ended +
                             " is needed by a live task"),
            std::string::npos)
      << cleared.out;
  EXPECT_EQ(Status(live)["status"], "running");
  EXPECT_EQ(Status(held)["status"], "queued");
  Baton({"kill", live});
}

TEST_F(RemoveTest, ClearRemovesEveryEndedTaskTheSessionSees) {
  std::vector<std::string> ended = {Run("true"), Run("exit 3"), Run("echo x")};
  Baton({"wait", "--all", ended[0], ended[1], ended[2]});
  std::map<std::string, std::string> other = {{"BATON_SESSION", "other"}};
  std::string theirs = Run("true", {}, other);
  Baton({"wait", theirs}, other);
  std::map<std::string, std::string> mine = {{"BATON_SESSION", "mine"}};
  auto cleared = Baton({"clear"}, mine);
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  // The unowned ones (started without a session) are everyone's; the
  // other session's task is not this session's to remove.
  for (const std::string& id : ended)
    EXPECT_NE(cleared.out.find(id), std::string::npos) << cleared.out;
  EXPECT_EQ(cleared.out.find(theirs), std::string::npos) << cleared.out;
  EXPECT_EQ(Status(theirs, other)["status"], "completed");
  EXPECT_EQ(Baton({"clear"}, mine).out, "no ended task to remove\n");
}

}  // namespace
}  // namespace baton::testing
