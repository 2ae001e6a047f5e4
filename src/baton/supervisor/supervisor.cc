#include "baton/supervisor/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "baton/ipc/line_channel.h"
#include "baton/ipc/unix_socket.h"
#include "baton/loop/event_loop.h"
#include "baton/supervisor/protocol.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

// Without a client for this long after start-up, the supervisor exits (its
// starter died before connecting).
constexpr auto kStartupGrace = std::chrono::seconds(10);

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings)
    out.push_back(const_cast<char*>(s.data()));
  out.push_back(nullptr);
  return out;
}

// Finds `program` as execvp would, but on the task's PATH rather than ours.
// Returns an errno value on failure.
std::expected<std::string, int> ResolveProgram(
    const std::string& program, const std::vector<std::string>& env,
    const std::string& cwd) {
  if (program.find('/') != std::string::npos)
    return program;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& entry : env) {
    if (entry.starts_with("PATH="))
      path = entry.substr(5);
  }
  int err = ENOENT;
  for (size_t start = 0;;) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end - start);
    if (dir.empty() || dir[0] != '/')
      dir = cwd + "/" + dir;
    std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
      err = EACCES;
    }
    if (end == std::string::npos)
      return std::unexpected(err);
    start = end + 1;
  }
}

class Supervisor {
 public:
  explicit Supervisor(const StatePaths& paths) : paths_(paths) {}
  int Run(UniqueFd ready);

 private:
  struct Task {
    std::string id;
    pid_t pid = 0;    // Also the process group and session id.
    UniqueFd log_fd;  // Kept open until the exit, for the disk-full check.
    UniqueFd stdin_holder;  // A FIFO stdin's writer, until close_stdin.
    std::string exit_file;
    milliseconds grace{0};                  // For the timeout.
    ExitCause cause = ExitCause::kNatural;  // Else a stop is under way.
    TimerId deadline = 0;                   // 0 = none.
  };

  // Signals as loop events, then the socket.
  Status Listen();
  void OnAccept();
  void OnLine(std::string_view line);
  void Send(const std::string& line);
  void Spawn(const SpawnRequest& request);
  // The fds the task's stdin, stdout and stderr are made from.
  struct Stdio {
    int in = -1;  // -1 = /dev/null.
    int out = -1;
    int err = -1;
  };
  Result<pid_t> StartProcess(const SpawnRequest& request,
                             const std::string& cwd, Stdio stdio);
  void Stop(Task& task, milliseconds grace, ExitCause cause);
  void ReapChildren();
  void Finish(std::map<std::string, Task>::iterator it, int status);

  StatePaths paths_;
  EventLoop loop_;
  UniqueFd listen_fd_;
  std::unique_ptr<LineChannel> client_;
  // Unsolicited events go only to a client that said hello, so that the
  // first line it reads is the hello reply.
  bool client_said_hello_ = false;
  std::map<std::string, Task> tasks_;  // Live tasks by id.
  // Pending SIGKILLs by process group, also of groups whose leader is gone.
  std::map<pid_t, TimerId> escalations_;
  // Exiting when idle waits until a client came or the start-up grace ran
  // out.
  bool idle_exit_armed_ = false;
  bool stop_requested_ = false;
};

