#include "baton/cli/context.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "baton/util/duration.h"
#include "baton/util/version.h"

namespace baton {

Result<DaemonClient> Context::Connect(
    bool autostart, std::chrono::milliseconds start_timeout) const {
  auto paths = StatePaths::FromEnvironment("");
  if (!paths)
    return std::unexpected(paths.error());
  DaemonClient::Options options;
  options.paths = *paths;
  options.session = session;
  options.autostart = autostart;
  options.start_timeout = start_timeout;
  return DaemonClient::Connect(options);
}

Error WithVersionSkewHint(Error error) {
  if (error.message.find(": unknown field '") != std::string::npos &&
      error.message.find("this batond is baton") == std::string::npos) {
    error.message += fmt::format(
        "; batond is likely older than this baton ({}): replace it with "
        "this one's with 'baton daemon upgrade' (tasks keep running)",
        kBatonVersion);
  }
  return error;
}

int ReportError(const Context& ctx, const Error& reported, int exit_code) {
  Error error = WithVersionSkewHint(reported);
  if (ctx.json) {
    std::string doc = "{\"error\":";
    EncodeValue(doc, ToWire(error));
    doc += '}';
    PrintJsonLine(doc);
  } else {
    std::fprintf(stderr, "baton: error: %s\n", error.message.c_str());
  }
  bool usage_or_connection = error.code == ErrorCode::kUnavailable ||
                             error.code == ErrorCode::kIncompatible ||
                             error.code == ErrorCode::kCorrupt;
  if (exit_code >= 0)
    return exit_code;
  return usage_or_connection ? kExitUsage : kExitFailed;
}

int ConnectError(const Context& ctx, const Error& error) {
  return ReportError(ctx, error, kExitUsage);
}

void PrintJsonLine(std::string_view json_text) {
  std::fwrite(json_text.data(), 1, json_text.size(), stdout);
  std::fputc('\n', stdout);
}

void PrintNotices(DaemonClient& client) {
  for (const Notice& notice : client.TakeNotices()) {
    std::fprintf(stderr, "baton: notice: %s\n", notice.text.c_str());
    if (notice.task.task.status == TaskStatus::kWaiting) {
      std::fprintf(stderr,
                   "  answer: baton answer %s <number|label|text|skip> (one "
                   "per item)\n",
                   notice.task.task.id.ToString().c_str());
    }
  }
}

Status CheckArgumentText(std::string_view what, std::string_view text) {
  if (IsValidUtf8(text))
    return {};
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("{} is not valid UTF-8; baton carries "
                               "commands, paths and messages as text",
                               what));
}

Result<std::chrono::milliseconds> ParseDurationFlag(std::string_view flag,
                                                    std::string_view text) {
  auto parsed = ParseDuration(text);
  if (!parsed) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: {}", flag, parsed.error().message));
  }
  if (parsed->count() > kMaxTimeoutMs) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} {} is longer than the longest baton "
                                 "takes, 366d; leave it out for no limit",
                                 flag, text));
  }
  return *parsed;
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words)
    text += (text.empty() ? "" : " ") + word;
  return text;
}

std::string CurrentDir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? buf : "/";
}

}  // namespace baton
