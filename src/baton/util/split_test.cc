#include "baton/util/split.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using Parts = std::vector<std::string_view>;

TEST(Split, KeepsEmptyPieces) {
  EXPECT_EQ(Split("a,,b", ','), (Parts{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (Parts{""}));
  EXPECT_EQ(Split("a\n", '\n'), (Parts{"a", ""}));
  EXPECT_EQ(Split("no separator", ','), (Parts{"no separator"}));
}

}  // namespace
}  // namespace baton
