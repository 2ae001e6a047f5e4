#include "baton/util/terminal_text.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(TerminalTextTest, ControlCharactersAreWrittenOut) {
  // A window title, a clear screen and a colour: the label of the report.
  EXPECT_EQ(TerminalSafe("\x1b]0;PWNED\a\x1b[2J\x1b[31mred"),
            "\\e]0;PWNED\\x07\\e[2J\\e[31mred");
  EXPECT_EQ(TerminalSafe("a\nb\tc\rd\x7f"), "a\\nb\\tc\\rd\\x7f");
  // C1's CSI (U+009B) in UTF-8; other UTF-8 stays as it is.
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "2J é ✓"),
            "\\u009b2J é ✓");
  EXPECT_EQ(TerminalSafe("plain text, a \\ too"), "plain text, a \\ too");
}

TEST(TerminalTextTest, NewlinesMayStay) {
  EXPECT_EQ(TerminalSafe("one\ntwo\x1b[0m\n", /*keep_newlines=*/true),
            "one\ntwo\\e[0m\n");
}

TEST(TerminalTextTest, FindsTheFirstControlCharacter) {
  EXPECT_EQ(FindControlCharacter("fine label ✓"), std::string_view::npos);
  EXPECT_EQ(FindControlCharacter("two\nlines"), 3u);
  EXPECT_EQ(FindControlCharacter("x\xc2\x85"), 1u);  // NEL
}

}  // namespace
}  // namespace baton
