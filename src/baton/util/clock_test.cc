#include "baton/util/clock.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(ClockTest, IsoTimesRoundTrip) {
  for (int64_t ms : {int64_t{0}, int64_t{951782400123}, int64_t{1796528842426},
                     int64_t{4102444799999}}) {
    EXPECT_EQ(ParseIsoTime(FormatIsoTime(ms)), ms) << FormatIsoTime(ms);
  }
  EXPECT_EQ(ParseIsoTime("2000-02-29T00:00:00Z"), 951782400000);
  EXPECT_EQ(ParseIsoTime("1970-01-01T00:00:01.5Z"), std::nullopt);
}

TEST(ClockTest, ImpossibleDatesAndTimesAreRefused) {
  for (const char* text :
       {"2001-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z",
        "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z",
        "2026-01-01 00:00:00Z", "2026-01-01T00:00:00", ""}) {
    EXPECT_EQ(ParseIsoTime(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace baton
