#include "baton/loop/command_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "baton/util/program_path.h"
#include "baton/util/spawn_child.h"
#include "baton/util/unique_fd.h"

namespace baton {

struct CommandRunner::Command {
  pid_t pid = 0;
  UniqueFd pidfd;
  UniqueFd out;  // Read ends, non-blocking; reset at EOF.
  UniqueFd err;
  std::string out_text;
  std::string err_text;
  TimerId timer = 0;
  bool timed_out = false;
  bool exited = false;  // Reaped (or never started).
  CommandResult result;
  Done done;

  // Reads what is there; false at EOF or an error.
  static bool Drain(int fd, std::string& text) {
    char buffer[8192];
    for (;;) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        size_t room = kMaxOutput - std::min(kMaxOutput, text.size());
        text.append(buffer, std::min(room, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }
};

std::string CommandResult::Describe(std::chrono::milliseconds timeout) const {
  auto first_line = [](const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    return line.size() > 400 ? line.substr(0, 400) + "..." : line;
  };
  std::string said = first_line(err.empty() ? out : err);
  switch (end) {
    case End::kExited:
      return said.empty() ? fmt::format("exit code {}", code)
                          : fmt::format("exit code {}: {}", code, said);
    case End::kSignaled:
      return fmt::format("ended by signal {}", code);
    case End::kTimedOut:
      return fmt::format("no answer within {} ms", timeout.count());
    case End::kSpawnFailed:
      return fmt::format("could not start: {}", std::strerror(code));
  }
  return "";
}

CommandRunner::CommandRunner(EventLoop* loop) : loop_(loop) {}

CommandRunner::~CommandRunner() {
  for (auto& [raw, command] : running_) {
    if (command->timer)
      loop_->Cancel(command->timer);
    for (const UniqueFd* fd : {&command->pidfd, &command->out, &command->err})
      if (*fd)
        loop_->RemoveFd(fd->get());
    if (!command->exited) {
      ::kill(-command->pid, SIGKILL);
      ::waitpid(command->pid, nullptr, 0);  // Killed: a moment.
    }
  }
}

void CommandRunner::Run(std::vector<std::string> argv,
                        std::vector<std::string> env,
                        std::chrono::milliseconds timeout, Done done,
                        std::string cwd) {
  auto command = std::make_unique<Command>();
  Command* c = command.get();
  c->done = std::move(done);
  running_[c] = std::move(command);
  // A failure is told from the loop too, never from inside Run().
  auto fail = [this, c](int err) {
    c->exited = true;
    c->result.end = CommandResult::End::kSpawnFailed;
    c->result.code = err;
    c->timer = loop_->Schedule(std::chrono::steady_clock::now(), [this, c] {
      c->timer = 0;
      Finish(c, std::move(c->result));
    });
  };
  if (argv.empty())
    return fail(EINVAL);
  auto program = ResolveProgram(argv[0], env, cwd);
  if (!program)
    return fail(program.error());
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return fail(errno);
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return fail(errno);
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  for (int fd : {out_read.get(), err_read.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto spawned = SpawnChild({.program = *program,
                             .argv = std::move(argv),
                             .env = std::move(env),
                             .cwd = cwd,
                             .stdout_fd = out_write.get(),
                             .stderr_fd = err_write.get()});
  if (!spawned)
    return fail(spawned.error().sys_errno ? spawned.error().sys_errno : EIO);
  ++started_;
  c->pid = *spawned;
  out_write.reset();  // EOF once the command (and its children) end.
  err_write.reset();
  c->pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, c->pid, 0)));
  if (!c->pidfd) {
    int err = errno;
    ::kill(-c->pid, SIGKILL);
    ::waitpid(c->pid, nullptr, 0);
    return fail(err);
  }
  c->out = std::move(out_read);
  c->err = std::move(err_read);
  if (!loop_->AddFd(c->pidfd.get(), EPOLLIN,
                    [this, c](uint32_t) { OnExit(c); })) {
    ::kill(-c->pid, SIGKILL);
    ::waitpid(c->pid, nullptr, 0);
    c->pidfd.reset();
    return fail(EIO);
  }
  for (auto [fd, text] :
       {std::pair(&c->out, &c->out_text), std::pair(&c->err, &c->err_text)}) {
    bool watched = static_cast<bool>(
        loop_->AddFd(fd->get(), EPOLLIN, [this, fd, text](uint32_t) {
          if (Command::Drain(fd->get(), *text))
            return;
          loop_->RemoveFd(fd->get());
          fd->reset();
        }));
    if (!watched)
      fd->reset();  // Its output is lost; the exit still comes.
  }
  c->timer = loop_->Schedule(std::chrono::steady_clock::now() + timeout, [c] {
    c->timer = 0;
    c->timed_out = true;
    ::kill(-c->pid, SIGKILL);  // Its process group: pid == pgid, unreaped.
  });
}

void CommandRunner::OnExit(Command* c) {
  // Ended and not yet reaped, its group id is still its own: whatever it
  // left behind holding the pipes goes with it.
  siginfo_t info{};
  if (::waitid(P_PID, c->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
      info.si_pid == c->pid) {
    ::kill(-c->pid, SIGKILL);
  }
  int status = 0;
  pid_t reaped = ::waitpid(c->pid, &status, WNOHANG);
  if (reaped == 0 || (reaped < 0 && errno == EINTR))
    return;
  loop_->RemoveFd(c->pidfd.get());
  c->pidfd.reset();
  c->exited = true;
  CommandResult& result = c->result;
  if (c->timed_out) {
    result.end = CommandResult::End::kTimedOut;
  } else if (reaped > 0 && WIFEXITED(status)) {
    result.end = CommandResult::End::kExited;
    result.code = WEXITSTATUS(status);
  } else {
    result.end = CommandResult::End::kSignaled;
    result.code = reaped > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  if (c->timer) {
    loop_->Cancel(c->timer);
    c->timer = 0;
  }
  // What it wrote is in the pipes now; a process that left its group and
  // holds them open is not waited for.
  for (auto [fd, text] :
       {std::pair(&c->out, &c->out_text), std::pair(&c->err, &c->err_text)}) {
    if (*fd)
      Command::Drain(fd->get(), *text);
  }
  Finish(c, std::move(c->result));
}

void CommandRunner::Finish(Command* c, CommandResult result) {
  auto node = running_.extract(c);
  if (node.empty())
    return;
  std::unique_ptr<Command> command = std::move(node.mapped());
  for (UniqueFd* fd : {&command->out, &command->err}) {
    if (*fd)
      loop_->RemoveFd(fd->get());
  }
  result.out = std::move(command->out_text);
  result.err = std::move(command->err_text);
  if (command->done)
    command->done(std::move(result));
}

}  // namespace baton
