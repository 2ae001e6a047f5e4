#include "baton/util/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <ctime>
#include <string>

namespace baton {
namespace {
int g_log_fd = 2;
std::string g_tag = "baton";
LogLevel g_level = LogLevel::kInfo;

constexpr std::string_view kLevelNames[] = {"debug", "info", "warning",
                                            "error"};
}  // namespace

void SetLogTarget(int fd, std::string_view tag) {
  g_log_fd = fd;
  g_tag = tag;
}

void SetLogLevel(LogLevel level) {
  g_level = level;
}

bool LogEnabled(LogLevel level) {
  return level >= g_level;
}

void LogLine(LogLevel level, std::string_view message) {
  timeval now{};
  gettimeofday(&now, nullptr);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &local);
  std::string line = fmt::format(
      "{}.{:03d} {}[{}] {}: {}\n", stamp, static_cast<int>(now.tv_usec / 1000),
      g_tag, getpid(), kLevelNames[static_cast<int>(level)], message);
  // One write per record keeps concurrent writers' lines whole (O_APPEND).
  ssize_t ignored = ::write(g_log_fd, line.data(), line.size());
  (void)ignored;
}

}  // namespace baton
