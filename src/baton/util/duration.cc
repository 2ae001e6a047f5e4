#include "baton/util/duration.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace baton {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto bad = [&] {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("invalid duration '{}': use a number with a "
                                 "unit, e.g. 500ms, 30s, 5m, 1h30m",
                                 text));
  };
  if (text.empty())
    return bad();
  double total_ms = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t start = i;
    while (
        i < text.size() &&
        (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (i == start)
      return bad();
    std::string_view number = text.substr(start, i - start);
    if (number.find('.') != number.rfind('.') || number == ".")
      return bad();
    // from_chars, not std::stod: a number too large for a double (a digit
    // and 400 zeros) is an error here, where stod would throw.
    double value = 0;
    auto [end, error] =
        std::from_chars(number.data(), number.data() + number.size(), value);
    if (error == std::errc::result_out_of_range) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("invalid duration '{}': the number is too "
                                   "large",
                                   text));
    }
    if (error != std::errc() || end != number.data() + number.size())
      return bad();
    size_t unit_start = i;
    while (i < text.size() &&
           std::isalpha(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale;
    if (unit.empty()) {
      // A bare number means seconds, but only as the whole text ("90").
      if (any || i != text.size())
        return bad();
      scale = 1000;
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    } else if (unit == "d") {
      scale = 86'400'000;
    } else {
      return bad();
    }
    total_ms += value * scale;
    any = true;
  }
  if (!any || !std::isfinite(total_ms) || total_ms > 1e15)
    return bad();
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::llround(total_ms)));
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  int64_t ms = duration.count();
  if (ms == 0)
    return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  int64_t hours = ms / 3'600'000;
  int64_t minutes = ms % 3'600'000 / 60'000;
  int64_t rest_ms = ms % 60'000;
  if (hours)
    out += fmt::format("{}h", hours);
  if (minutes)
    out += fmt::format("{}m", minutes);
  // Every millisecond is printed, so that the text reads back as the same
  // duration: "1.234s", not "1.23s"; "1m1.5s", not "1m1s".
  if (rest_ms >= 1000 && rest_ms % 1000 == 0) {
    out += fmt::format("{}s", rest_ms / 1000);
  } else if (rest_ms >= 1000) {
    std::string fraction = fmt::format("{:03}", rest_ms % 1000);
    fraction.erase(fraction.find_last_not_of('0') + 1);
    out += fmt::format("{}.{}s", rest_ms / 1000, fraction);
  } else if (rest_ms > 0) {
    out += fmt::format("{}ms", rest_ms);
  }
  return out;
}

}  // namespace baton
