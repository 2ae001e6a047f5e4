#include "baton/util/spawn_child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "baton/util/unique_fd.h"

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

// `spawn "<argv0>": <call>: <strerror>`, or without the call for the exec
// itself: how every failure of SpawnChild reads, by either path.
Error SpawnError(const ChildSpec& spec, std::string_view call, int err) {
  std::string message =
      call.empty()
          ? fmt::format("spawn \"{}\": {}", spec.argv[0], std::strerror(err))
          : fmt::format("spawn \"{}\": {}: {}", spec.argv[0], call,
                        std::strerror(err));
  return Error{ErrorCode::kSpawnFailed, std::move(message), err};
}

// What the child reports before it dies: the step that failed and its
// errno. Nothing arrives when the exec succeeded (the pipe is close-on-exec).
struct ChildFailure {
  int step = 0;  // A ChildStep; kJoin + i for the i-th cgroup.
  int err = 0;
};
enum ChildStep { kExec, kSetsid, kChdir, kStdio, kCloseRange, kRlimit, kJoin };
constexpr const char* kChildSteps[] = {"",     "setsid",      "chdir",
                                       "dup2", "close_range", "setrlimit"};

// The child's announcement (ChildSpec): composed on the stack, since a
// vforked child may not allocate.
void Announce(const ChildSpec& spec) {
  char line[512];
  char digits[24];
  size_t n_digits = 0;
  for (auto pid = static_cast<unsigned long>(::getpid());
       pid > 0 || n_digits == 0; pid /= 10) {
    digits[n_digits++] = static_cast<char>('0' + pid % 10);
  }
  const std::string& before = spec.announce_before_pid;
  const std::string& after = spec.announce_after_pid;
  size_t size = before.size() + n_digits + after.size();
  if (size > sizeof line)
    return;
  std::memcpy(line, before.data(), before.size());
  for (size_t i = 0; i < n_digits; ++i)
    line[before.size() + i] = digits[n_digits - 1 - i];
  std::memcpy(line + before.size() + n_digits, after.data(), after.size());
  (void)!::write(spec.announce_fd, line, size);
}

// The rest of a vforked child, up to its exec. It runs in the caller's
// memory, on the caller's stack below the caller's frame, while the
// calling thread waits and the others run on: only async-signal-safe calls
// on what the parent prepared, no allocation, no return, and nothing
// written that the parent reads but the report pipe. (Under TSan, vfork is
// a fork; the same code is right for both.)
[[noreturn]] void RunVforkedChild(const ChildSpec& spec, char* const* argv,
                                  char* const* envp, int report) {
  auto die = [report](int step) {
    ChildFailure failure{step, errno};
    (void)!::write(report, &failure, sizeof failure);
    ::_exit(127);
  };
  // Its own copy of the dispositions (vfork shares memory, not them): back
  // to the defaults before the parent's full mask is lifted, so that no
  // handler of the parent's ever runs in here.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    ::sigaction(sig, &default_action, nullptr);  // Fails for KILL, STOP.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::setsid() < 0)
    die(kSetsid);
  // Into its cgroups before anything else runs in it: what it forks is
  // born inside.
  for (size_t i = 0; i < spec.join_cgroups.size(); ++i) {
    int fd = ::open(spec.join_cgroups[i].c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1)
      die(kJoin + static_cast<int>(i));
    ::close(fd);
  }
  for (size_t i = 0; i < spec.rlimits.size(); ++i) {
    struct rlimit limit {
      spec.rlimits[i].second, spec.rlimits[i].second
    };
    if (::setrlimit(spec.rlimits[i].first, &limit) != 0)
      die(kRlimit);
  }
  if (::chdir(spec.cwd.c_str()) != 0)
    die(kChdir);
  const int sources[3] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd};
  for (int target = 0; target < 3; ++target) {
    int source = sources[target];
    if (source < 0) {
      source = ::open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
      if (source < 0)
        die(kStdio);
    }
    if (source == target) {
      if (::fcntl(target, F_SETFD, 0) != 0)
        die(kStdio);
    } else if (::dup2(source, target) < 0) {
      die(kStdio);
    }
  }
  // Every other fd is closed by the exec, the report pipe's included.
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    die(kCloseRange);
  if (spec.announce_fd >= 0)
    Announce(spec);
  ::execve(spec.program.c_str(), argv, envp);
  die(kExec);
  ::_exit(127);  // die() does; the lambda cannot say so.
}

// The vfork alone in its frame: nothing the parent keeps lives across it
// (-Wclobbered), and the child never returns into it.
[[gnu::noinline]] pid_t Vfork(const ChildSpec& spec, char* const* argv,
                              char* const* envp, int report) {
  pid_t pid = ::vfork();
  if (pid == 0)
    RunVforkedChild(spec, argv, envp, report);
  return pid;
}

// SpawnChild by vfork, for what posix_spawn cannot set up. vfork, as
// posix_spawn's own clone(CLONE_VM | CLONE_VFORK): no copy of the
// caller's page tables, which a fork of the supervisor cost 0.4-0.6 ms of
// a limited task's start (doc/benchmarks-limits.md).
Result<pid_t> VforkChild(const ChildSpec& spec) {
  std::vector<char*> argv = CStringArray(spec.argv);
  std::vector<char*> envp = CStringArray(spec.env);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return std::unexpected(SpawnError(spec, "pipe2", errno));
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  // No signal is taken between the vfork and the child's own mask: a
  // handler of ours would run in the child, on our memory.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = Vfork(spec, argv.data(), envp.data(), write_end.get());
  int vfork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  write_end.reset();
  if (pid < 0)
    return std::unexpected(SpawnError(spec, "vfork", vfork_error));
  // The child has exec'd or died by now (vfork waits for either), so this
  // read does not block; it also holds under TSan, where vfork is a fork.
  ChildFailure failure;
  ssize_t got;
  do {
    got = ::read(read_end.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got <= 0)
    return pid;  // Exec'd.
  // Reaped here unless the caller's own reaping got it first.
  (void)::waitpid(pid, nullptr, 0);
  std::string call;
  if (failure.step >= kJoin) {
    size_t i = static_cast<size_t>(failure.step - kJoin);
    call =
        fmt::format("join cgroup {}",
                    i < spec.join_cgroups.size() ? spec.join_cgroups[i] : "?");
  } else if (failure.step > kExec) {
    call = kChildSteps[failure.step];
  }
  return std::unexpected(SpawnError(spec, call, failure.err));
}

}  // namespace

Result<pid_t> SpawnChild(const ChildSpec& spec) {
  if (spec.argv.empty() || spec.program.empty() || spec.cwd.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "spawn: the program, argv and folder must not be empty");
  }
  if (!spec.join_cgroups.empty() || !spec.rlimits.empty() ||
      spec.announce_fd >= 0) {
    return VforkChild(spec);
  }
  auto fail = [&](const char* call, int err) {
    return std::unexpected(SpawnError(spec, call ? call : "", err));
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
