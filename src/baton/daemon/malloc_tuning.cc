#include "baton/daemon/malloc_tuning.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "baton/util/detached_process.h"

namespace baton {
namespace {

// Set across the exec: "=" + the user's GLIBC_TUNABLES, or "" when unset.
constexpr char kSavedVariable[] = "BATON_SAVED_GLIBC_TUNABLES";

void RestoreUserTunables(const char* saved) {
  if (saved[0] == '=') {
    setenv("GLIBC_TUNABLES", saved + 1, 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
  unsetenv(kSavedVariable);
}

}  // namespace

void ReexecWithMallocTunables(char** argv) {
  if (const char* saved = std::getenv(kSavedVariable)) {
    std::string copy = saved;  // setenv may free it.
    RestoreUserTunables(copy.c_str());
    return;
  }
  const char* user = std::getenv("GLIBC_TUNABLES");
  std::string saved = user ? std::string("=") + user : std::string();
  std::string tunables = kDaemonMallocTunables;
  if (user && *user)
    tunables += std::string(":") + user;
  setenv(kSavedVariable, saved.c_str(), 1);
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  // By its path, so that the process keeps its name ("baton", not "exe");
  // through /proc/self/exe if the file was replaced since.
  std::string self = SelfExecutable();
  ::execv(self.c_str(), argv);
  ::execv("/proc/self/exe", argv);
  RestoreUserTunables(saved.c_str());
}

}  // namespace baton
