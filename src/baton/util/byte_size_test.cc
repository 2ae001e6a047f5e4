#include "baton/util/byte_size.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(ByteSize, ParsesBinaryUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096);
  EXPECT_EQ(*ParseByteSize("0"), 0);
  EXPECT_EQ(*ParseByteSize("64K"), 64 * 1024);
  EXPECT_EQ(*ParseByteSize("64k"), 64 * 1024);
  EXPECT_EQ(*ParseByteSize("500M"), 500LL << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1LL << 30);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1LL << 30);
  EXPECT_EQ(*ParseByteSize("2TB"), 2LL << 40);
}

TEST(ByteSize, RefusesGarbageAndOverflowSayingWhatWorks) {
  for (const char* bad :
       {"", "lots", "-1", "1X", "1Gb", "1 G", "G", "99999999999T", "1.5G"}) {
    auto parsed = ParseByteSize(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("e.g. 4096, 64K, 500M, 1G"),
              std::string::npos)
        << parsed.error().message;
  }
}

TEST(ByteSize, FormatsInTheLargestUnitItFills) {
  EXPECT_EQ(FormatByteSize(512), "512 B");
  EXPECT_EQ(FormatByteSize(64 << 20), "64 MiB");
  EXPECT_EQ(FormatByteSize(int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(FormatByteSize((int64_t{1} << 30) - 1), "1023.9 MiB");
  EXPECT_EQ(FormatByteSize(int64_t{1} << 62), "4194304 TiB");
}

}  // namespace
}  // namespace baton
