#include "baton/util/state_paths.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "baton/util/file_util.h"

namespace baton {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path[0] == '/')
    return path;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr)
    return path;
  return fmt::format("{}/{}", cwd, path);
}

}  // namespace

Result<StatePaths> StatePaths::FromEnvironment(
    const std::string& home_override) {
  StatePaths paths;
  std::string home = home_override.empty() ? Env("BATON_HOME") : home_override;
  while (home.size() > 1 && home.back() == '/')
    home.pop_back();
  if (!home.empty()) {
    paths.home = AbsolutePath(home);
    paths.runtime = paths.home;
    return paths;
  }
  std::string state = Env("XDG_STATE_HOME");
  if (state.empty() || state[0] != '/') {
    std::string user_home = Env("HOME");
    if (user_home.empty()) {
      if (passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir) {
        user_home = pw->pw_dir;
      }
    }
    if (user_home.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "cannot find a state directory: HOME is not set; set "
                       "BATON_HOME to a directory of your own");
    }
    state = user_home + "/.local/state";
  }
  paths.home = state + "/baton";
  std::string runtime = Env("XDG_RUNTIME_DIR");
  paths.runtime =
      (!runtime.empty() && runtime[0] == '/') ? runtime + "/baton" : paths.home;
  return paths;
}

Status StatePaths::Prepare() const {
  const char* what =
      std::getenv("BATON_HOME") ? "BATON_HOME" : "state directory";
  if (auto ok = EnsurePrivateDir(home, what); !ok)
    return ok;
  if (runtime != home) {
    if (auto ok = EnsurePrivateDir(runtime, "runtime directory"); !ok) {
      return ok;
    }
  }
  // Unix socket paths are limited to 107 bytes.
  if (daemon_socket().size() > 107 || supervisor_socket().size() > 107) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("socket path {} is too long for a Unix "
                                 "socket (at most 107 bytes); use a shorter "
                                 "BATON_HOME",
                                 daemon_socket()));
  }
  return MakeDir(tasks_dir());
}

std::string StatePaths::tag() const {
  // FNV-1a, folded to 32 bits.
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : home) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return fmt::format("{:08x}", static_cast<uint32_t>(hash ^ (hash >> 32)));
}

}  // namespace baton
