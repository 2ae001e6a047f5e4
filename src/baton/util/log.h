// baton's one logger: leveled records, one line each, to the process's
// sinks (a file, stderr, both, or none). No rotation and no buffering (each
// record is one write(2) per sink), so a crash loses nothing that was
// logged. Not for hot paths.
#ifndef BATON_UTIL_LOG_H_
#define BATON_UTIL_LOG_H_

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// How a sink's lines read.
enum class LogFormat {
  // "2025-01-02T03:04:05.678 batond[12] info: message", local time: batond's
  // and the supervisor's logs, and stderr.
  kStandard,
  // "2025-01-02T03:04:05.678Z baton-mcp[12] message", UTC, no level: how
  // mcp.log has always read, kept for whoever reads it.
  kUtcNoLevel,
};

// One destination of records. Move-only: a file sink owns its fd.
class LogSink {
 public:
  static LogSink Stderr(LogFormat format = LogFormat::kStandard);
  // `fd` is the caller's, and must outlive the sink's use.
  static LogSink Fd(int fd, LogFormat format = LogFormat::kStandard);
  // Opens `path` for appending (created 0600, close-on-exec); the sink
  // closes it when it is replaced.
  static Result<LogSink> File(const std::string& path,
                              LogFormat format = LogFormat::kStandard);

  int fd() const { return fd_; }
  LogFormat format() const { return format_; }

 private:
  LogSink(int fd, LogFormat format) : fd_(fd), format_(format) {}
  int fd_;
  LogFormat format_;
  UniqueFd owned_;  // Set for File: the same fd as fd_.
};

// Replaces the sinks (an empty list: nothing is logged) and the name that
// records carry. Call before other threads log: records read the sinks
// without a lock.
void SetLogSinks(std::string_view tag, std::vector<LogSink> sinks);
// One sink on `fd` (not owned), in the standard format.
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
