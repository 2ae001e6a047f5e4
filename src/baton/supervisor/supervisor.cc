#include "baton/supervisor/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
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
#include <optional>
#include <thread>
#include <unordered_map>

#include "baton/ipc/line_channel.h"
#include "baton/ipc/unix_socket.h"
#include "baton/loop/event_loop.h"
#include "baton/supervisor/protocol.h"
#include "baton/supervisor/spawn_pool.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

// Without a client for this long after start-up, the supervisor exits (its
// starter died before connecting).
constexpr auto kStartupGrace = std::chrono::seconds(10);

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
  void Spawn(SpawnRequest request);
  void OnSpawned(SpawnOutcome outcome);
  // Answers a hello once no spawn is under way, so that its live list is
  // complete.
  void MaybeAnswerHello();
  void Stop(Task& task, milliseconds grace, ExitCause cause);
  void ReapChildren();
  void Finish(std::map<std::string, Task>::iterator it, int status);
  // Writes the exit records batond has not acknowledged to their files: it
  // went away, so the files are now their only record.
  void WriteUnackedExits();
  static void WriteExitFile(const std::string& task, const std::string& file,
                            const std::string& record);
  Task* FindByPid(pid_t pid);

  StatePaths paths_;
  EventLoop loop_;
  UniqueFd listen_fd_;
  std::unique_ptr<LineChannel> client_;
  // Unsolicited events go only to a client that said hello, so that the
  // first line it reads is the hello reply.
  bool client_said_hello_ = false;
  std::map<std::string, Task> tasks_;  // Live tasks by id.
  std::unordered_map<pid_t, std::string> ids_by_pid_;
  // Tasks handed to the pool and not yet started, with what batond asked
  // for them meanwhile.
  struct Starting {
    bool close_stdin = false;
    std::optional<milliseconds> kill_grace;
  };
  std::map<std::string, Starting> starting_;
  // Children reaped while spawns were under way whose pid no task had yet:
  // a task that ended before its spawn's outcome came back, or an orphaned
  // grandchild. Cleared once nothing is starting.
  std::unordered_map<pid_t, int> early_exits_;
  bool hello_pending_ = false;
  std::unique_ptr<SpawnPool> pool_;
  // Pending SIGKILLs by process group, also of groups whose leader is gone.
  std::map<pid_t, TimerId> escalations_;
  // Exit records sent to batond and not yet acknowledged (it acknowledges
  // once it has committed the task's end): task -> {exit file, record}.
  std::map<std::string, std::pair<std::string, std::string>> unacked_exits_;
  // Environments batond defined on this connection (EnvRequest), by id.
  static constexpr size_t kMaxEnvironments = 256;
  std::unordered_map<uint64_t, std::shared_ptr<const std::vector<std::string>>>
      environments_;
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
      WriteUnackedExits();
      BATON_LOG_INFO("batond disconnected; {} tasks live", tasks_.size());
    }
    if (tasks_.empty() && escalations_.empty() && starting_.empty() &&
        (stop_requested_ || (!client_ && idle_exit_armed_))) {
      break;
    }
    if (auto ran = loop_.RunOnce(std::chrono::hours(1)); !ran) {
      BATON_LOG_ERROR("event loop: {}", ran.error().message);
      exit_code = 1;
      break;
    }
  }
  WriteUnackedExits();
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
  // After the signals are blocked: the threads inherit the mask.
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  pool_ = std::make_unique<SpawnPool>(
      &loop_, std::clamp(threads, 2, 4),
      [this](SpawnOutcome outcome) { OnSpawned(std::move(outcome)); });
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
    if (client_) {
      BATON_LOG_INFO("a new batond connection replaces the old");
      // Before the new batond's hello: a task missing from its live list
      // must have its exit file.
      WriteUnackedExits();
    }
    client_ = std::make_unique<LineChannel>(
        &loop_, std::move(*fd), [this](std::string_view line) { OnLine(line); },
        [] {});
    client_said_hello_ = false;
    hello_pending_ = false;
    idle_exit_armed_ = true;
    environments_.clear();
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
    hello_pending_ = true;
    MaybeAnswerHello();
  } else if (auto* spawn = std::get_if<SpawnRequest>(&*request)) {
    Spawn(std::move(*spawn));
  } else if (auto* close = std::get_if<CloseStdinRequest>(&*request)) {
    if (auto it = tasks_.find(close->task); it != tasks_.end())
      it->second.stdin_holder.reset();
    if (auto it = starting_.find(close->task); it != starting_.end())
      it->second.close_stdin = true;
  } else if (auto* env = std::get_if<EnvRequest>(&*request)) {
    if (environments_.size() >= kMaxEnvironments &&
        !environments_.contains(env->id)) {
      BATON_LOG_WARN("ignored environment {}: {} are defined already", env->id,
                     kMaxEnvironments);
      return;
    }
    environments_[env->id] =
        std::make_shared<const std::vector<std::string>>(std::move(env->env));
  } else if (auto* ack = std::get_if<AckRequest>(&*request)) {
    for (const std::string& task : ack->tasks)
      unacked_exits_.erase(task);
  } else if (auto* kill = std::get_if<KillRequest>(&*request)) {
    if (auto it = tasks_.find(kill->task); it != tasks_.end())
      Stop(it->second, kill->grace, ExitCause::kKilled);
    if (auto it = starting_.find(kill->task);
        it != starting_.end() && !it->second.kill_grace) {
      it->second.kill_grace = kill->grace;
    }
  }
}

