#include "baton/serve/token.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "baton/util/file_util.h"
#include "tests/support/temp_dir.h"

namespace baton::serve {
namespace {

TEST(ServeToken, MadeOnceOwnerOnlyThenReadBack) {
  testing::TempDir dir;
  std::string path = dir.path() + "/serve.token";
  auto first = LoadOrCreateToken(path);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->size(), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateToken(path);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *first);
  // Another file, another token.
  auto other = LoadOrCreateToken(dir.path() + "/other.token");
  ASSERT_TRUE(other);
  EXPECT_NE(*other, *first);
}

TEST(ServeToken, RefusesAFileOthersCanReadOrThatHoldsNoToken) {
  testing::TempDir dir;
  std::string path = dir.path() + "/serve.token";
  ASSERT_TRUE(LoadOrCreateToken(path));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto open = LoadOrCreateToken(path);
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("chmod 600"), std::string::npos);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomic(path, "short\n"));
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  auto junk = LoadOrCreateToken(path);
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message.find("holds no token"), std::string::npos);
}

}  // namespace
}  // namespace baton::serve
