#include "baton/util/clean_spawn.h"

#include <signal.h>

namespace baton {

CleanSpawnAttributes::CleanSpawnAttributes() {
  posix_spawnattr_init(&attr_);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr_, &none);
  posix_spawnattr_setsigdefault(&attr_, &all);
  posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                       POSIX_SPAWN_SETSIGDEF);
}

CleanSpawnAttributes::~CleanSpawnAttributes() {
  posix_spawnattr_destroy(&attr_);
}

std::vector<char*> CStringArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace baton
