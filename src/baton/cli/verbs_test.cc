#include "baton/cli/verbs.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace baton {
namespace {

// What a flag checked with `check` holds after `--value=TEXT`, or nullopt
// when the command line is refused.
template <class T>
std::optional<T> FlagValue(const std::string& text, CLI::Validator check) {
  CLI::App app;
  std::optional<T> value;
  app.add_option("--value", value)->check(check);
  try {
    app.parse(std::vector<std::string>{"--value=" + text});
  } catch (const CLI::ParseError&) {
    return std::nullopt;
  }
  return value;
}

// fuzz/corpus/cli_numbers/nasty-leading-zero: the check read "010" as 10,
// then CLI11 converted the text itself, as octal: the flag held 8. A
// leading zero is refused.
TEST(VerbsTest, AWholeNumberFlagHoldsTheNumberTyped) {
  EXPECT_EQ(FlagValue<int64_t>("10", WholeNumber(0, 100)), 10);
  EXPECT_EQ(FlagValue<int64_t>("0", WholeNumber(0, 100)), 0);
  EXPECT_EQ(FlagValue<int64_t>("-0", WholeNumber(0, 100)), 0);
  EXPECT_EQ(FlagValue<int64_t>("-7", WholeNumber(-10, 100)), -7);
  EXPECT_EQ(FlagValue<int64_t>("010", WholeNumber(0, 100)), std::nullopt);
  EXPECT_EQ(FlagValue<int64_t>("-010", WholeNumber(-100, 100)), std::nullopt);
  EXPECT_EQ(FlagValue<int64_t>("08", WholeNumber(0, 100)), std::nullopt);
  EXPECT_EQ(FlagValue<int64_t>("0x10", WholeNumber(0, 100)), std::nullopt);
  EXPECT_EQ(FlagValue<int64_t>("101", WholeNumber(0, 100)), std::nullopt);
}

TEST(VerbsTest, DecimalFlagsRefuseWhatIsNotAFiniteNumberInBounds) {
  EXPECT_EQ(FlagValue<double>("1.5", DecimalNumber(0, 2)), 1.5);
  for (const char* text : {"nan", "-nan", "inf", "1e400", "2.5", "0x1p0"})
    EXPECT_EQ(FlagValue<double>(text, DecimalNumber(0, 2)), std::nullopt)
        << text;
  EXPECT_EQ(FlagValue<double>("0", PositiveAmount(10)), std::nullopt);
  EXPECT_EQ(FlagValue<double>("2.50", PositiveAmount(10)), 2.5);
}

}  // namespace
}  // namespace baton
