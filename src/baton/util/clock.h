// Time sources. Wall time is for people (created/ended timestamps); monotonic
// time is for deadlines and latencies. Clock is an interface so tests can
// drive time by hand.
#ifndef BATON_UTIL_CLOCK_H_
#define BATON_UTIL_CLOCK_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace baton {

using MonoTime = std::chrono::steady_clock::time_point;

// Milliseconds since the Unix epoch.
int64_t WallMillis();

// "2026-11-29T13:40:01.123Z" (UTC, milliseconds).
std::string FormatIsoTime(int64_t wall_ms);
// The inverse of FormatIsoTime (milliseconds optional); nullopt for any
// other form.
std::optional<int64_t> ParseIsoTime(std::string_view text);

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime Now() const = 0;
  virtual int64_t WallNowMillis() const = 0;
};

class SystemClock : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now(); }
  int64_t WallNowMillis() const override { return WallMillis(); }
};

}  // namespace baton

#endif  // BATON_UTIL_CLOCK_H_
