#include "baton/mcp/protocol_version.h"

#include <gtest/gtest.h>

namespace baton::mcp {
namespace {

TEST(ProtocolVersion, EchoesEverySupportedVersion) {
  for (const char* v :
       {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    EXPECT_EQ(NegotiateProtocolVersion(v), v);
  }
}

TEST(ProtocolVersion, AnswersOurLatestOtherwise) {
  EXPECT_EQ(NegotiateProtocolVersion("2026-07-28"), "2025-11-25");
  EXPECT_EQ(NegotiateProtocolVersion("1999-01-01"), "2025-11-25");
  EXPECT_EQ(NegotiateProtocolVersion(nullptr), "2025-11-25");
  EXPECT_EQ(NegotiateProtocolVersion(20251125), "2025-11-25");
}

}  // namespace
}  // namespace baton::mcp
