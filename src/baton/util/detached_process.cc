#include "baton/util/detached_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "baton/util/file_util.h"
#include "baton/util/unique_fd.h"

namespace baton {

std::string SelfExecutable() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return "baton";
  return std::string(buf, static_cast<size_t>(n));
}

Status StartDetached(std::vector<std::string> argv,
                     std::chrono::milliseconds ready_timeout,
                     std::function<void(int ready_fd)> child_entry) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return std::unexpected(ErrnoError("pipe", errno));
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  int ready = write_end.get();
  std::string fd_text = std::to_string(ready);
  for (auto& arg : argv) {
    for (size_t at; (at = arg.find("{ready_fd}")) != std::string::npos;) {
      arg.replace(at, 10, fd_text);
    }
  }
  // Built before fork: the child only makes async-signal-safe calls.
  std::vector<char*> args;
  for (auto& arg : argv)
    args.push_back(arg.data());
  args.push_back(nullptr);

  pid_t child = ::fork();
  if (child < 0)
    return std::unexpected(ErrnoError("fork", errno));
  if (child == 0) {
    // Intermediate: a new session, then fork again so the helper is
    // adopted by init (or a subreaper), never our zombie or our child, and
    // survives our death, our terminal and our process group.
    ::setsid();
    pid_t grandchild = ::fork();
    if (grandchild != 0)
      ::_exit(grandchild < 0 ? 1 : 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::close_range(3, ready - 1, 0);
    ::close_range(ready + 1, ~0u, 0);
    int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int stdio = 0; stdio < 3; ++stdio)
      ::dup2(null_fd, stdio);
    if (child_entry)
      child_entry(ready);
    ::fcntl(ready, F_SETFD, 0);  // Inherited across exec.
    ::execv(args[0], args.data());
    (void)!::write(ready, "X", 1);
    ::_exit(127);
  }
  write_end.reset();  // So that EOF means the process closed its end.
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError(ErrorCode::kSpawnFailed, argv[0] + ": fork failed");
  }

  std::string reply;
  auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return MakeError(ErrorCode::kTimeout,
                       argv[0] + " did not become ready in time");
    }
    pollfd pfd{read_end.get(), POLLIN, 0};
    int n_ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (n_ready < 0 && errno == EINTR)
      continue;
    if (n_ready < 0)
      return std::unexpected(ErrnoError("poll", errno));
    if (n_ready == 0)
      continue;
    char buf[4096];
    ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    reply.append(buf, static_cast<size_t>(n));
    if (reply[0] == 'R')
      return {};
    if (reply[0] == 'X') {
      return MakeError(ErrorCode::kSpawnFailed,
                       "cannot run " + argv[0] + ": exec failed");
    }
  }
  if (!reply.empty() && reply[0] == 'E') {
    return MakeError(ErrorCode::kUnavailable, reply.substr(1));
  }
  return MakeError(ErrorCode::kAlreadyExists,
                   argv[0] + " exited before it was ready");
}

void ReportReady(int ready_fd) {
  if (ready_fd < 0)
    return;
  (void)WriteAll(ready_fd, "R");
  ::close(ready_fd);
}

void ReportStartFailure(int ready_fd, const std::string& message) {
  if (ready_fd < 0)
    return;
  (void)WriteAll(ready_fd, "E" + message);
  ::close(ready_fd);
}

}  // namespace baton
