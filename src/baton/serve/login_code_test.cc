#include "baton/serve/login_code.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "baton/util/file_util.h"

namespace baton::serve {
namespace {

class LoginCodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/baton-login-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    home_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  // Makes the code's file look minted `age` ago.
  void Age(const std::string& code, std::chrono::seconds age) {
    auto when = std::chrono::system_clock::now() - age;
    timespec times[2];
    times[0].tv_sec = times[1].tv_sec =
        std::chrono::system_clock::to_time_t(when);
    times[0].tv_nsec = times[1].tv_nsec = 0;
    std::string path = LoginCodeDir(home_) + "/" + code;
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }

  std::string home_;
};

TEST_F(LoginCodeTest, ACodeWorksOnceAndOnlyForItsHome) {
  auto code = MintLoginCode(home_);
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->size(), 32u);
  struct stat st {};
  ASSERT_EQ(::stat((LoginCodeDir(home_) + "/" + *code).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(LoginCodeDir(home_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  auto other = MintLoginCode(home_);
  ASSERT_TRUE(other);
  EXPECT_NE(*code, *other);
  EXPECT_FALSE(ClaimLoginCode("/nonexistent", *code));
  EXPECT_TRUE(ClaimLoginCode(home_, *code));
  EXPECT_FALSE(ClaimLoginCode(home_, *code));  // Once.
  EXPECT_TRUE(ClaimLoginCode(home_, *other));
}

TEST_F(LoginCodeTest, AnOldCodeIsRefusedAndRemoved) {
  auto fresh = MintLoginCode(home_);
  auto old = MintLoginCode(home_);
  ASSERT_TRUE(fresh && old);
  Age(*old, kLoginCodeLifetime + std::chrono::seconds(5));
  Age(*fresh, kLoginCodeLifetime - std::chrono::seconds(20));
  EXPECT_FALSE(ClaimLoginCode(home_, *old));
  EXPECT_FALSE(std::filesystem::exists(LoginCodeDir(home_) + "/" + *old));
  EXPECT_TRUE(ClaimLoginCode(home_, *fresh));

  // Minting sweeps the codes nobody claimed in time.
  auto left = MintLoginCode(home_);
  ASSERT_TRUE(left);
  Age(*left, kLoginCodeLifetime * 2);
  ASSERT_TRUE(MintLoginCode(home_));
  EXPECT_FALSE(std::filesystem::exists(LoginCodeDir(home_) + "/" + *left));
}

TEST_F(LoginCodeTest, WhatIsNotACodeNeverReachesTheFileSystem) {
  ASSERT_TRUE(MintLoginCode(home_));
  // A file of the right name that is not a regular file is no code.
  std::string fake = std::string(32, 'a');
  ASSERT_EQ(::mkdir((LoginCodeDir(home_) + "/" + fake).c_str(), 0700), 0);
  EXPECT_FALSE(ClaimLoginCode(home_, fake));
  ASSERT_TRUE(WriteFileAtomic(home_ + "/serve.token", "x"));
  for (std::string_view bad :
       {"", "../serve.token", "ABCDEF0123456789ABCDEF0123456789",
        "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef/123456789abcdef"}) {
    EXPECT_FALSE(ClaimLoginCode(home_, bad)) << bad;
  }
  EXPECT_TRUE(std::filesystem::exists(home_ + "/serve.token"));
}

}  // namespace
}  // namespace baton::serve
