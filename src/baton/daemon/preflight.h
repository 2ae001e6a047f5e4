// Checks of a new task against the file system, done before anything is
// stored or spawned: the working directory exists and can be entered, and
// an argv command can be found (as execvp would search PATH).
#ifndef BATON_DAEMON_PREFLIGHT_H_
#define BATON_DAEMON_PREFLIGHT_H_

#include <string>
#include <unordered_map>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

// Where PATH searches found their commands. A long PATH costs a failed
// stat per entry before the one that holds the command, for every task;
// a found file is checked again on each use, so the cache never says yes
// to a command that is gone (it may name an earlier hit where a new file
// now comes first in PATH; the spawn does its own search).
class CommandCache {
 public:
  static constexpr size_t kMaxEntries = 256;

  // The cached file for (PATH, cwd, program), if it is still executable.
  const std::string* Find(const std::string& key);
  void Add(std::string key, std::string file);

 private:
  std::unordered_map<std::string, std::string> files_;
};

// Fails with kInvalidArgument and a message that says how to fix the spec.
// `cache`, if given, remembers where PATH searches found their commands.
Status PreflightTask(const TaskSpec& spec, CommandCache* cache = nullptr);

}  // namespace baton

#endif  // BATON_DAEMON_PREFLIGHT_H_
