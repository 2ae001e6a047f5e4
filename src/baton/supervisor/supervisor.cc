#include "baton/supervisor/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "baton/ipc/unix_socket.h"
#include "baton/supervisor/keeper.h"
#include "baton/supervisor/process_info.h"
#include "baton/supervisor/supervisor_internal.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

// Without a client for this long after start-up, the supervisor exits (its
// starter died before connecting).
constexpr auto kStartupGrace = std::chrono::seconds(10);

}  // namespace

int Supervisor::Run(UniqueFd ready, UniqueFd lock,
                    std::unique_ptr<Journal> journal, JournalState state) {
  auto signal_ready = [&](char byte) {
    if (ready)
      (void)WriteAll(ready.get(), std::string_view(&byte, 1));
    ready.reset();
  };
  journal_ = std::move(journal);
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
  // What holds tasks to their limits (doc/limits.md): BATON_LIMITS=rlimit
  // does without cgroups, as on a machine that has none.
  const char* forced = std::getenv("BATON_LIMITS");
  limits_ = LimitHolder::Probe(paths_.tag(), forced ? forced : "");
  BATON_LOG_INFO("limits: {}", limits_.Describe());
  // Before anyone can connect: a hello must list what we took over.
  AdoptOrphans(std::move(state));
  std::set<std::string> live;
  for (const auto& [id, task] : tasks_)
    live.insert(id);
  limits_.RemoveStale(live);
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
    // Idle, it stays while it holds exit records no file has yet.
    if (tasks_.empty() && escalations_.empty() && starting_.empty() &&
        (stop_requested_ ||
         (!client_ && idle_exit_armed_ && unwritten_exits_.empty()))) {
      break;
    }
    // Journal lines a full disk refused are written once it takes them.
    if (journal_ && !journal_timer_ && journal_->HasUnwritten()) {
      journal_timer_ = loop_.Schedule(
          std::chrono::steady_clock::now() + kJournalRetry, [this] {
            journal_timer_ = 0;
            journal_->Flush();
          });
    }
    if (auto ran = loop_.RunOnce(std::chrono::hours(1)); !ran) {
      BATON_LOG_ERROR("event loop: {}", ran.error().message);
      exit_code = 1;
      break;
    }
  }
  WriteUnackedExits();
  for (const auto& [task, exit] : unwritten_exits_)
    BATON_LOG_ERROR("{}: exit record lost at exit: {}", task, exit.record);
  limits_.RemoveFolders();
  // We still hold the lock, so the socket file is ours to remove.
  loop_.RemoveFd(listen_fd_.get());
  ::unlink(paths_.supervisor_socket().c_str());
  BATON_LOG_INFO("exiting ({})", exit_code);
  lock.reset();
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
      [this](SpawnOutcome outcome) { OnSpawned(std::move(outcome)); }, &limits_,
      journal_.get());
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
      // What the old batond sent before it went is taken in first: a spawn
      // it had sent is ours (and in the new hello), never lost between
      // two connections (doc/supervisor.md, "Exactly once").
      client_->ServeAvailable();
      // Before the new batond's hello: a task missing from its live list
      // must have its exit file.
      WriteUnackedExits();
    }
    client_ = std::make_unique<LineChannel>(
        &loop_, std::move(*fd), [this](std::string_view line) { OnLine(line); },
        [] {});
    ++connection_;
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
  if (std::holds_alternative<SupervisorHello>(*request)) {
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
    OnAck(ack->tasks);
  } else if (auto* kill = std::get_if<SupervisorKill>(&*request)) {
    if (auto it = tasks_.find(kill->task); it != tasks_.end())
      Stop(it->second, kill->grace, ExitCause::kKilled);
    if (auto it = starting_.find(kill->task);
        it != starting_.end() && !it->second.kill_grace) {
      it->second.kill_grace = kill->grace;
    }
  }
}

void Supervisor::OnAck(const std::vector<std::string>& tasks) {
  if (journal_)
    journal_->Acked(tasks);
  for (const std::string& task : tasks) {
    unacked_exits_.erase(task);
    // batond has settled a task whose end we could not know: the journal
    // need not name it to the next supervisor.
    if (auto it = std::find(unknown_ends_.begin(), unknown_ends_.end(), task);
        it != unknown_ends_.end()) {
      unknown_ends_.erase(it);
      if (journal_)
        journal_->Ended(task);
    }
  }
}

void Supervisor::MaybeAnswerHello() {
  if (!hello_pending_ || !starting_.empty())
    return;
  hello_pending_ = false;
  client_said_hello_ = true;
  SupervisorHelloReply hello;
  hello.pid = ::getpid();
  for (const auto& [id, task] : tasks_)
    hello.live.push_back({id, task.pid, task.record.started_ms});
  // Ended tasks whose records no file holds yet (the disk was full): listed
  // as live, then their records follow, as for a task that ends now.
  for (const auto& [id, exit] : unwritten_exits_)
    hello.live.push_back({id, exit.pid, exit.started_ms});
  hello.unknown_ends = unknown_ends_;
  Send(EncodeMessage(hello));
  for (auto& [id, exit] : std::exchange(unwritten_exits_, {})) {
    Send(exit.record);
    unacked_exits_[id] = std::move(exit);
  }
}

