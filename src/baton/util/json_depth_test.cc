#include "baton/util/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

std::string Nested(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JsonDepth, CountsArraysAndObjects) {
  EXPECT_TRUE(JsonDepthWithin("1", 0));
  EXPECT_TRUE(JsonDepthWithin("{}", 1));
  EXPECT_FALSE(JsonDepthWithin("{}", 0));
  EXPECT_TRUE(JsonDepthWithin(R"({"a":[{"b":[]}]})", 4));
  EXPECT_FALSE(JsonDepthWithin(R"({"a":[{"b":[]}]})", 3));
  // Siblings do not add up.
  EXPECT_TRUE(JsonDepthWithin("[[1],[2],[[3]]]", 3));
}

TEST(JsonDepth, BracketsInStringsDoNotCount) {
  EXPECT_TRUE(JsonDepthWithin(R"({"a":"[[[[{{{{"})", 1));
  EXPECT_TRUE(JsonDepthWithin(R"(["\"[[[[", "\\"])", 1));
  EXPECT_FALSE(JsonDepthWithin(R"(["\\", [[]]])", 2));
}

TEST(JsonDepth, TheDefaultLimitRefusesIssue12sLine) {
  EXPECT_TRUE(JsonDepthWithin(Nested(kMaxJsonDepth)));
  EXPECT_FALSE(JsonDepthWithin(Nested(kMaxJsonDepth + 1)));
  EXPECT_FALSE(JsonDepthWithin(R"({"id":)" + Nested(60'000) + "}"));
}

}  // namespace
}  // namespace baton
