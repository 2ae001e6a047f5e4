#include "baton/util/run_to_end.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "baton/util/duration.h"
#include "baton/util/spawn_child.h"
#include "baton/util/unique_fd.h"

namespace baton {

std::string RunOutcome::Said() const {
  std::string text = err;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

Result<RunOutcome> RunToEnd(std::string program, std::vector<std::string> argv,
                            const std::vector<std::string>& env,
                            const std::string& cwd,
                            std::chrono::milliseconds timeout) {
  std::string argv0 = argv.empty() ? program : argv.front();
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return std::unexpected(ErrnoError("pipe", errno));
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return std::unexpected(ErrnoError("pipe", errno));
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  auto pid = SpawnChild({.program = std::move(program),
                         .argv = std::move(argv),
                         .env = env,
                         .cwd = cwd,
                         .stdout_fd = out_write.get(),
                         .stderr_fd = err_write.get()});
  if (!pid)
    return std::unexpected(pid.error());
  out_write.reset();
  err_write.reset();

  // Both pipes are read as they fill: a program that writes much to one while
  // we block on the other would never end.
  RunOutcome result;
  struct pollfd fds[2] = {{out_read.get(), POLLIN, 0},
                          {err_read.get(), POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      // Its own session (SpawnChild): the group is it and its helpers.
      ::kill(-*pid, SIGKILL);
      result.timed_out = true;
      result.err += fmt::format("{} did not finish within {} and was stopped\n",
                                argv0, FormatDuration(timeout));
      break;
    }
    int ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll skips a negative fd.
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                           : -1;
  return result;
}

}  // namespace baton
