#include "baton/daemon/crash_points.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace baton {
namespace {

TEST(CrashPointsTest, ParsesAPointAndAPass) {
  EXPECT_TRUE(CrashPoints::Parse("after-commit:2"));
  EXPECT_TRUE(CrashPoints::Parse("before-commit:1"));
  EXPECT_TRUE(CrashPoints::Parse("after-reply:10"));
}

TEST(CrashPointsTest, RefusesWhatItCannotReach) {
  for (const char* bad :
       {"after-commit", "after-commit:0", "after-commit:-1", "after-commit:x",
        "after-commit:2x", "somewhere:1", ":1", ""}) {
    auto parsed = CrashPoints::Parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find("before-commit, after-commit"),
              std::string::npos);
  }
}

TEST(CrashPointsTest, UnarmedPassesDoNothing) {
  CrashPoints none;
  for (int i = 0; i < 5; ++i)
    none.Pass("after-commit");
  auto armed = CrashPoints::Parse("after-reply:3");
  ASSERT_TRUE(armed);
  // Other points are not counted.
  for (int i = 0; i < 5; ++i)
    armed->Pass("after-commit");
  armed->Pass("after-reply");
  armed->Pass("after-reply");
  // The third kills, as kill -9 would.
  EXPECT_EXIT(armed->Pass("after-reply"), ::testing::KilledBySignal(SIGKILL),
              "");
}

}  // namespace
}  // namespace baton
