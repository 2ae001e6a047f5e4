// baton's config file: where it is, its checks, its read, and its parse as
// batond last made it (doc/agents.md, "Configuration").
#ifndef BATON_DAEMON_AGENT_CONFIG_FILE_H_
#define BATON_DAEMON_AGENT_CONFIG_FILE_H_

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "baton/daemon/agent_profiles.h"

namespace baton {

// Where the config file is. `required` when a variable named the file
// itself: then a missing file is an error, not "no config".
struct ConfigFile {
  std::string path;
  bool required = false;
};

// An environment lookup: the value, or nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;

// $BATON_CONFIG; else $BATON_HOME/config.toml when BATON_HOME is set (a
// self-contained baton, as in tests); else $XDG_CONFIG_HOME/baton/config.toml;
// else $HOME/.config/baton/config.toml. path "" when none applies (no HOME).
ConfigFile FindConfigFile(const EnvLookup& env);

// Reads `file` and parses it. A missing file that is not required gives the
// built-ins; one that is required, unreadable, or writable by others
// (it names commands to run) is kInvalidConfig. batond loads it through
// its AgentConfigCache (below).
Result<AgentConfig> LoadAgentConfig(const ConfigFile& file);

// LoadAgentConfig's two halves: the checks on the file's stat (nullopt:
// no file applies, the built-ins do), and the read and parse of a checked
// file.
Result<std::optional<struct stat>> CheckConfigFile(const ConfigFile& file);
Result<AgentConfig> ReadAgentConfig(const std::string& path);

// Each `delegate` (and each `run --on slurm`, and `agents`) needs the
// config; reading and parsing its TOML per request put a file read and a
// parse on the path of every such task. The cache stats the file per
// request (its permission checks need that anyway) and parses it again only
// when the stat says it changed.
class AgentConfigCache {
 public:
  // LoadAgentConfig(file), with the same errors, each checked afresh; the
  // parse is reused while the file has the same device, inode, size, mtime
  // and ctime, and was kept only if its mtime was kSettledMs old when it was
  // read: a file written in the clock tick of its read could change again
  // without its stat showing it (git's "racy clean"), so a file written
  // just now is read every time.
  Result<AgentConfig> Load(const ConfigFile& file);

  // How many times a file was read and parsed (tests).
  int64_t parses() const { return parses_; }

  static constexpr int64_t kSettledMs = 2000;

 private:
  // What says a file changed: the same path naming another file, or the
  // file written to (size, mtime) or touched (ctime, also on chmod).
  struct Stamp {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  struct Entry {
    Stamp stamp;
    AgentConfig config;
  };
  // By path: BATON_CONFIG can name a file per client; a few at most.
  std::map<std::string, Entry> entries_;
  int64_t parses_ = 0;
};

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_CONFIG_FILE_H_
