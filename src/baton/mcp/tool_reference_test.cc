#include "baton/mcp/tool_reference.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace baton::mcp {
namespace {

constexpr char kToolsBegin[] = "<!-- generated from mcp/tools: begin -->\n";
constexpr char kToolsEnd[] = "<!-- generated from mcp/tools: end -->\n";

// doc/mcp.md's tool reference is the tools' own definitions: a tool, an
// argument or a field cannot be added without the page saying so.
// BATON_UPDATE_DOCS=1 writes it.
TEST(ToolReferenceTest, ThePageShowsTheToolsAsTheyAre) {
  std::string path = std::string(BATON_SOURCE_DIR) + "/doc/mcp.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string page = text.str();
  size_t begin = page.find(kToolsBegin);
  size_t end = page.find(kToolsEnd);
  ASSERT_NE(begin, std::string::npos) << path << " lacks " << kToolsBegin;
  ASSERT_NE(end, std::string::npos) << path << " lacks " << kToolsEnd;
  begin += sizeof kToolsBegin - 1;
  std::string generated = ToolReference();
  if (const char* update = std::getenv("BATON_UPDATE_DOCS");
      update && std::string(update) == "1") {
    page.replace(begin, end - begin, generated);
    std::ofstream(path) << page;
    return;
  }
  EXPECT_EQ(page.substr(begin, end - begin), generated)
      << "doc/mcp.md is out of date; rewrite it with BATON_UPDATE_DOCS=1 "
         "build/dev/unit_tests --gtest_filter=ToolReferenceTest.*";
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
