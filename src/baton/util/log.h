// A small leveled logger: one line per record, to stderr or a file. No
// rotation and no buffering (each record is one write(2)), so a crash loses
// nothing that was logged. Not for hot paths.
#ifndef BATON_UTIL_LOG_H_
#define BATON_UTIL_LOG_H_

#include <fmt/format.h>

#include <string_view>

namespace baton {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// Sends records to `fd` (not owned; default 2) with `tag` as the process name.
void SetLogTarget(int fd, std::string_view tag);
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view message);

template <class... Args>
void Log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (!LogEnabled(level))
    return;
  LogLine(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace baton

#define BATON_LOG_INFO(...) ::baton::Log(::baton::LogLevel::kInfo, __VA_ARGS__)
#define BATON_LOG_WARN(...) \
  ::baton::Log(::baton::LogLevel::kWarning, __VA_ARGS__)
#define BATON_LOG_ERROR(...) \
  ::baton::Log(::baton::LogLevel::kError, __VA_ARGS__)
#define BATON_LOG_DEBUG(...) \
  ::baton::Log(::baton::LogLevel::kDebug, __VA_ARGS__)

#endif  // BATON_UTIL_LOG_H_
