#include "baton/executor/local/local_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "baton/executor/task_files.h"
#include "baton/ipc/unix_socket.h"
#include "baton/supervisor/protocol.h"
#include "baton/util/detached_process.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

int MillisLeft(MonoTime deadline) {
  auto left = std::chrono::ceil<milliseconds>(deadline -
                                              std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

// Waits until `fd` is readable. kTimeout at the deadline.
Status WaitReadable(int fd, MonoTime deadline, std::string_view what) {
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    int n = ::poll(&pfd, 1, MillisLeft(deadline));
    if (n > 0)
      return {};
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::unexpected(ErrnoError("poll", errno));
    return MakeError(ErrorCode::kTimeout, fmt::format("{} timed out", what));
  }
}

// Reads one line from the blocking socket `fd`, leaving what follows it
// unread (it belongs to the LineChannel that takes the socket over).
// kUnavailable when the peer closes first.
Result<std::string> ReadLine(int fd, MonoTime deadline) {
  std::string line;
  char buf[4096];
  for (;;) {
    if (auto ready = WaitReadable(fd, deadline, "supervisor hello"); !ready) {
      return std::unexpected(ready.error());
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
    if (n < 0 && errno == EINTR)
      continue;
    // A supervisor that was dying (its socket not yet closed) took the
    // connection and dropped it: as if nobody listened.
    if (n == 0 || (n < 0 && errno == ECONNRESET)) {
      return MakeError(ErrorCode::kUnavailable,
                       "the supervisor closed the connection");
    }
    if (n < 0)
      return std::unexpected(ErrnoError("recv", errno));
    auto* newline = static_cast<char*>(std::memchr(buf, '\n', n));
    size_t take = newline ? newline - buf + 1 : static_cast<size_t>(n);
    // Takes exactly what was peeked: the bytes are already queued.
    if (::recv(fd, buf, take, 0) != static_cast<ssize_t>(take)) {
      return std::unexpected(ErrnoError("recv", errno));
    }
    line.append(buf, take);
    if (newline) {
      line.pop_back();
      return line;
    }
    if (line.size() > LineChannel::kMaxLine) {
      return MakeError(ErrorCode::kIo, "supervisor hello too long");
    }
  }
}

Status SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      return MakeError(
          ErrorCode::kUnavailable,
          fmt::format("send to supervisor: {}", std::strerror(errno)), errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

// Appends the line that opens a retry's output in the task's log:
// "[baton: attempt 2 of 4 (attempt 1: exit code: 1)]".
Status AppendAttemptMarker(const std::string& log, const TaskRecord& task) {
  UniqueFd fd(
      ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (!fd)
    return std::unexpected(ErrnoError("open " + log, errno));
  return WriteAll(
      fd.get(),
      fmt::format("[baton: attempt {} of {} (attempt {}: {})]\n",
                  task.attempts.size() + 1, task.spec.retry.retries + 1,
                  task.attempts.size(), task.attempts.back().detail));
}

// What a task sets over its base environment: its overrides and its id.
std::vector<std::string> TaskEnvOverrides(const TaskRecord& task) {
  std::map<std::string, std::string> overrides = task.spec.env_overrides;
  overrides["BATON_TASK_ID"] = task.id.ToString();
  std::vector<std::string> entries;
  for (const auto& [key, value] : overrides)
    entries.push_back(key + "=" + value);
  return entries;
}

}  // namespace

LocalExecutor::LocalExecutor(EventLoop* loop, StatePaths paths,
                             std::string baton_binary, milliseconds grace)
    : loop_(loop),
      paths_(std::move(paths)),
      baton_binary_(std::move(baton_binary)),
      grace_(grace),
      own_env_(CleanEnvironment()) {}

LocalExecutor::~LocalExecutor() {
  if (failure_timer_)
    loop_->Cancel(failure_timer_);
  if (reconnect_timer_)
    loop_->Cancel(reconnect_timer_);
}

int64_t LocalExecutor::supervisor_pid() const {
  if (!connected())
    return 0;
  // Its death may not have reached our loop yet (the close is read later).
  if (supervisor_pidfd_) {
    pollfd pfd{supervisor_pidfd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 0) == 1)
      return 0;
  }
  return supervisor_pid_;
}

std::string LocalExecutor::TaskDir(const TaskId& id) const {
  return TaskFolder(paths_, id);
}

std::string LocalExecutor::OutputPath(const TaskId& id) const {
  return OutputLogPath(paths_, id);
}

std::string LocalExecutor::ExitFilePath(const TaskId& id,
                                        std::string_view run) const {
  // "exit.json" for the first attempt, "exit.2.json" for the second.
  std::string_view attempt =
      run.substr(std::min(run.size(), id.ToString().size()));
  return fmt::format("{}/exit{}.json", TaskDir(id), attempt);
}

std::string LocalExecutor::RunOf(const TaskId& id) const {
  std::string name = id.ToString();
  if (live_.contains(name))
    return name;
  // A later attempt's run, "<id>.<n>": sorted right after "<id>.".
  std::string prefix = name + ".";
  auto it = live_.lower_bound(prefix);
  if (it != live_.end() && it->first.starts_with(prefix))
    return it->first;
  return name;
}

Result<uint64_t> LocalExecutor::OutputSize(const TaskRecord& task) const {
  return KeptOutputSize(paths_, task);
}

Status LocalExecutor::Connect() {
  if (channel_)
    retired_channel_ = std::move(channel_);
  MonoTime deadline = std::chrono::steady_clock::now() + kConnectTimeout;
  for (;;) {
    auto fd = ConnectUnix(paths_.supervisor_socket());
    Status attempt =
        fd ? Handshake(std::move(*fd), deadline) : std::unexpected(fd.error());
    if (attempt) {
      if (reconcile_pending_)
        Reconcile();
      return {};
    }
    auto fail = [&](Error error) -> Status {
      if (reconcile_pending_)
        SettleLost();
      return std::unexpected(std::move(error));
    };
    // kUnavailable: nobody listens, or the supervisor was exiting (idle)
    // just as we connected. Either way, start one.
    if (attempt.error().code != ErrorCode::kUnavailable)
      return fail(attempt.error());
    auto started = StartSupervisor(deadline);
    if (!started)
      return fail(started.error());
    if (!*started) {
      // Another supervisor holds the lock and is about to listen (or to
      // exit). Rare and short-lived, so a brief sleep is enough.
      std::this_thread::sleep_for(milliseconds(10));
    }
    if (MillisLeft(deadline) == 0) {
      return fail(Error{ErrorCode::kTimeout,
                        fmt::format("could not reach the supervisor at {} "
                                    "within {} s; see {}/supervisor.log",
                                    paths_.supervisor_socket(),
                                    kConnectTimeout.count(), paths_.home)});
    }
  }
}

Status LocalExecutor::Handshake(UniqueFd fd, MonoTime deadline) {
  if (auto sent = SendAll(fd.get(), EncodeMessage(SupervisorHello{}) + "\n");
      !sent) {
    return sent;
  }
  auto line = ReadLine(fd.get(), deadline);
  if (!line)
    return std::unexpected(line.error());
  auto event = ParseSupervisorEvent(*line);
  auto* hello = event ? std::get_if<SupervisorHelloReply>(&*event) : nullptr;
  if (hello == nullptr) {
    return MakeError(ErrorCode::kIo,
                     "the supervisor answered hello with: " + *line);
  }
  if (auto ok = SetNonBlocking(fd.get(), true); !ok)
    return ok;
  supervisor_pid_ = hello->pid;
  supervisor_pidfd_.reset(
      static_cast<int>(::syscall(SYS_pidfd_open, hello->pid, 0)));
  supervisor_version_ = hello->version;
  hello_live_.clear();
  for (const LiveTask& task : hello->live)
    hello_live_[task.task] = task;
  unknown_ends_ = {hello->unknown_ends.begin(), hello->unknown_ends.end()};
  channel_ = std::make_unique<LineChannel>(
      loop_, std::move(fd), [this](std::string_view l) { OnLine(l); },
      [this] { OnSupervisorLost(); });
  environment_ids_.clear();  // A connection starts with none defined.
  BATON_LOG_INFO("connected to supervisor pid {} ({} live tasks)",
                 supervisor_pid_, hello_live_.size());
  return {};
}

Result<bool> LocalExecutor::StartSupervisor(MonoTime deadline) {
  auto started = StartDetached(
      {baton_binary_, "internal-supervisor", "--home", paths_.home, "--runtime",
       paths_.runtime, "--ready-fd", "{ready_fd}"},
      milliseconds(std::max(MillisLeft(deadline), 1)), supervisor_entry_);
  if (started)
    return true;
  switch (started.error().code) {
    case ErrorCode::kAlreadyExists:
      return false;  // Another supervisor holds the lock.
    case ErrorCode::kUnavailable:
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("the supervisor failed to start: {}; see "
                                   "{}/supervisor.log",
                                   started.error().message, paths_.home));
    default:
      return std::unexpected(started.error());
  }
}

void LocalExecutor::Flush() {
  if (!connected())
    return;
  for (const std::string& line : outbox_)
    channel_->Send(line);
  outbox_.clear();
  channel_->Flush();
}

void LocalExecutor::Start(const TaskRecord& task) {
  StartTask(task, /*restart=*/false);
}

void LocalExecutor::StartTask(const TaskRecord& task, bool restart) {
  const TaskSpec& spec = task.spec;
  SpawnRequest request;
  request.task = RunName(task);
  request.argv =
      spec.shell_command
          ? std::vector<std::string>{"/bin/sh", "-c", *spec.shell_command}
          : spec.argv;
  if (request.argv.empty()) {
    return FailLater(task.id, Error{ErrorCode::kInvalidArgument,
                                    "nothing to run: the command is empty"});
  }
  request.cwd = spec.cwd;
  request.log = OutputPath(task.id);
  std::string dir = TaskDir(task.id);
  if (spec.agent) {
    // The CLI's stdout is its protocol stream; batond writes output.log.
    request.log = fmt::format("{}/{}", dir, kAgentStreamFile);
    request.stderr_path = fmt::format("{}/{}", dir, kAgentStderrFile);
  }
  request.exit_file = ExitFilePath(task.id, request.task);
  request.timeout = spec.timeout;
  request.grace = grace_;
  if (spec.limits.any())
    request.limits = spec.limits;
  // The supervisor creates the folder in its spawn thread, off our loop
  // and after the client's reply, unless we write there first.
  bool batond_writes_first = spec.agent || spec.stdin_pipe || spec.stdin_text ||
                             !spec.checks.empty() || !task.attempts.empty();
  for (const std::string& made_dir : {paths_.tasks_dir(), dir}) {
    if (!batond_writes_first)
      break;
    if (auto made = MakeDir(made_dir); !made) {
      return FailLater(task.id, made.error());
    }
  }
  struct stat stdin_stat {};
  bool again = restart || !task.attempts.empty();
  if (again && ::lstat(fmt::format("{}/{}", dir, kStdinFile).c_str(),
                       &stdin_stat) == 0) {
    // Made for the first attempt, or before batond died (neither kind of
    // stdin is stored).
    request.stdin_path = fmt::format("{}/{}", dir, kStdinFile);
    request.stdin_fifo = S_ISFIFO(stdin_stat.st_mode);
  } else if (!again && (spec.stdin_pipe || spec.stdin_text)) {
    request.stdin_path = fmt::format("{}/{}", dir, kStdinFile);
    ::unlink(request.stdin_path.c_str());
    Status made = spec.stdin_pipe
                      ? (::mkfifo(request.stdin_path.c_str(), 0600) == 0
                             ? Status()
                             : std::unexpected(ErrnoError(
                                   "mkfifo " + request.stdin_path, errno)))
                      : WriteFileAtomic(request.stdin_path, *spec.stdin_text);
    if (!made)
      return FailLater(task.id, made.error());
    request.stdin_fifo = spec.stdin_pipe;
  }
  if (!task.attempts.empty() && !restart && !spec.agent) {
    // Where the attempt's output starts, for people reading the log (an
    // agent's transcript gets its worker's note instead: request.log is
    // its CLI's stream).
    if (auto marked = AppendAttemptMarker(request.log, task); !marked) {
      BATON_LOG_WARN("{}: {}", request.task, marked.error().message);
    }
  }
  if (!connected()) {
    if (auto connected = Connect(); !connected) {
      return FailLater(task.id, connected.error());
    }
  }
  // An older supervisor (it outlives batond across an upgrade) would run
  // it without its limits.
  if (request.limits && supervisor_version_ < kFirstVersionWithLimits) {
    return FailLater(
        task.id,
        Error{ErrorCode::kUnavailable,
              fmt::format("the running supervisor (protocol {}) predates "
                          "hard limits; let its tasks end (or stop them), "
                          "then batond starts a new one",
                          supervisor_version_)});
  }
  // Once connected: environments are defined per connection.
  const std::vector<std::string>& base =
      spec.base_env.empty() ? own_env_ : spec.base_env;
  request.env = TaskEnvOverrides(task);
  std::vector<std::string> clean_base;
  if (spec.sandbox) {
    auto wrapped = SandboxedArgv(task, base);
    if (!wrapped)
      return FailLater(task.id, wrapped.error());
    request.argv.insert(request.argv.begin(), wrapped->begin(), wrapped->end());
    clean_base = SandboxEnvironment(*spec.sandbox, base);
  }
  const std::vector<std::string>& sent_base = spec.sandbox ? clean_base : base;
  if (supervisor_version_ >= kFirstVersionWithEnvironments) {
    request.env_id = EnvironmentId(sent_base, &request.base_env);
  } else {
    // A supervisor from before the upgrade takes whole environments only.
    request.env = SetEnvironmentEntries(sent_base, request.env);
  }
  live_[request.task] = task.id;
  outbox_.push_back(EncodeMessage(request));
  unanswered_[request.task] = std::move(request);
}

uint64_t LocalExecutor::EnvironmentId(
    const std::vector<std::string>& env,
    std::shared_ptr<const std::vector<std::string>>* shared) {
  auto it = environment_ids_.find(env);
  if (it == environment_ids_.end()) {
    // Slots are reused in turn, so the supervisor holds at most
    // kEnvironments.
    uint64_t id = next_environment_++ % kEnvironments;
    std::erase_if(environment_ids_,
                  [id](const auto& entry) { return entry.second.id == id; });
    it = environment_ids_
             .emplace(
                 env,
                 EnvironmentSlot{
                     id, std::make_shared<const std::vector<std::string>>(env)})
             .first;
    outbox_.push_back(EncodeMessage(EnvRequest{id, env}));
  }
  if (shared)
    *shared = it->second.env;
  return it->second.id;
}

void LocalExecutor::Resend(SpawnRequest request) {
  // The new connection has its own environment ids.
  if (request.base_env &&
      supervisor_version_ >= kFirstVersionWithEnvironments) {
    request.env_id = EnvironmentId(*request.base_env, &request.base_env);
  } else if (request.base_env) {
    request.env = SetEnvironmentEntries(*request.base_env, request.env);
    request.env_id.reset();
  }
  outbox_.push_back(EncodeMessage(request));
  unanswered_[request.task] = std::move(request);
}

void LocalExecutor::CloseStdin(const TaskId& id) {
  if (connected())
    outbox_.push_back(EncodeMessage(CloseStdinRequest{RunOf(id)}));
}

void LocalExecutor::Kill(const TaskId& id, milliseconds grace) {
  std::string name = RunOf(id);
  // Kept until the task's end, to be sent again if a new supervisor takes
  // the task over before this one reached the old (the first one counts).
  if (live_.contains(name))
    kills_.try_emplace(name, grace);
  // Without a connection the task is reconciled (kills_ then) or was
  // already reported (lost or ended).
  if (connected())
    outbox_.push_back(EncodeMessage(SupervisorKill{name, grace}));
}

void LocalExecutor::Adopt(const std::vector<TaskRecord>& live) {
  std::map<std::string, LiveTask> unknown = hello_live_;
  for (const TaskRecord& task : live) {
    std::string name = RunName(task);
    unknown.erase(name);
    if (auto it = hello_live_.find(name);
        connected() && it != hello_live_.end()) {
      live_[name] = task.id;  // Its end comes later as an event.
      // Spawned, but batond died before it heard so: say it now (a task
      // killed meanwhile is stopped then).
      if (task.pid == 0) {
        int64_t started = it->second.started_ms;
        listener_->OnTaskSpawned(task.id, it->second.pid,
                                 started > 0 ? started : WallMillis());
      }
      continue;
    }
    // Not live at the supervisor. Either its exit came on this connection
    // after the hello, or the supervisor wrote the exit file before it
    // dropped the task from its live set.
    if (auto node = unclaimed_exits_.extract(name)) {
      unacked_exits_[name] = task.id;
      listener_->OnTaskExited(task.id, node.mapped());
      continue;
    }
    if (auto recorded = ExitFileRecord(task.id, name)) {
      listener_->OnTaskExited(task.id, *recorded);
      continue;
    }
    if (unknown_ends_.contains(name)) {
      ReportUnknownEnd(task.id, name);
      continue;
    }
    if (task.pid == 0) {
      // batond never heard of a start and no supervisor has a trace of
      // one (it refuses an id it ever started): the spawn never left
      // batond. A kill that came first is all that happens to it.
      if (task.status == TaskStatus::kStopping) {
        ExitInfo killed;
        killed.cause = ExitCause::kKilled;
        killed.ended_ms = WallMillis();
        listener_->OnTaskExited(task.id, killed);
      } else {
        BATON_LOG_INFO("{}: answered but never started; starting it now", name);
        StartTask(task, /*restart=*/true);
      }
      continue;
    }
    listener_->OnTaskExited(task.id, LostExit());
  }
  // Ends of tasks the store does not know (or has settled): nobody needs
  // their records.
  for (auto& [name, exit] : std::exchange(unclaimed_exits_, {})) {
    if (auto id = TaskIdOfRun(name))
      unacked_exits_[name] = *id;
  }
  AcknowledgeUnknownEnds();
  for (const auto& [name, task] : unknown) {
    BATON_LOG_WARN(
        "the supervisor runs {} (pid {}), which is not live in "
        "the store; leaving it alone",
        name, task.pid);
  }
}

void LocalExecutor::AcknowledgeUnknownEnds() {
  for (const std::string& name : unknown_ends_) {
    auto id = TaskIdOfRun(name);
    if (id && !live_.contains(name))
      unacked_exits_.try_emplace(name, *id);
  }
}

void LocalExecutor::ReportUnknownEnd(const TaskId& id, const std::string& run) {
  BATON_LOG_WARN("{}: the supervisor that ran it died; its end is unknown",
                 run);
  unacked_exits_[run] = id;
  listener_->OnTaskExited(id, LostExit());
}

ExitInfo LocalExecutor::LostExit() const {
  ExitInfo lost;
  lost.cause = ExitCause::kLost;
  lost.ended_ms = WallMillis();
  return lost;
}

std::optional<ExitInfo> LocalExecutor::ExitFileRecord(
    const TaskId& id, std::string_view run) const {
  auto text = ReadFile(ExitFilePath(id, run));
  if (!text)
    return std::nullopt;
  auto event = ParseSupervisorEvent(*text);
  if (event && std::holds_alternative<ExitedEvent>(*event)) {
    return ToExitInfo(std::get<ExitedEvent>(*event));
  }
  BATON_LOG_WARN("{}: unreadable exit file: {}", run, *text);
  return std::nullopt;
}

ExitInfo LocalExecutor::RecordedExit(const TaskId& id,
                                     std::string_view run) const {
  if (auto recorded = ExitFileRecord(id, run))
    return *recorded;
  return LostExit();
}

void LocalExecutor::OnLine(std::string_view line) {
  auto event = ParseSupervisorEvent(line);
  if (!event) {
    BATON_LOG_WARN("ignored a supervisor message: {}", event.error().message);
    return;
  }
  if (auto* spawned = std::get_if<SpawnedReply>(&*event)) {
    unanswered_.erase(spawned->task);
    auto it = live_.find(spawned->task);
    if (it != live_.end()) {
      listener_->OnTaskSpawned(it->second, spawned->pid, spawned->started_ms);
    }
  } else if (auto* failed = std::get_if<SpawnFailedReply>(&*event)) {
    // An id the supervisor started before is never run twice: unless we
    // know it runs, it may have, and nobody can tell how it ended.
    bool unheard = unanswered_.erase(failed->task) > 0;
    kills_.erase(failed->task);
    if (failed->already_started && !unheard)
      return;
    if (auto node = live_.extract(failed->task)) {
      if (failed->already_started) {
        BATON_LOG_WARN("{}: {}", failed->task, failed->error);
        listener_->OnTaskExited(node.mapped(), LostExit());
      } else {
        listener_->OnTaskSpawnFailed(
            node.mapped(), Error{ErrorCode::kSpawnFailed, failed->error});
      }
    }
  } else if (auto* exited = std::get_if<ExitedEvent>(&*event)) {
    hello_live_.erase(exited->task);
    unanswered_.erase(exited->task);
    kills_.erase(exited->task);
    if (auto node = live_.extract(exited->task)) {
      unacked_exits_[exited->task] = node.mapped();
      listener_->OnTaskExited(node.mapped(), ToExitInfo(*exited));
    } else {
      // Ended before Adopt() claimed it (or a task batond does not know).
      unclaimed_exits_[exited->task] = ToExitInfo(*exited);
    }
  }
}

void LocalExecutor::AcknowledgeExits(
    const std::function<bool(const TaskId&, const std::string&)>& is_settled) {
  if (unacked_exits_.empty() || !connected())
    return;
  AckRequest ack;
  for (auto it = unacked_exits_.begin(); it != unacked_exits_.end();) {
    if (is_settled(it->second, it->first)) {
      ack.tasks.push_back(it->first);
      it = unacked_exits_.erase(it);
    } else {
      ++it;
    }
  }
  if (!ack.tasks.empty())
    outbox_.push_back(EncodeMessage(ack));
}

void LocalExecutor::OnSupervisorLost() {
  ++supervisor_losses_;
  BATON_LOG_WARN(
      "lost the supervisor (pid {}) with {} tasks; a new one adopts them",
      supervisor_pid_, live_.size());
  outbox_.clear();
  hello_live_.clear();
  unknown_ends_.clear();
  environment_ids_.clear();
  supervisor_pidfd_.reset();
  // A supervisor that died wrote no file for these; their ends were
  // reported already, so only the store's commit matters now.
  unacked_exits_.clear();
  unclaimed_exits_.clear();
  reconcile_pending_ = true;
  // Not from inside the channel's close: a new supervisor, started now,
  // keeps the tasks under their deadlines and learns their ends.
  if (!reconnect_timer_) {
    reconnect_timer_ =
        loop_->Schedule(std::chrono::steady_clock::now(), [this] {
          reconnect_timer_ = 0;
          if (reconcile_pending_ && !connected()) {
            if (auto connected = Connect(); !connected) {
              BATON_LOG_ERROR("no new supervisor: {}",
                              connected.error().message);
            }
          }
        });
  }
}

void LocalExecutor::Reconcile() {
  reconcile_pending_ = false;
  // Moved out first: a listener may Start() again.
  auto tasks = std::exchange(live_, {});
  auto sent = std::exchange(unanswered_, {});
  for (const auto& [name, id] : tasks) {
    auto request = sent.extract(name);
    if (auto it = hello_live_.find(name); it != hello_live_.end()) {
      live_[name] = id;  // Adopted by the new supervisor.
      if (request) {
        listener_->OnTaskSpawned(id, it->second.pid, it->second.started_ms);
      }
    } else if (auto recorded = ExitFileRecord(id, name)) {
      listener_->OnTaskExited(id, *recorded);
    } else if (unknown_ends_.contains(name)) {
      ReportUnknownEnd(id, name);
    } else if (request) {
      // The lost supervisor never had it (else its journal would say so
      // to the new one, which also refuses an id it knows).
      live_[name] = id;
      Resend(std::move(request.mapped()));
    } else {
      listener_->OnTaskExited(id, LostExit());
    }
  }
  AcknowledgeUnknownEnds();
  // Kills the lost supervisor may never have read; a second one of a task
  // already being stopped is ignored.
  std::erase_if(kills_, [&](const auto& kill) {
    if (!live_.contains(kill.first))
      return true;
    outbox_.push_back(EncodeMessage(SupervisorKill{kill.first, kill.second}));
    return false;
  });
}

void LocalExecutor::SettleLost() {
  reconcile_pending_ = false;
  unanswered_.clear();
  kills_.clear();
  auto lost = std::exchange(live_, {});
  for (const auto& [name, id] : lost) {
    listener_->OnTaskExited(id, RecordedExit(id, name));
  }
}

void LocalExecutor::FailLater(const TaskId& id, Error error) {
  BATON_LOG_WARN("{}: not started: {}", id.ToString(), error.message);
  failures_.emplace_back(id, std::move(error));
  if (failure_timer_)
    return;
  // Reported from the loop, not from inside Start(): callers do not expect
  // the listener to run while they are still starting the task.
  failure_timer_ = loop_->Schedule(std::chrono::steady_clock::now(), [this] {
    failure_timer_ = 0;
    for (auto& [id, error] : std::exchange(failures_, {})) {
      listener_->OnTaskSpawnFailed(id, error);
    }
  });
}

}  // namespace baton
