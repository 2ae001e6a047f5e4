#include "baton/daemon/app_server_probe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "baton/core/task.h"
#include "baton/util/environment.h"
#include "baton/util/log.h"
#include "baton/util/program_path.h"
#include "baton/util/spawn_child.h"
#include "baton/util/unique_fd.h"

namespace baton {
namespace {

constexpr size_t kMaxOutput = 16384;
constexpr size_t kMaxReasonLine = 200;

// The line of `text` that says what went wrong: the first "error:" line
// (clap's), else the last non-empty one.
std::string TellingLine(const std::string& text) {
  std::string last;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(
        start, nl == std::string::npos ? std::string::npos : nl - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (line.starts_with("error:")) {
      last = line;
      break;
    }
    if (!line.empty())
      last = line;
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
  if (last.size() > kMaxReasonLine)
    last = last.substr(0, kMaxReasonLine) + "...";
  return last;
}

// The first "Usage:" line of a clap help, trimmed; "" when there is none.
std::string UsageLine(const std::string& text) {
  size_t at = 0;
  while ((at = text.find("Usage:", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      size_t nl = text.find('\n', at);
      std::string line = text.substr(
          at, nl == std::string::npos ? std::string::npos : nl - at);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
        line.pop_back();
      return line.size() > kMaxReasonLine
                 ? line.substr(0, kMaxReasonLine) + "..."
                 : line;
    }
    at += 6;
  }
  return "";
}

}  // namespace

ProbeVerdict JudgeProbe(const ProbeRun& run,
                        std::chrono::milliseconds timeout) {
  ProbeVerdict verdict;
  switch (run.end) {
    case ProbeRun::End::kExited: {
      if (run.code == 0) {
        // A codex whose top level takes a [PROMPT] (0.171.0 does) reads an
        // unknown word as the prompt: `app-server --help` then prints the
        // top-level help and exits 0. Only app-server's own usage says yes.
        std::string usage = UsageLine(run.output);
        verdict.lasting = true;
        if (usage.empty() || usage.find(" app-server") != std::string::npos) {
          verdict.mode = CodexMode::kAppServer;
          verdict.reason =
              usage.empty() ? "exit code 0" : "exit code 0: " + usage;
        } else {
          verdict.mode = CodexMode::kExec;
          verdict.reason = fmt::format(
              "exit code 0, but with the top-level help ({}): app-server "
              "was taken for a prompt",
              usage);
        }
        break;
      }
      verdict.mode = CodexMode::kExec;
      std::string line = TellingLine(run.output);
      verdict.reason = fmt::format("exit code {}{}", run.code,
                                   line.empty() ? "" : ": " + line);
      verdict.lasting =
          run.output.find("unrecognized subcommand") != std::string::npos;
      break;
    }
    case ProbeRun::End::kSignaled:
      verdict.reason =
          run.code ? "killed by " + SignalName(run.code) : "its end was lost";
      break;
    case ProbeRun::End::kTimedOut:
      verdict.reason = fmt::format("no answer within {:g} s",
                                   static_cast<double>(timeout.count()) / 1000);
      break;
    case ProbeRun::End::kSpawnFailed:
      verdict.reason =
          fmt::format("cannot run it: {}", std::strerror(run.code));
      break;
  }
  return verdict;
}

struct AppServerProbe::Probe {
  pid_t pid = 0;
  UniqueFd pidfd;
  UniqueFd err;  // The read end of its stdout and stderr; closed at EOF.
  std::string output;
  TimerId timer = 0;
  bool timed_out = false;
  std::vector<Done> waiters;

  // Reads what the pipe holds now (the fd is non-blocking); keeps the first
  // kMaxOutput bytes. False at EOF or on an error.
  bool Drain() {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(err.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno == EAGAIN;
      if (n == 0)
        return false;
      size_t room = kMaxOutput - std::min(kMaxOutput, output.size());
      output.append(buf, std::min(room, static_cast<size_t>(n)));
    }
  }
};

AppServerProbe::AppServerProbe(EventLoop* loop,
                               std::chrono::milliseconds timeout)
    : loop_(loop), timeout_(timeout) {}

AppServerProbe::~AppServerProbe() {
  for (auto& [key, probe] : running_) {
    if (probe->pidfd)
      loop_->RemoveFd(probe->pidfd.get());
    if (probe->err)
      loop_->RemoveFd(probe->err.get());
    if (probe->timer)
      loop_->Cancel(probe->timer);
    ::kill(-probe->pid, SIGKILL);
    ::waitpid(probe->pid, nullptr, 0);  // Killed: a moment, at shutdown.
  }
}

void AppServerProbe::Check(const std::vector<std::string>& command,
                           const std::vector<std::string>& env,
                           const std::string& cwd, Done done) {
  if (command.empty())
    return done({CodexMode::kUnknown, "no command", false});
  std::string dir = cwd.empty() ? "/" : cwd;
  std::vector<std::string> task_env = env.empty() ? ProcessEnvironment() : env;
  auto program = ResolveProgram(command[0], task_env, dir);
  struct stat st {};
  if (program && ::stat(program->c_str(), &st) != 0)
    program = std::unexpected(errno);
  if (!program) {
    return done({CodexMode::kUnknown,
                 fmt::format("cannot find {}: {}", command[0],
                             std::strerror(program.error())),
                 false});
  }
  Key key{*program,
          st.st_dev,
          st.st_ino,
          st.st_size,
          st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec,
          std::vector<std::string>(command.begin() + 1, command.end())};
  if (auto cached = cache_.find(key); cached != cache_.end())
    return done(cached->second);
  if (auto running = running_.find(key); running != running_.end()) {
    running->second->waiters.push_back(std::move(done));
    return;
  }

  auto fail = [&](int err) {
    ProbeRun run;
    run.end = ProbeRun::End::kSpawnFailed;
    run.code = err;
    done(JudgeProbe(run, timeout_));
  };
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return fail(errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  ::fcntl(read_end.get(), F_SETFL,
          ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);

  std::vector<std::string> argv = command;
  argv.push_back("app-server");
  argv.push_back("--help");
  // Its own session: pid == pgid, to kill.
  auto spawned = SpawnChild({.program = *program,
                             .argv = std::move(argv),
                             .env = std::move(task_env),
                             .cwd = dir,
                             .stdout_fd = write_end.get(),
                             .stderr_fd = write_end.get()});
  if (!spawned)
    return fail(spawned.error().sys_errno ? spawned.error().sys_errno : EIO);
  pid_t pid = *spawned;
  write_end.reset();  // EOF once the probe (and its children) end.
  ++probes_started_;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int err = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return fail(err);
  }

  auto probe = std::make_unique<Probe>();
  probe->pid = pid;
  probe->pidfd.reset(pidfd);
  probe->err = std::move(read_end);
  probe->waiters.push_back(std::move(done));
  Probe* p = probe.get();
  running_[key] = std::move(probe);
  BATON_LOG_INFO("probing {} app-server --help (pid {})", *program, pid);

  Status watched =
      loop_->AddFd(p->pidfd.get(), EPOLLIN,
                   [this, key, p](uint32_t) { OnProbeExit(key, p); });
  if (!watched) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ProbeRun run;
    run.code = watched.error().sys_errno ? watched.error().sys_errno : EIO;
    return Finish(key, std::move(run));  // kSpawnFailed: no answer.
  }
  if (!loop_->AddFd(p->err.get(), EPOLLIN, [this, p](uint32_t) {
        if (!p->Drain()) {
          loop_->RemoveFd(p->err.get());
          p->err.reset();
        }
      })) {
    p->err.reset();  // Read once at the exit instead (its help is small).
  }
  p->timer = loop_->Schedule(std::chrono::steady_clock::now() + timeout_, [p] {
    p->timer = 0;
    p->timed_out = true;
    ::kill(-p->pid, SIGKILL);  // Its process group: pid == pgid, unreaped.
  });
}

void AppServerProbe::OnProbeExit(const Key& key, Probe* p) {
  // Ended and not reaped yet, its group id is still its own:
  // whatever it left behind goes with it.
  siginfo_t info{};
  if (::waitid(P_PID, p->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
      info.si_pid == p->pid) {
    ::kill(-p->pid, SIGKILL);
  }
  int status = 0;
  pid_t reaped = ::waitpid(p->pid, &status, WNOHANG);
  if (reaped == 0 || (reaped < 0 && errno == EINTR))
    return;
  ProbeRun run;
  if (reaped < 0) {
    run.end = ProbeRun::End::kSignaled;  // Reaped by someone else: lost.
  } else if (p->timed_out) {
    run.end = ProbeRun::End::kTimedOut;
  } else if (WIFEXITED(status)) {
    run.end = ProbeRun::End::kExited;
    run.code = WEXITSTATUS(status);
  } else {
    run.end = ProbeRun::End::kSignaled;
    run.code = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  if (p->err)
    p->Drain();
  run.output = std::move(p->output);
  Finish(key, std::move(run));
}

void AppServerProbe::Finish(const Key& key, ProbeRun run) {
  auto it = running_.find(key);
  if (it == running_.end())
    return;
  std::unique_ptr<Probe> probe = std::move(it->second);
  running_.erase(it);
  loop_->RemoveFd(probe->pidfd.get());
  if (probe->err)
    loop_->RemoveFd(probe->err.get());
  if (probe->timer)
    loop_->Cancel(probe->timer);
  ProbeVerdict verdict = JudgeProbe(run, timeout_);
  BATON_LOG_INFO("{} app-server --help: {}", std::get<0>(key), verdict.reason);
  if (verdict.lasting)
    cache_[key] = verdict;
  for (Done& waiter : probe->waiters)
    waiter(verdict);
}

}  // namespace baton
