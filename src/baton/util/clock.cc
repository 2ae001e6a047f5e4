#include "baton/util/clock.h"

#include <charconv>
#include <cstdio>
#include <ctime>

namespace baton {

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FormatIsoTime(int64_t wall_ms) {
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ",
                static_cast<int>(wall_ms % 1000));
  return buf;
}

std::optional<int64_t> ParseIsoTime(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.mmm]Z
  auto number = [&](size_t at, size_t digits) -> std::optional<int> {
    if (at + digits > text.size())
      return std::nullopt;
    int value = 0;
    auto [end, ec] =
        std::from_chars(text.data() + at, text.data() + at + digits, value);
    if (ec != std::errc() || end != text.data() + at + digits)
      return std::nullopt;
    return value;
  };
  auto at = [&](size_t i, char c) { return i < text.size() && text[i] == c; };
  auto year = number(0, 4), month = number(5, 2), day = number(8, 2);
  auto hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || !at(4, '-') ||
      !at(7, '-') || !at(10, 'T') || !at(13, ':') || !at(16, ':')) {
    return std::nullopt;
  }
  int millis = 0;
  size_t z = 19;
  if (at(19, '.')) {
    auto ms = number(20, 3);
    if (!ms)
      return std::nullopt;
    millis = *ms;
    z = 23;
  }
  if (!at(z, 'Z') || z + 1 != text.size())
    return std::nullopt;
  // Calendar arithmetic, not timegm(): timegm loads the time zone database
  // (an open and two reads of /etc/localtime) on the first call, and every
  // `baton wait` decodes times (doc/hot-path.md, "Where a wake goes").
  namespace chrono = std::chrono;
  chrono::year_month_day date{chrono::year(*year),
                              chrono::month(static_cast<unsigned>(*month)),
                              chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 59)
    return std::nullopt;
  auto moment = chrono::sys_days(date) + chrono::hours(*hour) +
                chrono::minutes(*minute) + chrono::seconds(*second) +
                chrono::milliseconds(millis);
  return moment.time_since_epoch().count();
}

}  // namespace baton