int Supervisor::Run(UniqueFd ready) {
  auto signal_ready = [&](char byte) {
    if (ready)
      (void)WriteAll(ready.get(), std::string_view(&byte, 1));
    ready.reset();
  };
  std::string log_path = paths_.home + "/supervisor.log";
  UniqueFd log(::open(log_path.c_str(),
                      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (log)
    SetLogTarget(log.get(), "supervisor");

  std::string lock_path = paths_.supervisor_lock();
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (lock && errno == EWOULDBLOCK) {
      // Not an error: the starter sees EOF on its pipe and connects to the
      // supervisor that won.
      BATON_LOG_INFO("another supervisor holds {}; exiting", lock_path);
      return 0;
    }
    BATON_LOG_ERROR("lock {}: {}", lock_path, std::strerror(errno));
    signal_ready('E');
    return 1;
  }

  // Survive the terminal and batond going away; a write to a closed socket
  // must be an error, not a death.
  for (int ignored : {SIGPIPE, SIGHUP, SIGINT})
    ::signal(ignored, SIG_IGN);
  // Orphaned grandchildren are reparented to us, so that we reap them and
  // their process groups stay ours to kill.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    BATON_LOG_WARN("PR_SET_CHILD_SUBREAPER: {}", std::strerror(errno));
  }
  if (::chdir("/") != 0)
    BATON_LOG_WARN("chdir /: {}", std::strerror(errno));
  if (auto listening = Listen(); !listening) {
    BATON_LOG_ERROR("start-up failed: {}", listening.error().message);
    signal_ready('E');
    return 1;
  }
  loop_.Schedule(std::chrono::steady_clock::now() + kStartupGrace,
                 [this] { idle_exit_armed_ = true; });
  BATON_LOG_INFO("listening on {}", paths_.supervisor_socket());
  signal_ready('R');

  int exit_code = 0;
  for (;;) {
    if (client_)
      client_->Flush();
    if (client_ && client_->closed()) {
      client_.reset();
      BATON_LOG_INFO("batond disconnected; {} tasks live", tasks_.size());
    }
    if (tasks_.empty() && escalations_.empty() &&
        (stop_requested_ || (!client_ && idle_exit_armed_))) {
      break;
    }
    if (auto ran = loop_.RunOnce(std::chrono::hours(1)); !ran) {
      BATON_LOG_ERROR("event loop: {}", ran.error().message);
      exit_code = 1;
      break;
    }
  }
  // We still hold the lock, so the socket file is ours to remove.
  loop_.RemoveFd(listen_fd_.get());
  ::unlink(paths_.supervisor_socket().c_str());
  BATON_LOG_INFO("exiting ({})", exit_code);
  return exit_code;
}

Status Supervisor::Listen() {
  auto on_term = [this] {
    if (tasks_.empty()) {
      stop_requested_ = true;
    } else {
      BATON_LOG_WARN("SIGTERM ignored: {} tasks live", tasks_.size());
    }
  };
  if (auto ok = loop_.HandleSignal(SIGCHLD, [this] { ReapChildren(); }); !ok) {
    return ok;
  }
  if (auto ok = loop_.HandleSignal(SIGTERM, on_term); !ok)
    return ok;
  auto fd = ListenUnix(paths_.supervisor_socket());
  if (!fd)
    return std::unexpected(fd.error());
  listen_fd_ = std::move(*fd);
  return loop_.AddFd(listen_fd_.get(), EPOLLIN,
                     [this](uint32_t) { OnAccept(); });
}

void Supervisor::OnAccept() {
  for (;;) {
    auto fd = AcceptSameUid(listen_fd_.get());
    if (!fd) {
      if (fd.error().code == ErrorCode::kUnavailable)
        return;
      BATON_LOG_WARN("accept: {}", fd.error().message);
      if (fd.error().code == ErrorCode::kPermissionDenied)
        continue;
      return;
    }
    if (client_)
      BATON_LOG_INFO("a new batond connection replaces the old");
    client_ = std::make_unique<LineChannel>(
        &loop_, std::move(*fd), [this](std::string_view line) { OnLine(line); },
        [] {});
    client_said_hello_ = false;
    idle_exit_armed_ = true;
  }
}

void Supervisor::Send(const std::string& line) {
  if (client_)
    client_->Send(line);
}

void Supervisor::OnLine(std::string_view line) {
  auto request = ParseSupervisorRequest(line);
  if (!request) {
    BATON_LOG_WARN("ignored a message from batond: {}",
                   request.error().message);
    return;
  }
  if (std::holds_alternative<HelloRequest>(*request)) {
    client_said_hello_ = true;
    HelloReply hello{::getpid(), {}};
    for (const auto& [id, task] : tasks_)
      hello.live.push_back({id, task.pid});
    Send(EncodeMessage(hello));
  } else if (auto* spawn = std::get_if<SpawnRequest>(&*request)) {
    Spawn(*spawn);
  } else if (auto* close = std::get_if<CloseStdinRequest>(&*request)) {
    if (auto it = tasks_.find(close->task); it != tasks_.end())
      it->second.stdin_holder.reset();
  } else if (auto* kill = std::get_if<KillRequest>(&*request)) {
    auto it = tasks_.find(kill->task);
    if (it != tasks_.end())
      Stop(it->second, kill->grace, ExitCause::kKilled);
  }
}

