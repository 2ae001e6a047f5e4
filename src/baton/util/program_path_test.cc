#include "baton/util/program_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace baton {
namespace {

class ProgramPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = {"HOME=/", "PATH=" + tmp_.MakeDir("a") + ":" + tmp_.MakeDir("b")};
  }

  std::string Tool(const std::string& dir) {
    return root_ + "/" + dir + "/tool";
  }
  void MakeTool(const std::string& dir) {
    std::ofstream{Tool(dir)} << "#!/bin/sh\n";
    ASSERT_EQ(::chmod(Tool(dir).c_str(), 0700), 0);
  }

  testing::TempDir tmp_;
  const std::string& root_ = tmp_.path();
  std::vector<std::string> env_;
  ProgramCache cache_;
};

TEST_F(ProgramPathTest, ACachedFindIsCheckedAgainOnEachUse) {
  MakeTool("b");
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_), Tool("b"));
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_), Tool("b"));
  // Gone from b, now in a: the search runs again.
  ASSERT_EQ(::unlink(Tool("b").c_str()), 0);
  MakeTool("a");
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_), Tool("a"));
  // No longer executable: never returned from the cache.
  ASSERT_EQ(::chmod(Tool("a").c_str(), 0600), 0);
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_),
            std::unexpected(EACCES));
  ASSERT_EQ(::unlink(Tool("a").c_str()), 0);
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_),
            std::unexpected(ENOENT));
}

TEST_F(ProgramPathTest, AFindIsUsedForItsMaxAgeOnly) {
  ProgramCache expiring(std::chrono::seconds(0));
  MakeTool("b");
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_), Tool("b"));
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &expiring), Tool("b"));
  // Installed earlier in PATH: a find within its max age still holds, an
  // expired one is searched again.
  MakeTool("a");
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_), Tool("b"));
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &expiring), Tool("a"));
}

TEST_F(ProgramPathTest, FindsAreRememberedPerPath) {
  MakeTool("b");
  EXPECT_EQ(ResolveProgram("tool", env_, "/", &cache_), Tool("b"));
  std::vector<std::string> only_a = {"PATH=" + root_ + "/a"};
  EXPECT_EQ(ResolveProgram("tool", only_a, "/", &cache_),
            std::unexpected(ENOENT));
}

}  // namespace
}  // namespace baton