void Supervisor::Spawn(SpawnRequest request) {
  auto refuse = [&](std::string error, bool already_started) {
    BATON_LOG_WARN("{}: spawn failed: {}", request.task, error);
    Send(EncodeMessage(
        SpawnFailedReply{request.task, std::move(error), already_started}));
  };
  if (tasks_.contains(request.task) || starting_.contains(request.task)) {
    return refuse(fmt::format("task {} is already live", request.task), true);
  }
  // An id is spawned once, whatever batond believes: it may have died
  // between sending a spawn and hearing of it.
  if (spawned_ids_.Contains(request.task)) {
    return refuse(fmt::format("task {} was started before; it is not run "
                              "twice",
                              request.task),
                  true);
  }
  if (request.env_id) {
    auto env = environments_.find(*request.env_id);
    if (env == environments_.end()) {
      return refuse(
          fmt::format("environment {} was never defined on this connection",
                      *request.env_id),
          false);
    }
    request.base_env = env->second;
  }
  spawned_ids_.Insert(request.task);
  // The spawn thread journals it, right before the process can exist.
  starting_[request.task].connection = connection_;
  pool_->Submit(std::move(request));
}

void Supervisor::ScheduleDeadline(Task& task, milliseconds after) {
  task.deadline = loop_.Schedule(
      std::chrono::steady_clock::now() + after, [this, id = task.id] {
        auto it = tasks_.find(id);
        if (it == tasks_.end())
          return;
        it->second.deadline = 0;
        Stop(it->second, it->second.grace, ExitCause::kTimedOut);
      });
}

void Supervisor::OnSpawned(SpawnOutcome outcome) {
  const SpawnRequest& request = outcome.request;
  Starting asked = starting_[request.task];
  starting_.erase(request.task);
  // A batond that came since has not asked: its hello, answered once
  // nothing starts, lists the task (or it has ended and has its record).
  bool asker_here = asked.connection == connection_;
  if (!outcome.error.empty()) {
    BATON_LOG_WARN("{}: spawn failed: {}", request.task, outcome.error);
    if (asker_here)
      Send(EncodeMessage(SpawnFailedReply{request.task, outcome.error}));
  } else {
    Task& task = tasks_[request.task];
    task.id = request.task;
    task.pid = outcome.pid;
    task.log_fd = std::move(outcome.log_fd);
    task.stdin_holder = std::move(outcome.stdin_holder);
    task.cgroup = std::move(outcome.cgroup);
    task.grace = request.grace;
    for (const std::string& entry : request.env) {
      if (entry.starts_with("BATON_TASK_ID="))
        task.id_entry = entry;
    }
    ids_by_pid_[task.pid] = task.id;
    // Journaled "started" by the spawn thread; ours to keep from now on.
    task.record = std::move(outcome.record);
    const JournalTask& record = task.record;
    if (journal_)
      journal_->Claim(task.id);
    if (request.timeout)
      ScheduleDeadline(task, *request.timeout);
    BATON_LOG_INFO("{}: spawned pid {}", task.id, task.pid);
    if (asker_here)
      Send(EncodeMessage(SpawnedReply{task.id, task.pid, record.started_ms}));
    if (asked.close_stdin)
      task.stdin_holder.reset();
    if (asked.kill_grace)
      Stop(task, *asked.kill_grace, ExitCause::kKilled);
    // Reaped before we knew its pid: it ended now, after its spawned reply.
    if (auto early = early_exits_.find(task.pid); early != early_exits_.end()) {
      int status = early->second;
      early_exits_.erase(early);
      LeaderEnded(tasks_.find(task.id), status, false);
    }
  }
  if (starting_.empty())
    early_exits_.clear();  // The rest were grandchildren.
  MaybeAnswerHello();
}

int RunSupervisor(const StatePaths& paths, int ready_fd) {
  UniqueFd ready(ready_fd);
  // The starter cleared close-on-exec on it; tasks must not inherit it.
  if (ready)
    ::fcntl(ready.get(), F_SETFD, FD_CLOEXEC);
  auto signal_ready = [&](char byte) {
    if (ready)
      (void)WriteAll(ready.get(), std::string_view(&byte, 1));
    ready.reset();
  };
  std::string log_path = paths.home + "/supervisor.log";
  UniqueFd log(::open(log_path.c_str(),
                      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (log)
    SetLogTarget(log.get(), "supervisor");

  std::string lock_path = paths.supervisor_lock();
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
  // From here on we are the keeper's child: if we die, our tasks become
  // its children and their ends are written down (keeper.h).
  std::string journal_path = paths.home + "/supervisor.journal";
  StartKeeper(journal_path, log.get());
  auto journal = Journal::Open(journal_path, BootId());
  if (!journal) {
    BATON_LOG_ERROR("journal {}: {}", journal_path, journal.error().message);
    signal_ready('E');
    return 1;
  }
  Supervisor supervisor(paths);
  return supervisor.Run(std::move(ready), std::move(lock),
                        std::move(journal->first), std::move(journal->second));
}

}  // namespace baton
