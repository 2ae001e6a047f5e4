#include "baton/ipc/protocol_doc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace baton {
namespace {

constexpr char kBegin[] = "<!-- generated from ipc/messages.h: begin -->\n";
constexpr char kEnd[] = "<!-- generated from ipc/messages.h: end -->\n";

// doc/protocol.md says what the code speaks: its reference part is the
// generated one. BATON_UPDATE_DOCS=1 writes it.
TEST(ProtocolDocTest, ThePageShowsTheMessagesAsTheyAre) {
  std::string path = std::string(BATON_SOURCE_DIR) + "/doc/protocol.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string page = text.str();
  size_t begin = page.find(kBegin);
  size_t end = page.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << path << " lacks " << kBegin;
  ASSERT_NE(end, std::string::npos) << path << " lacks " << kEnd;
  begin += sizeof kBegin - 1;
  std::string generated = ProtocolReference();
  if (const char* update = std::getenv("BATON_UPDATE_DOCS");
      update && std::string(update) == "1") {
    page.replace(begin, end - begin, generated);
    std::ofstream(path) << page;
    return;
  }
  EXPECT_EQ(page.substr(begin, end - begin), generated)
      << "doc/protocol.md is out of date; rewrite it with "
         "BATON_UPDATE_DOCS=1 build/dev/unit_tests "
         "--gtest_filter=ProtocolDocTest.*";
}

}  // namespace
}  // namespace baton
