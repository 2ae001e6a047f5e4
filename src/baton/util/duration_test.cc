#include "baton/util/duration.h"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

using std::chrono::milliseconds;

TEST(Duration, ParsesUnits) {
  EXPECT_EQ(*ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("90"), milliseconds(90'000));
}

TEST(Duration, RejectsGarbageWithAHelpfulMessage) {
  for (const char* bad :
       {"", "abc", "5x", "-3s", "1..2s", "5 s", "s", "10s5"}) {
    auto parsed = ParseDuration(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("e.g. 500ms"), std::string::npos);
  }
}

// std::stod threw std::out_of_range here, and `baton run --timeout
// 1<400 zeros>s` died with SIGABRT (issue 11).
TEST(Duration, ANumberTooLargeForADoubleIsAnError) {
  for (const std::string& huge :
       {"1" + std::string(400, '0') + "s", "1" + std::string(400, '0')}) {
    auto parsed = ParseDuration(huge);
    ASSERT_FALSE(parsed.has_value()) << huge;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("too large"), std::string::npos)
        << parsed.error().message;
  }
}

TEST(Duration, FormatsShortestForm) {
  EXPECT_EQ(FormatDuration(milliseconds(30'000)), "30s");
  EXPECT_EQ(FormatDuration(milliseconds(5'400'000)), "1h30m");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.5s");
  // fuzz/corpus/cli_numbers/duration-*-ms: "1.23s" and "1m1s" lost
  // milliseconds; each form reads back as the duration it came from.
  EXPECT_EQ(FormatDuration(milliseconds(1234)), "1.234s");
  EXPECT_EQ(FormatDuration(milliseconds(61'500)), "1m1.5s");
  EXPECT_EQ(FormatDuration(milliseconds(3'600'250)), "1h250ms");
  EXPECT_EQ(FormatDuration(milliseconds(-1050)), "-1.05s");
  for (int64_t ms : {1, 999, 1001, 59'999, 60'001, 3'599'999, 90'061'007}) {
    auto again = ParseDuration(FormatDuration(milliseconds(ms)));
    ASSERT_TRUE(again) << ms;
    EXPECT_EQ(*again, milliseconds(ms));
  }
}

}  // namespace
}  // namespace baton
