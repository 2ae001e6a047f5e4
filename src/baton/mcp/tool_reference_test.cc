#include "baton/mcp/tool_reference.h"

#include <gtest/gtest.h>

#include "tests/support/generated_doc.h"

namespace baton::mcp {
namespace {

// doc/mcp.md's tool reference is the tools' own definitions: a tool, an
// argument or a field cannot be added without the page saying so.
TEST(ToolReferenceTest, ThePageShowsTheToolsAsTheyAre) {
  testing::ExpectGeneratedPart(
      "mcp.md", "<!-- generated from mcp/tools: begin -->\n",
      "<!-- generated from mcp/tools: end -->\n", ToolReference(),
      "BATON_UPDATE_DOCS=1 build/dev/unit_tests "
      "--gtest_filter=ToolReferenceTest.*");
}

TEST(ToolReferenceTest, EveryToolArgumentAndFieldIsThere) {
  std::string page = ToolReference();
  for (const char* part :
       {"### `task_events`: ", "| `after` | integer | ", "default 0",
        "| `task_id` (required) | string |",
        "| `next_after` (required) | integer |",
        "Annotations: read-only, idempotent, closed world.",
        "### Instructions (the initialize result's `instructions`)\n\n> "}) {
    EXPECT_NE(page.find(part), std::string::npos) << part;
  }
}

}  // namespace
}  // namespace baton::mcp
