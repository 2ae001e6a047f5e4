#include "baton/daemon/agent_config_cache.h"

#include <ctime>

namespace baton {
namespace {

int64_t Nanoseconds(const timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int64_t WallNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return Nanoseconds(now);
}

}  // namespace

Result<AgentConfig> AgentConfigCache::Load(const ConfigFile& file) {
  auto st = CheckConfigFile(file);
  if (!st)
    return std::unexpected(st.error());
  if (!*st) {
    entries_.erase(file.path);
    return LoadAgentConfig(file);  // The built-ins: nothing to read.
  }
  const struct stat& now = **st;
  Entry key{.dev = now.st_dev,
            .ino = now.st_ino,
            .size = now.st_size,
            .mtime_ns = Nanoseconds(now.st_mtim),
            .ctime_ns = Nanoseconds(now.st_ctim)};
  if (auto it = entries_.find(file.path);
      it != entries_.end() && it->second.dev == key.dev &&
      it->second.ino == key.ino && it->second.size == key.size &&
      it->second.mtime_ns == key.mtime_ns &&
      it->second.ctime_ns == key.ctime_ns) {
    return it->second.config;
  }
  ++parses_;
  auto config = ReadAgentConfig(file.path);
  entries_.erase(file.path);
  if (config && WallNowNs() - key.mtime_ns >= kSettledNs) {
    constexpr size_t kMaxFiles = 16;
    if (entries_.size() >= kMaxFiles)
      entries_.clear();
    key.config = *config;
    entries_.emplace(file.path, std::move(key));
  }
  return config;
}

}  // namespace baton
