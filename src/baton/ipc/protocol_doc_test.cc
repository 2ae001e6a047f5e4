#include "baton/ipc/protocol_doc.h"

#include <gtest/gtest.h>

#include "tests/support/generated_doc.h"

namespace baton {
namespace {

// doc/protocol.md says what the code speaks: its reference part is the
// generated one.
TEST(ProtocolDocTest, ThePageShowsTheMessagesAsTheyAre) {
  testing::ExpectGeneratedPart(
      "protocol.md", "<!-- generated from ipc/messages.h: begin -->\n",
      "<!-- generated from ipc/messages.h: end -->\n", ProtocolReference(),
      "BATON_UPDATE_DOCS=1 build/dev/unit_tests "
      "--gtest_filter=ProtocolDocTest.*");
}

TEST(ProtocolDocTest, ACellKeepsToOneCell) {
  EXPECT_EQ(MarkdownCell("a | b\nc"), "a \\| b c");
}

}  // namespace
}  // namespace baton
