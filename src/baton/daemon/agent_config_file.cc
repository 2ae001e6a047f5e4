#include "baton/daemon/agent_config_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "baton/util/clock.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

// A config file is small; anything bigger is a mistake.
constexpr size_t kMaxConfigBytes = 1 << 20;

int64_t Nanoseconds(const timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

ConfigFile FindConfigFile(const EnvLookup& env) {
  if (auto explicit_path = env("BATON_CONFIG"))
    return {*explicit_path, true};
  if (auto home = env("BATON_HOME"))
    return {*home + "/config.toml", false};
  if (auto xdg = env("XDG_CONFIG_HOME"); xdg && (*xdg)[0] == '/')
    return {*xdg + "/baton/config.toml", false};
  if (auto home = env("HOME"))
    return {*home + "/.config/baton/config.toml", false};
  return {};
}

Result<std::optional<struct stat>> CheckConfigFile(const ConfigFile& file) {
  if (file.path.empty())
    return std::nullopt;
  struct stat st {};
  if (::stat(file.path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT && !file.required)
      return std::nullopt;
    return MakeError(ErrorCode::kInvalidConfig,
                     fmt::format("config {}{}: {}", file.path,
                                 file.required ? " (from BATON_CONFIG)" : "",
                                 std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    return MakeError(ErrorCode::kInvalidConfig,
                     fmt::format("config {} is not a regular file", file.path));
  }
  if (st.st_mode & S_IWOTH) {
    return MakeError(ErrorCode::kInvalidConfig,
                     fmt::format("config {} is writable by others and names "
                                 "commands to run; run 'chmod o-w {}'",
                                 file.path, file.path));
  }
  if (static_cast<size_t>(st.st_size) > kMaxConfigBytes) {
    return MakeError(ErrorCode::kInvalidConfig,
                     fmt::format("config {} is larger than 1 MiB", file.path));
  }
  return st;
}

Result<AgentConfig> ReadAgentConfig(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) {
    return MakeError(ErrorCode::kInvalidConfig,
                     fmt::format("config {}: {}", path, text.error().message));
  }
  return ParseAgentConfig(*text, path);
}

Result<AgentConfig> LoadAgentConfig(const ConfigFile& file) {
  auto st = CheckConfigFile(file);
  if (!st)
    return std::unexpected(st.error());
  if (!*st)
    return BuiltinAgentConfig();
  return ReadAgentConfig(file.path);
}

Result<AgentConfig> AgentConfigCache::Load(const ConfigFile& file) {
  auto st = CheckConfigFile(file);
  if (!st)
    return std::unexpected(st.error());
  if (!*st) {
    entries_.erase(file.path);
    return BuiltinAgentConfig();
  }
  const struct stat& now = **st;
  Stamp stamp{.dev = now.st_dev,
              .ino = now.st_ino,
              .size = now.st_size,
              .mtime_ns = Nanoseconds(now.st_mtim),
              .ctime_ns = Nanoseconds(now.st_ctim)};
  if (auto it = entries_.find(file.path);
      it != entries_.end() && it->second.stamp == stamp) {
    return it->second.config;
  }
  ++parses_;
  auto config = ReadAgentConfig(file.path);
  entries_.erase(file.path);
  if (config && WallMillis() - stamp.mtime_ns / 1'000'000 >= kSettledMs) {
    constexpr size_t kMaxFiles = 16;
    if (entries_.size() >= kMaxFiles)
      entries_.clear();
    entries_.emplace(file.path, Entry{stamp, *config});
  }
  return config;
}

}  // namespace baton