void Supervisor::MaybeAnswerHello() {
  if (!hello_pending_ || !starting_.empty())
    return;
  hello_pending_ = false;
  client_said_hello_ = true;
  HelloReply hello;
  hello.pid = ::getpid();
  for (const auto& [id, task] : tasks_)
    hello.live.push_back({id, task.pid});
  Send(EncodeMessage(hello));
}

void Supervisor::Spawn(SpawnRequest request) {
  if (tasks_.contains(request.task) || starting_.contains(request.task)) {
    std::string error = fmt::format("task {} is already live", request.task);
    BATON_LOG_WARN("{}: spawn failed: {}", request.task, error);
    Send(EncodeMessage(SpawnFailedReply{request.task, std::move(error)}));
    return;
  }
  if (request.env_id) {
    auto env = environments_.find(*request.env_id);
    if (env == environments_.end()) {
      std::string error =
          fmt::format("environment {} was never defined on this connection",
                      *request.env_id);
      BATON_LOG_WARN("{}: spawn failed: {}", request.task, error);
      Send(EncodeMessage(SpawnFailedReply{request.task, std::move(error)}));
      return;
    }
    request.base_env = env->second;
  }
  starting_[request.task] = {};
  pool_->Submit(std::move(request));
}

void Supervisor::OnSpawned(SpawnOutcome outcome) {
  const SpawnRequest& request = outcome.request;
  Starting asked = starting_[request.task];
  starting_.erase(request.task);
  if (!outcome.error.empty()) {
    BATON_LOG_WARN("{}: spawn failed: {}", request.task, outcome.error);
    Send(EncodeMessage(SpawnFailedReply{request.task, outcome.error}));
  } else {
    Task& task = tasks_[request.task];
    task.id = request.task;
    task.pid = outcome.pid;
    task.log_fd = std::move(outcome.log_fd);
    task.stdin_holder = std::move(outcome.stdin_holder);
    task.exit_file = request.exit_file;
    task.grace = request.grace;
    ids_by_pid_[task.pid] = task.id;
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
    BATON_LOG_INFO("{}: spawned pid {}", task.id, task.pid);
    Send(EncodeMessage(SpawnedReply{task.id, task.pid, WallMillis()}));
    if (asked.close_stdin)
      task.stdin_holder.reset();
    if (asked.kill_grace)
      Stop(task, *asked.kill_grace, ExitCause::kKilled);
    // Reaped before we knew its pid: it ended now, after its spawned reply.
    if (auto early = early_exits_.find(task.pid); early != early_exits_.end()) {
      int status = early->second;
      early_exits_.erase(early);
      Finish(tasks_.find(task.id), status);
    }
  }
  if (starting_.empty())
    early_exits_.clear();  // The rest were grandchildren.
  MaybeAnswerHello();
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
    // Others are orphaned grandchildren, reaped only so they leave no
    // zombie, or tasks whose spawn outcome is still on its way.
    if (auto id = ids_by_pid_.find(pid); id != ids_by_pid_.end()) {
      Finish(tasks_.find(id->second), status);
    } else if (!starting_.empty()) {
      early_exits_[pid] = status;
    }
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
  // A batond that is here gets the record and keeps it in its store; until
  // it acknowledges that, we keep it too, and write the exit file only if
  // batond goes away first. A batond that is away finds the file: it is
  // written before the task leaves the live set (and so the hello list).
  if (client_said_hello_ && client_ && !client_->closed()) {
    Send(record);
    client_->Flush();
    unacked_exits_[task.id] = {task.exit_file, record};
  } else {
    WriteExitFile(task.id, task.exit_file, record);
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
  ids_by_pid_.erase(task.pid);
  tasks_.erase(it);
}

void Supervisor::WriteExitFile(const std::string& task, const std::string& file,
                               const std::string& record) {
  if (auto written = WriteFileAtomic(file, record); !written) {
    BATON_LOG_ERROR("{}: exit record lost: {}", task, written.error().message);
  }
}

void Supervisor::WriteUnackedExits() {
  for (const auto& [task, file_and_record] : unacked_exits_)
    WriteExitFile(task, file_and_record.first, file_and_record.second);
  if (!unacked_exits_.empty()) {
    BATON_LOG_INFO("wrote {} exit records batond had not acknowledged",
                   unacked_exits_.size());
  }
  unacked_exits_.clear();
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
