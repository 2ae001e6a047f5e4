// What every child baton spawns needs from posix_spawn: attributes that
// start it clean, and argv/envp as the C arrays posix_spawn takes.
#ifndef BATON_UTIL_CLEAN_SPAWN_H_
#define BATON_UTIL_CLEAN_SPAWN_H_

#include <spawn.h>

#include <string>
#include <vector>

namespace baton {

// posix_spawn attributes for a child in its own session (pid == pgid ==
// sid: the handle to kill its group, and no controlling terminal), with an
// empty signal mask and every signal at its default. baton's loops block
// the signals they read through signalfd and the supervisor ignores
// SIGPIPE, SIGHUP and SIGINT; none of that may leak into a child. (glibc
// still leaves its two internal signals, 32 and 33, ignored.)
class CleanSpawnAttributes {
 public:
  CleanSpawnAttributes();
  ~CleanSpawnAttributes();
  CleanSpawnAttributes(const CleanSpawnAttributes&) = delete;
  CleanSpawnAttributes& operator=(const CleanSpawnAttributes&) = delete;

  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

// Pointers into `strings`, null-terminated, for argv or envp. `strings`
// must outlive the result.
std::vector<char*> CStringArray(const std::vector<std::string>& strings);

}  // namespace baton

#endif  // BATON_UTIL_CLEAN_SPAWN_H_
