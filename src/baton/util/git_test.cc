#include "baton/util/git.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace baton {
namespace {

// Issue 35, finding 10: a git that never ends held its caller forever.
TEST(RunGitTest, AGitThatDoesNotEndIsStoppedAtItsDeadline) {
  char dir[] = "/tmp/baton-git-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string bin = std::string(dir) + "/git";
  {
    std::ofstream script(bin);
    // Its child too: the whole group is stopped, so the pipes close.
    script << "#!/bin/sh\n/bin/sleep 30 &\n/bin/sleep 30\n";
  }
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  auto start = std::chrono::steady_clock::now();
  auto result = RunGit(dir, {"status"}, {std::string("PATH=") + dir},
                       std::chrono::milliseconds(200));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->timed_out);
  EXPECT_FALSE(result->ok());
  EXPECT_EQ(result->Complaint(),
            "git did not finish within 200ms and was stopped");
  EXPECT_LT(took, std::chrono::seconds(10));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