void Supervisor::Spawn(const SpawnRequest& request) {
  auto fail = [&](std::string error) {
    BATON_LOG_WARN("{}: spawn failed: {}", request.task, error);
    Send(EncodeMessage(SpawnFailedReply{request.task, std::move(error)}));
  };
  if (request.argv.empty())
    return fail("empty argv");
  if (tasks_.contains(request.task)) {
    return fail(fmt::format("task {} is already live", request.task));
  }
  // Both stdout and stderr write to this one description (O_APPEND), so the
  // output lands merged, in order and without passing through us.
  UniqueFd log(::open(request.log.c_str(),
                      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!log) {
    return fail(fmt::format("open output log {}: {}", request.log,
                            std::strerror(errno)));
  }
  UniqueFd err_file, stdin_file, stdin_holder;
  if (!request.stderr_path.empty()) {
    err_file.reset(::open(request.stderr_path.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    if (!err_file) {
      return fail(fmt::format("open stderr log {}: {}", request.stderr_path,
                              std::strerror(errno)));
    }
  }
  if (!request.stdin_path.empty()) {
    if (request.stdin_fifo) {
      // Our writer first, so the task's read-only open does not block and
      // the task never sees EOF while batond (the real writer) is away.
      stdin_holder.reset(
          ::open(request.stdin_path.c_str(), O_RDWR | O_CLOEXEC));
      stdin_file.reset(::open(request.stdin_path.c_str(),
                              O_RDONLY | O_NONBLOCK | O_CLOEXEC));
      if (stdin_file) {
        int flags = ::fcntl(stdin_file.get(), F_GETFL);
        ::fcntl(stdin_file.get(), F_SETFL, flags & ~O_NONBLOCK);
      }
    } else {
      stdin_file.reset(
          ::open(request.stdin_path.c_str(), O_RDONLY | O_CLOEXEC));
    }
    if (!stdin_file || (request.stdin_fifo && !stdin_holder)) {
      return fail(fmt::format("open stdin {}: {}", request.stdin_path,
                              std::strerror(errno)));
    }
  }
  // posix_spawn reports a failed chdir and a failed exec with the same
  // errno, so check the directory first for a message that names it.
  std::string cwd = request.cwd.empty() ? "/" : request.cwd;
  struct stat st {};
  int cwd_error = ::stat(cwd.c_str(), &st) != 0 ? errno
                  : S_ISDIR(st.st_mode)         ? 0
                                                : ENOTDIR;
  if (cwd_error != 0) {
    return fail(
        fmt::format("working directory {}: {}", cwd, std::strerror(cwd_error)));
  }
  // A stale record would read as this run's end.
  ::unlink(request.exit_file.c_str());
  Stdio stdio{stdin_file ? stdin_file.get() : -1, log.get(),
              err_file ? err_file.get() : log.get()};
  auto pid = StartProcess(request, cwd, stdio);
  if (!pid)
    return fail(pid.error().message);

  Task& task = tasks_[request.task];
  task.id = request.task;
  task.pid = *pid;
  task.log_fd = std::move(log);
  task.stdin_holder = std::move(stdin_holder);
  task.exit_file = request.exit_file;
  task.grace = request.grace;
  if (request.timeout) {
    task.deadline = loop_.Schedule(
        std::chrono::steady_clock::now() + *request.timeout,
        [this, id = request.task] {
          auto it = tasks_.find(id);
          if (it == tasks_.end())
            return;
          it->second.deadline = 0;
          Stop(it->second, it->second.grace, ExitCause::kTimedOut);
        });
  }
  int64_t started_ms = WallMillis();
  BATON_LOG_INFO("{}: spawned pid {}", task.id, task.pid);
  Send(EncodeMessage(SpawnedReply{task.id, task.pid, started_ms}));
}

Result<pid_t> Supervisor::StartProcess(const SpawnRequest& request,
                                       const std::string& cwd, Stdio stdio) {
  auto program = ResolveProgram(request.argv[0], request.env, cwd);
  int err = program ? 0 : program.error();
  pid_t pid = -1;
  if (program) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    if (stdio.in >= 0) {
      posix_spawn_file_actions_adddup2(&actions, stdio.in, 0);
    } else {
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    }
    posix_spawn_file_actions_adddup2(&actions, stdio.out, 1);
    posix_spawn_file_actions_adddup2(&actions, stdio.err, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Our loop blocks SIGCHLD and SIGTERM and we ignore SIGPIPE, SIGHUP and
    // SIGINT; a task must start with none of that. Its own session keeps it
    // away from any terminal and makes pid == pgid the handle to kill.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID |
                                        POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> argv = CStrings(request.argv);
    std::vector<char*> envp = CStrings(request.env);
    err = ::posix_spawn(&pid, program->c_str(), &actions, &attr, argv.data(),
                        envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
  if (err != 0) {
    return MakeError(
        ErrorCode::kSpawnFailed,
        fmt::format("spawn \"{}\": {}", request.argv[0], std::strerror(err)),
        err);
  }
  return pid;
}

void Supervisor::Stop(Task& task, milliseconds grace, ExitCause cause) {
  // The first stop wins: its cause is what happened, its grace holds.
  if (task.cause != ExitCause::kNatural)
    return;
  task.cause = cause;
  if (task.deadline)
    loop_.Cancel(std::exchange(task.deadline, 0));
  BATON_LOG_INFO("{}: {}; SIGTERM to group {}, SIGKILL after {} ms", task.id,
                 cause == ExitCause::kTimedOut ? "timed out" : "kill", task.pid,
                 grace.count());
  ::kill(-task.pid, SIGTERM);
  // A stopped process acts on SIGTERM only once continued.
  ::kill(-task.pid, SIGCONT);
  // Keyed by the group, not the task: the leader may be reaped before the
  // grace ends while members that ignore SIGTERM live on.
  escalations_[task.pid] = loop_.Schedule(
      std::chrono::steady_clock::now() + grace, [this, pgid = task.pid] {
        escalations_.erase(pgid);
        if (::kill(-pgid, 0) == 0) {
          BATON_LOG_INFO("group {} outlived its grace: SIGKILL", pgid);
          ::kill(-pgid, SIGKILL);
        }
      });
}

void Supervisor::ReapChildren() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR)
      continue;
    if (pid <= 0)
      break;
    auto it = std::find_if(
        tasks_.begin(), tasks_.end(),
        [&](const auto& entry) { return entry.second.pid == pid; });
    // Others are orphaned grandchildren, reaped only so they leave no zombie.
    if (it != tasks_.end())
      Finish(it, status);
  }
  // A group whose last member (often a grandchild reparented to us) was
  // just reaped needs no SIGKILL: drop its escalation, so an idle
  // supervisor can exit now rather than after the grace.
  for (auto e = escalations_.begin(); e != escalations_.end();) {
    if (::kill(-e->first, 0) != 0 && errno == ESRCH) {
      loop_.Cancel(e->second);
      e = escalations_.erase(e);
    } else {
      ++e;
    }
  }
}

void Supervisor::Finish(std::map<std::string, Task>::iterator it, int status) {
  Task& task = it->second;
  ExitedEvent exited;
  exited.task = task.id;
  exited.pid = task.pid;
  if (WIFEXITED(status))
    exited.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    exited.signal = WTERMSIG(status);
  exited.cause = task.cause;
  exited.ended_ms = WallMillis();
  // A heuristic: a full file system at exit probably cut the output short.
  struct statvfs vfs {};
  exited.disk_full =
      ::fstatvfs(task.log_fd.get(), &vfs) == 0 && vfs.f_bavail == 0;
  std::string record = EncodeMessage(exited);
  // Tell batond first: a waiter is woken without paying for the file. The
  // exit file still comes before the task leaves the live set (and so the
  // hello list): for a batond that is away, the file is the only record.
  if (client_said_hello_ && client_) {
    Send(record);
    client_->Flush();
  }
  if (auto written = WriteFileAtomic(task.exit_file, record); !written) {
    BATON_LOG_ERROR("{}: exit record lost: {}", task.id,
                    written.error().message);
  }
  if (task.deadline)
    loop_.Cancel(task.deadline);
  // Nothing can join an empty group, so a pending SIGKILL could only hit a
  // new group that reuses the id.
  if (auto e = escalations_.find(task.pid);
      e != escalations_.end() && ::kill(-task.pid, 0) != 0) {
    loop_.Cancel(e->second);
    escalations_.erase(e);
  }
  BATON_LOG_INFO("{}: pid {} ended: {}", task.id, task.pid, record);
  tasks_.erase(it);
}

}  // namespace

int RunSupervisor(const StatePaths& paths, int ready_fd) {
  UniqueFd ready(ready_fd);
  // The starter cleared close-on-exec on it; tasks must not inherit it.
  if (ready)
    ::fcntl(ready.get(), F_SETFD, FD_CLOEXEC);
  Supervisor supervisor(paths);
  return supervisor.Run(std::move(ready));
}

}  // namespace baton
