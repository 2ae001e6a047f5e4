#include "tests/support/generated_doc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace baton::testing {

void ExpectGeneratedPart(std::string_view page, std::string_view begin,
                         std::string_view end, const std::string& generated,
                         std::string_view update_command) {
  std::string path =
      std::string(BATON_SOURCE_DIR) + "/doc/" + std::string(page);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string whole = text.str();
  size_t from = whole.find(begin);
  size_t to = whole.find(end);
  ASSERT_NE(from, std::string::npos) << path << " lacks " << begin;
  ASSERT_NE(to, std::string::npos) << path << " lacks " << end;
  from += begin.size();
  if (const char* update = std::getenv("BATON_UPDATE_DOCS");
      update && std::string(update) == "1") {
    whole.replace(from, to - from, generated);
    std::ofstream(path) << whole;
    return;
  }
  EXPECT_EQ(whole.substr(from, to - from), generated)
      << "doc/" << page << " is out of date; rewrite it with "
      << update_command;
}

}  // namespace baton::testing
