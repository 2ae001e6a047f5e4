#include "baton/util/log.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>

#include "baton/util/clock.h"

namespace baton {
namespace {

struct Logger {
  std::string tag = "baton";
  LogLevel level = LogLevel::kInfo;
  std::vector<LogSink> sinks;
};

// Never destroyed: a static object's destructor may still log at exit.
Logger& TheLogger() {
  static Logger* logger = [] {
    auto* made = new Logger;
    made->sinks.push_back(LogSink::Stderr());
    return made;
  }();
  return *logger;
}

constexpr std::string_view kLevelNames[] = {"debug", "info", "warning",
                                            "error"};

std::string FormatLine(LogFormat format, LogLevel level,
                       std::string_view message) {
  const Logger& logger = TheLogger();
  if (format == LogFormat::kUtcNoLevel) {
    return fmt::format("{} {}[{}] {}\n", FormatIsoTime(WallMillis()),
                       logger.tag, ::getpid(), message);
  }
  timeval now{};
  gettimeofday(&now, nullptr);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &local);
  return fmt::format("{}.{:03d} {}[{}] {}: {}\n", stamp,
                     static_cast<int>(now.tv_usec / 1000), logger.tag,
                     ::getpid(), kLevelNames[static_cast<int>(level)], message);
}

}  // namespace

LogSink LogSink::Stderr(LogFormat format) {
  return LogSink(2, format);
}

LogSink LogSink::Fd(int fd, LogFormat format) {
  return LogSink(fd, format);
}

Result<LogSink> LogSink::File(const std::string& path, LogFormat format) {
  UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!fd)
    return std::unexpected(ErrnoError("open log " + path, errno));
  LogSink sink(fd.get(), format);
  sink.owned_ = std::move(fd);
  return sink;
}

void SetLogSinks(std::string_view tag, std::vector<LogSink> sinks) {
  Logger& logger = TheLogger();
  logger.tag = tag;
  logger.sinks = std::move(sinks);
}

void SetLogTarget(int fd, std::string_view tag) {
  std::vector<LogSink> sinks;
  sinks.push_back(LogSink::Fd(fd));
  SetLogSinks(tag, std::move(sinks));
}

void SetLogLevel(LogLevel level) {
  TheLogger().level = level;
}

bool LogEnabled(LogLevel level) {
  return level >= TheLogger().level;
}

void LogLine(LogLevel level, std::string_view message) {
  // Each format's line is made once, however many sinks share it.
  std::string lines[2];
  for (const LogSink& sink : TheLogger().sinks) {
    std::string& line = lines[static_cast<int>(sink.format())];
    if (line.empty())
      line = FormatLine(sink.format(), level, message);
    // One write per record keeps concurrent writers' lines whole (O_APPEND).
    ssize_t ignored = ::write(sink.fd(), line.data(), line.size());
    (void)ignored;
  }
}

}  // namespace baton
