#include "baton/util/clock.h"

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

}  // namespace baton
