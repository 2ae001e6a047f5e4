// baton's config file as batond last parsed it, kept while the file is
// unchanged. Each `delegate` (and each `run --on slurm`, and `agents`)
// needs the config; reading and parsing its TOML per request put a file
// read and a parse on the path of every such task. The cache stats the
// file per request (its permission checks need that anyway) and parses it
// again only when the stat says it changed.
#ifndef BATON_DAEMON_AGENT_CONFIG_CACHE_H_
#define BATON_DAEMON_AGENT_CONFIG_CACHE_H_

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <string>

#include "baton/daemon/agent_profiles.h"

namespace baton {

class AgentConfigCache {
 public:
  // LoadAgentConfig(file), with the same errors, each checked afresh; the
  // parse is reused while the file has the same device, inode, size, mtime
  // and ctime, and was kept only if its mtime was kSettledNs old when it was
  // read: a file written in the clock tick of its read could change again
  // without its stat showing it (git's "racy clean"), so a file written
  // just now is read every time.
  Result<AgentConfig> Load(const ConfigFile& file);

  // How many times a file was read and parsed (tests).
  int64_t parses() const { return parses_; }

  static constexpr int64_t kSettledNs = 2'000'000'000;

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    AgentConfig config;
  };
  // By path: BATON_CONFIG can name a file per client; a few at most.
  std::map<std::string, Entry> entries_;
  int64_t parses_ = 0;
};

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_CONFIG_CACHE_H_
