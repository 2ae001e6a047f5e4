#include "baton/util/toml_precheck.h"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

TEST(TomlPrecheck, PassesValidTomlWithUnicodeInStringsKeysAndComments) {
  const char* valid[] = {
      "",
      "[agents.x]\nadapter = \"claude\"\nargs = [\"--a\", 'b']\n",
      "\xEF\xBB\xBF[a]\nb = 1\n",                                 // a BOM
      "\"n\xC3\xA9v\" = \"\xC3\xA9t\xC3\xA9\"  # caf\xC3\xA9\n",  // quoted key
      "'k\xC3\xA9' = '\xE3\x80\x81'\n",
      "s = \"\"\"\nline \xC3\xA9\n\\\n  more\"\"\"\n",  // line-ending backslash
      "s = '''\xC3\xA9 '' x'''''\nt = 1\n",             // ends with two quotes
      "a = [\n  [1, 2],\n  [ [3] ],\n]\n[b]\nc = 1\n",  // arrays at line start
      "[[agents]]\nname = \"x\"\n[ \"quoted\" . k ]\n",
      "a = { b = [1], c = \"]\" }\n[d]\n",
      "e = \"esc \\\" still \xC3\xA9\"\n",
      "k=\"\xC3\xA9\"\nt = { a = \"\xC3\xA9\", b = [ '\xC3\xA9' ] }\n",
      "d = 1979-05-27T07:32:00Z # \xC3\xA9\n",
  };
  for (const char* text : valid)
    EXPECT_FALSE(PrecheckTomlText(text).has_value()) << text;
}

TEST(TomlPrecheck, RefusesNonAsciiWhereTomlppAsksIfItIsWhitespace) {
  // The fuzz finding: U+FC3F after a bare key.
  auto bare = PrecheckTomlText("[agents.x]\nadapz\xEF\xB0\xBF= = [\"x0]\n");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->line, 2u);
  EXPECT_EQ(bare->column, 6u);
  EXPECT_NE(bare->description.find("non-ASCII"), std::string::npos);
  EXPECT_NE(bare->description.find("quote the key"), std::string::npos);

  EXPECT_TRUE(PrecheckTomlText("a = \xE3\x80\x81\n").has_value());
  // toml++ reads a bare value up to a terminator, quotes included: these
  // quotes open no string (a fuzz finding).
  auto in_value = PrecheckTomlText("a = 100[D'''0{b\xCA\x84x\n'''\n");
  ASSERT_TRUE(in_value.has_value());
  EXPECT_EQ(in_value->column, 16u);
  EXPECT_TRUE(PrecheckTomlText("# ok \xC3\xA9\nk\xC3\xA9 = 1\n").has_value());

  auto after_backslash =
      PrecheckTomlText("s = \"\"\"a\\  \n   \xC3\xA9\"\"\"\n");
  ASSERT_TRUE(after_backslash.has_value());
  EXPECT_EQ(after_backslash->line, 2u);
  EXPECT_EQ(after_backslash->column, 4u);
  EXPECT_TRUE(PrecheckTomlText("s = \"\"\"a\\\xC3\xA9\"\"\"\n").has_value());
}

TEST(TomlPrecheck, RefusesATableHeaderThatDoesNotStartWithAName) {
  auto triple = PrecheckTomlText("[[[ = \n");  // the fuzz finding
  ASSERT_TRUE(triple.has_value());
  EXPECT_EQ(triple->line, 1u);
  EXPECT_EQ(triple->column, 3u);
  EXPECT_NE(triple->description.find("[name]"), std::string::npos);
  EXPECT_TRUE(PrecheckTomlText("a = 1\n  [ =]\n").has_value());
  EXPECT_TRUE(PrecheckTomlText("[ [x] ]\n").has_value());
  // toml++ would start the array's next value at the '}' (a fuzz finding).
  auto brace = PrecheckTomlText("a =[[[}]]]\n");
  ASSERT_TRUE(brace.has_value());
  EXPECT_EQ(brace->column, 7u);
  EXPECT_FALSE(PrecheckTomlText("a = [{b = 1}, {}]\n").has_value());
  // Inside an array, the same bracket is a value.
  EXPECT_FALSE(PrecheckTomlText("a = [\n[ [x] ]]\n").has_value());
}

}  // namespace
}  // namespace baton
