#include "baton/util/spawn_child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>

#include <cstring>

namespace baton {
namespace {

// posix_spawn's two set-up objects, destroyed on every path.
class Attributes {
 public:
  Attributes() : error_(::posix_spawnattr_init(&attr_)) {}
  ~Attributes() {
    if (error_ == 0)
      ::posix_spawnattr_destroy(&attr_);
  }
  Attributes(const Attributes&) = delete;
  Attributes& operator=(const Attributes&) = delete;
  int init_error() const { return error_; }
  posix_spawnattr_t* get() { return &attr_; }

 private:
  posix_spawnattr_t attr_;
  int error_;
};

class FileActions {
 public:
  FileActions() : error_(::posix_spawn_file_actions_init(&actions_)) {}
  ~FileActions() {
    if (error_ == 0)
      ::posix_spawn_file_actions_destroy(&actions_);
  }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  int init_error() const { return error_; }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
  int error_;
};

// Pointers into `strings`, null-terminated, for argv or envp. `strings`
// must outlive the result.
std::vector<char*> CStringArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Own session, empty mask, default signals.
int SetUpAttributes(posix_spawnattr_t* attr, const char** failed) {
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if (int err = ::posix_spawnattr_setsigmask(attr, &none); err != 0) {
    *failed = "posix_spawnattr_setsigmask";
    return err;
  }
  if (int err = ::posix_spawnattr_setsigdefault(attr, &all); err != 0) {
    *failed = "posix_spawnattr_setsigdefault";
    return err;
  }
  short flags =
      POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (int err = ::posix_spawnattr_setflags(attr, flags); err != 0) {
    *failed = "posix_spawnattr_setflags";
    return err;
  }
  return 0;
}

// The folder, the three stdio fds, then nothing else.
int SetUpFileActions(posix_spawn_file_actions_t* actions, const ChildSpec& spec,
                     const char** failed) {
  if (int err =
          ::posix_spawn_file_actions_addchdir_np(actions, spec.cwd.c_str());
      err != 0) {
    *failed = "posix_spawn_file_actions_addchdir_np";
    return err;
  }
  const int sources[3] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd};
  for (int target = 0; target < 3; ++target) {
    int err = 0;
    if (sources[target] >= 0) {
      // dup2 clears close-on-exec on the copy (and, since POSIX 2024 and
      // glibc 2.29, on an fd that is already `target`).
      err =
          ::posix_spawn_file_actions_adddup2(actions, sources[target], target);
      *failed = "posix_spawn_file_actions_adddup2";
    } else {
      err = ::posix_spawn_file_actions_addopen(
          actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
      *failed = "posix_spawn_file_actions_addopen";
    }
    if (err != 0)
      return err;
  }
  // Our fds are opened close-on-exec; this also holds for any a library
  // opened without it.
  if (int err = ::posix_spawn_file_actions_addclosefrom_np(actions, 3);
      err != 0) {
    *failed = "posix_spawn_file_actions_addclosefrom_np";
    return err;
  }
  return 0;
}

}  // namespace

Result<pid_t> SpawnChild(const ChildSpec& spec) {
  if (spec.argv.empty() || spec.program.empty() || spec.cwd.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "spawn: the program, argv and folder must not be empty");
  }
  auto fail = [&](const char* call, int err) {
    std::string message =
        call
            ? fmt::format("spawn \"{}\": {}: {}", spec.argv[0], call,
                          std::strerror(err))
            : fmt::format("spawn \"{}\": {}", spec.argv[0], std::strerror(err));
    return MakeError(ErrorCode::kSpawnFailed, std::move(message), err);
  };
  Attributes attr;
  if (attr.init_error() != 0)
    return fail("posix_spawnattr_init", attr.init_error());
  FileActions actions;
  if (actions.init_error() != 0)
    return fail("posix_spawn_file_actions_init", actions.init_error());
  const char* failed = nullptr;
  if (int err = SetUpAttributes(attr.get(), &failed); err != 0)
    return fail(failed, err);
  if (int err = SetUpFileActions(actions.get(), spec, &failed); err != 0)
    return fail(failed, err);
  std::vector<char*> argv = CStringArray(spec.argv);
  std::vector<char*> envp = CStringArray(spec.env);
  pid_t pid = -1;
  if (int err = ::posix_spawn(&pid, spec.program.c_str(), actions.get(),
                              attr.get(), argv.data(), envp.data());
      err != 0) {
    return fail(nullptr, err);
  }
  return pid;
}

}  // namespace baton
