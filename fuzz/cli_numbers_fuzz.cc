// Fuzzes the command line's readers of numbers (cli/verbs.h: WholeNumber,
// DecimalNumber, PositiveAmount, checked through CLI11 as a flag is),
// durations (util/duration.h, cli/context.h's ParseDurationFlag) and sizes
// (util/byte_size.h); the input is the text of one flag's value. Besides no
// crash: a number a check accepts is finite and within its bounds, and the
// flag then holds that number (CLI11 converts the text itself after the
// check); an accepted duration is from 0 to 1e15 ms (366 days for a flag)
// and prints to a text that reads back the same; an accepted size is from
// 0 to 2^62 bytes and prints as no more than it is.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/cli/context.h"
#include "baton/cli/verbs.h"
#include "baton/ipc/wire_types.h"
#include "baton/util/byte_size.h"
#include "baton/util/duration.h"
#include "fuzz/fuzz_checks.h"

namespace {

// `text` given as the value of a flag of type T checked by `check`, as the
// verbs define theirs: the value the flag holds, or nullopt when the
// command line is refused.
template <class T>
std::optional<T> FlagValue(const std::string& text, CLI::Validator check) {
  CLI::App app;
  std::optional<T> value;
  app.add_option("--value", value)->check(check);
  try {
    // CLI11 2.1 takes the arguments last first.
    app.parse(std::vector<std::string>{"--value=" + text});
  } catch (const CLI::ParseError&) {
    return std::nullopt;  // How the CLI refuses a value (RunCli catches it).
  }
  FUZZ_CHECK(value.has_value(), "an accepted flag holds a value");
  return value;
}

void CheckWholeNumber(const std::string& text, int64_t min, int64_t max) {
  auto value = FlagValue<int64_t>(text, baton::WholeNumber(min, max));
  if (!value)
    return;
  FUZZ_CHECK(*value >= min && *value <= max, "a whole number is in bounds");
  int64_t typed = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), typed);
  FUZZ_CHECK(error == std::errc() && end == text.data() + text.size(),
             "an accepted whole number is a decimal number");
  FUZZ_CHECK(*value == typed, "a whole-number flag holds the number typed");
}

void CheckDecimal(const std::string& text, CLI::Validator check, double min,
                  double max, bool above_min) {
  auto value = FlagValue<double>(text, check);
  if (!value)
    return;
  FUZZ_CHECK(std::isfinite(*value), "an accepted number is finite");
  FUZZ_CHECK(above_min ? *value > min : *value >= min,
             "an accepted number is not below its bound");
  FUZZ_CHECK(*value <= max, "an accepted number is not above its bound");
  double typed = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), typed);
  FUZZ_CHECK(error == std::errc() && end == text.data() + text.size(),
             "an accepted number is a decimal number");
  FUZZ_CHECK(*value == typed, "a number flag holds the number typed");
}

void CheckDuration(const std::string& text) {
  auto duration = baton::ParseDuration(text);
  auto flag = baton::ParseDurationFlag("--timeout", text);
  if (!duration) {
    FUZZ_CHECK(!duration.error().message.empty(), "a bad duration says why");
    FUZZ_CHECK(!flag, "a flag takes no duration the parser refuses");
    return;
  }
  FUZZ_CHECK(duration->count() >= 0 && duration->count() <= 1e15,
             "a duration is from 0 to 1e15 ms");
  std::string printed = baton::FormatDuration(*duration);
  auto again = baton::ParseDuration(printed);
  FUZZ_CHECK(again.has_value() && *again == *duration,
             "a duration prints to a text that reads back the same");
  if (flag) {
    FUZZ_CHECK(*flag == *duration && flag->count() <= baton::kMaxTimeoutMs,
               "a duration flag is at most 366 days");
  } else {
    FUZZ_CHECK(duration->count() > baton::kMaxTimeoutMs,
               "a duration flag refuses only what is too long");
    FUZZ_CHECK(flag.error().message.starts_with("--timeout"),
               "a refused duration flag is named");
  }
}

void CheckByteSize(const std::string& text) {
  auto size = baton::ParseByteSize(text);
  if (!size) {
    FUZZ_CHECK(!size.error().message.empty(), "a bad size says why");
    return;
  }
  FUZZ_CHECK(*size >= 0 && *size <= (int64_t{1} << 62),
             "a size is from 0 to 2^62 bytes");
  // "1.5 GiB": tenths of a binary unit, never more than the size.
  std::string printed = baton::FormatByteSize(*size);
  uint64_t whole = 0;
  uint64_t tenth = 0;
  const char* at = printed.data();
  const char* stop = printed.data() + printed.size();
  auto [after_whole, error] = std::from_chars(at, stop, whole);
  FUZZ_CHECK(error == std::errc(), "a printed size starts with a number");
  at = after_whole;
  if (at < stop && *at == '.') {
    auto [after_tenth, tenth_error] = std::from_chars(at + 1, stop, tenth);
    FUZZ_CHECK(
        tenth_error == std::errc() && tenth < 10 && after_tenth == at + 2,
        "a printed size has one decimal");
    at = after_tenth;
  }
  std::string_view unit(at, static_cast<size_t>(stop - at));
  int shift = unit == " B"     ? 0
              : unit == " KiB" ? 10
              : unit == " MiB" ? 20
              : unit == " GiB" ? 30
              : unit == " TiB" ? 40
                               : -1;
  FUZZ_CHECK(shift >= 0, "a printed size has a binary unit");
  unsigned __int128 shown_tenths =
      (static_cast<unsigned __int128>(whole) * 10 + tenth) << shift;
  FUZZ_CHECK(shown_tenths <= static_cast<unsigned __int128>(*size) * 10,
             "a printed size is never more than the size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // The bounds the verbs use: queue's --pids and --max, audit's --limit,
  // delegate's --max-turns, queue's --cpus, delegate's --max-cost.
  CheckWholeNumber(text, 0, 1 << 22);
  CheckWholeNumber(text, 0, 1'000'000);
  CheckWholeNumber(text, 1, INT64_MAX);
  CheckDecimal(text, baton::DecimalNumber(0, 65536), 0, 65536, false);
  CheckDecimal(text, baton::PositiveAmount(1e9), 0, 1e9, true);
  CheckDuration(text);
  CheckByteSize(text);
  return 0;
}
