#include "baton/daemon/daemon.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "baton/daemon/socket_activation.h"
#include "baton/daemon/worktrees.h"
#include "baton/ipc/limits.h"
#include "baton/ipc/task_text.h"
#include "baton/ipc/unix_socket.h"
#include "baton/util/detached_process.h"
#include "baton/util/duration.h"
#include "baton/util/environment.h"
#include "baton/util/fd_limit.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

// How long to wait before retrying a store flush that failed (disk full).
constexpr std::chrono::seconds kFlushRetry{1};
// How long accepting pauses when even the reserve descriptor is gone.
constexpr std::chrono::milliseconds kAcceptPause{100};

// Whether the reply to `request` tells something that a failed commit of
// its loop iteration would make untrue (ipc/messages.h,
// kReplyKeptIfCommitFails).
bool NeedsCommit(const Request& request) {
  return std::visit(
      [](const auto& typed) {
        using R = std::decay_t<decltype(typed)>;
        if constexpr (requires { R::kReplyKeptIfCommitFails; })
          return !R::kReplyKeptIfCommitFails;
        return true;
      },
      request);
}

// A closed client whose input buffer grew this large makes batond trim its
// heap (malloc_trim: a few milliseconds for a heap of 100 MiB, and rare).
constexpr size_t kTrimAfterInput = size_t{1} << 20;

// The reply to the client holding the longest unfinished request when all
// clients' requests together pass kMaxHeldRequestBytes.
const std::string& OverBudgetReply() {
  static const std::string reply = EncodeReplyLine(
      "null",
      MakeError(ErrorCode::kUnavailable,
                fmt::format("batond holds over {} MiB of unfinished requests "
                            "from its clients, and this connection's was the "
                            "largest: it is closed. Try again, and pass large "
                            "inputs as files rather than inline",
                            kMaxHeldRequestBytes >> 20)),
      "");
  return reply;
}

// The reply to a request line over kMaxRequestLine (its id is unknown).
const std::string& OverlongReply() {
  static const std::string reply = EncodeReplyLine(
      "null",
      MakeError(ErrorCode::kInvalidArgument,
                fmt::format("request line over {} MiB; batond closes the "
                            "connection. Pass large inputs as files (a "
                            "script, a brief in a file the task reads) "
                            "rather than inline",
                            kMaxRequestLine >> 20)),
      "");
  return reply;
}

Result<UniqueFd> OpenLock(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  return fd;
}

}  // namespace

int RunDaemon(const DaemonOptions& options) {
  auto fail = [&](const std::string& message) {
    BATON_LOG_ERROR("cannot start: {}", message);
    ReportStartFailure(options.ready_fd, message);
    return 1;
  };
  if (auto prepared = options.paths.Prepare(); !prepared) {
    return fail(prepared.error().message);
  }
  UniqueFd log_fd(::open(options.paths.daemon_log().c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (log_fd)
    SetLogTarget(log_fd.get(), "batond");

  // Two locks: `startup` serializes daemons that start at the same time;
  // `life` is held for the daemon's whole life. A loser that gets the
  // startup lock after the winner released it (once serving) finds the
  // life lock held and reports ready: the winner is listening.
  auto startup = OpenLock(options.paths.daemon_lock() + ".startup");
  auto life = OpenLock(options.paths.daemon_lock());
  if (!startup || !life) {
    return fail((startup ? life : startup).error().message);
  }
  while (::flock(startup->get(), LOCK_EX) != 0 && errno == EINTR) {
  }
  // The life lock is held either by a batond that serves (then we are not
  // needed) or by one that is stopping (then we wait for it to go, bounded:
  // `baton daemon stop` followed at once by a start must work).
  for (int attempt = 0;; ++attempt) {
    if (::flock(life->get(), LOCK_EX | LOCK_NB) == 0)
      break;
    if (ConnectUnix(options.paths.daemon_socket())) {
      ReportReady(options.ready_fd);
      return 0;
    }
    if (attempt == 500) {
      return fail("another batond holds " + options.paths.daemon_lock() +
                  " but does not answer; if it hangs, kill it");
    }
    ::usleep(10'000);
  }

  // One descriptor per client connection: the default soft limit (often
  // 1,024) is reached by that many waiting clients.
  if (auto limit = RaiseFdLimit(); !limit) {
    BATON_LOG_WARN("cannot raise the descriptor limit: {}",
                   limit.error().message);
  } else if (limit->now != limit->before) {
    BATON_LOG_INFO("descriptor limit raised from {} to {}", limit->before,
                   limit->now);
  }
  Daemon daemon(options);
  if (auto started = daemon.Start(); !started) {
    return fail(started.error().message);
  }
  startup->reset();  // Releases the startup lock.
  BATON_LOG_INFO("batond {} serving on {}", getpid(),
                 options.paths.daemon_socket());
  // The upgrade that named this file as the next batond is done: later
  // starts run their own file again.
  if (auto next = ReadFile(options.paths.next_daemon());
      next && *next == SelfExecutable()) {
    ::unlink(options.paths.next_daemon().c_str());
  }
  ReportReady(options.ready_fd);
  if (auto ran = daemon.Run(); !ran) {
    BATON_LOG_ERROR("event loop failed: {}", ran.error().message);
    return 1;
  }
  BATON_LOG_INFO("batond {} stopped", getpid());
  return 0;
}

Daemon::Daemon(DaemonOptions options) : options_(std::move(options)) {}

Daemon::~Daemon() {
  if (accept_resume_timer_)
    loop_.Cancel(accept_resume_timer_);
  connections_.clear();
  // systemd's socket stays where it is: the next connection starts the
  // next batond.
  if (listen_fd_ && !socket_activated_)
    ::unlink(options_.paths.daemon_socket().c_str());
}

Status Daemon::Start() {
  started_ms_ = clock_.WallNowMillis();
  if (!loop_.ok())
    return MakeError(ErrorCode::kIo, "epoll_create failed");
  // Taken first: the supervisor started below must not inherit systemd's
  // socket or its LISTEN_* variables.
  auto activated = TakeActivatedSocket(options_.paths.daemon_socket());
  if (!activated)
    return std::unexpected(activated.error());
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  for (int sig : {SIGTERM, SIGINT}) {
    auto handled = loop_.HandleSignal(sig, [this] {
      BATON_LOG_INFO(
          "signal received; stopping (tasks keep running under "
          "the supervisor)");
      loop_.Stop();
    });
    if (!handled)
      return handled;
  }

  // Test-only crashes (doc/faults.md); a bad value is refused here.
  auto crash_points = CrashPoints::FromEnvironment();
  if (!crash_points)
    return std::unexpected(crash_points.error());
  crash_points_ = *crash_points;

  auto store = SqliteTaskStore::Open(options_.paths.database());
  if (!store)
    return std::unexpected(store.error());
  store_ = std::move(*store);

  executor_ = std::make_unique<LocalExecutor>(&loop_, options_.paths,
                                              SelfExecutable(), options_.grace);
  SlurmExecutor::Options slurm_options;
  slurm_options.grace = options_.grace;
  slurm_ =
      std::make_unique<SlurmExecutor>(&loop_, options_.paths, slurm_options);
  // In the order the router asks them; the last takes the rest.
  router_ = std::make_unique<RoutingExecutor>(
      std::vector<Executor*>{slurm_.get(), executor_.get()});
  TaskRegistry::Options registry_options;
  registry_options.lease = options_.lease;
  registry_options.default_grace = options_.grace;
  registry_options.uid = ::getuid();
  registry_options.pid = ::getpid();
  registry_ = std::make_unique<TaskRegistry>(store_.get(), router_.get(),
                                             &loop_, &clock_, registry_options);
  // Executor events pass the agent runtime (an agent's verdict), the
  // output cap (a capped log's marker), the redactor (the last pass over
  // the log), then the check runner (checks and evidence), then reach the
  // registry.
  checks_ =
      std::make_unique<CheckRunner>(&loop_, router_.get(), registry_.get());
  output_redactor_ = std::make_unique<OutputRedactor>(
      &loop_, registry_.get(), router_.get(), checks_.get());
  output_cap_ = std::make_unique<OutputCap>(&loop_, registry_.get(),
                                            output_redactor_.get());
  agents_ = std::make_unique<AgentRuntime>(&loop_, router_.get(),
                                           registry_.get(), output_cap_.get());
  codex_probe_ = std::make_unique<AppServerProbe>(&loop_);
  sandbox_probe_ = std::make_unique<SandboxProbe>(&loop_, FindBwrap());
  executor_->set_bwrap(sandbox_probe_->bwrap());
  router_->SetListener(agents_.get());
  // A task held by its queue, its dependencies or for a retry starts
  // later: its evidence's "before" is taken then, on the loop, since a
  // dispatch does not wait (doc/scheduling.md).
  registry_->SetOnDispatch(
      [this](const TaskRecord& task) { checks_->Snapshot(task); });
  // Reads of a live task's log stop where the redactor has decided
  // (doc/redaction.md).
  registry_->SetReadBound([this](const TaskRecord& task) {
    return output_redactor_->CatchUp(task.id);
  });
  // Agents' own worktrees are made on it (PrepareThenStart).
  worktree_worker_ =
      std::make_unique<WorkerPool>(&loop_, 1, WorkerPool::AtExit::kDropQueued);
  radar_ = std::make_unique<ConflictRadar>(
      &loop_, registry_.get(),
      ConflictRadar::Options{.scratch = options_.paths.home + "/radar"});
  lands_ = std::make_unique<MergeQueue>(
      &loop_, store_.get(), &clock_, &crash_points_,
      MergeQueue::Options{
          .git = {.env = LandGitEnvironment(ProcessEnvironment()),
                  .scratch = options_.paths.home + "/land"}},
      [this](AuditRecord record) {
        record.client = kAuditByBatond;  // Stays if the commit fails.
        registry_->audit().Record(std::move(record), /*with_batch=*/false);
      });
  registry_->SetOnCreate(
      [this](TaskRecord task, TaskRegistry::StartCallback made) {
        PrepareThenStart(std::move(task), std::move(made));
      });
  if (auto connected = executor_->Connect(); !connected) {
    return MakeError(connected.error().code, "cannot reach the supervisor: " +
                                                 connected.error().message);
  }
  if (auto recovered = registry_->Recover(); !recovered)
    return recovered;
  agents_->Recover(registry_->LiveTasks());
  for (const TaskRecord& task : registry_->LiveTasks())
    radar_->Track(task);
  if (auto loaded = lands_->Load(); !loaded)
    return loaded;
  output_cap_->Recover(registry_->LiveTasks());
  output_redactor_->Recover(registry_->LiveTasks());

  if (*activated) {
    listen_fd_ = std::move(*activated);
    socket_activated_ = true;
  } else {
    auto listener = ListenUnix(options_.paths.daemon_socket());
    if (!listener)
      return std::unexpected(listener.error());
    listen_fd_ = std::move(*listener);
  }
  reserve_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (auto added = loop_.AddFd(listen_fd_.get(), EPOLLIN,
                               [this](uint32_t) { OnAccept(); });
      !added) {
    return added;
  }
  loop_.AddBeforeSleep([this] { BeforeSleep(); });
  return {};
}

void Daemon::OnAccept() {
  for (;;) {
    auto fd = AcceptSameUid(listen_fd_.get());
    if (!fd) {
      const Error& error = fd.error();
      if (error.code == ErrorCode::kUnavailable)
        return;
      if (error.code == ErrorCode::kPermissionDenied) {
        BATON_LOG_WARN("accept: {}", error.message);
        continue;
      }
      if (error.sys_errno == EMFILE || error.sys_errno == ENFILE) {
        if (RefuseClient(error.sys_errno))
          continue;
        return;
      }
      // Anything else (ENOMEM, ENOBUFS) is left in the queue: pause rather
      // than let the listening socket wake the loop again at once.
      BATON_LOG_WARN("accept: {}; pausing for {} ms", error.message,
                     kAcceptPause.count());
      PauseAccepting();
      return;
    }
    // The episode ends once clients have really gone: a few connections
    // fewer than when it began. One that closes frees one descriptor, which
    // the next client takes, and the one after is refused again (a test
    // run told two episodes so when a connection of batond's start closed).
    size_t slack = std::min(kFdEpisodeSlack, out_of_fds_connections_);
    if (out_of_fds_ && connections_.size() + slack <= out_of_fds_connections_) {
      out_of_fds_ = false;
      BATON_LOG_INFO(
          "file descriptors available again; {} clients were refused "
          "meanwhile",
          refused_clients_);
    }
    uint64_t id = next_connection_id_++;
    Connection& connection = connections_[id];
    connection.id = id;
    if (auto peer = PeerOf(fd->get()); peer) {
      connection.peer_uid = peer->uid;
      connection.peer_pid = peer->pid;
    }
    LineChannel::Limits limits;
    limits.max_line = kMaxRequestLine;
    limits.overlong_reply = OverlongReply();
    limits.max_unread_output = kMaxUnreadReplies;
    limits.shared_input = &input_budget_;
    limits.over_budget_reply = OverBudgetReply();
    connection.channel = std::make_unique<LineChannel>(
        &loop_, std::move(*fd),
        [this, id](std::string_view line) { OnLine(id, line); },
        [this, id] { OnClose(id); }, std::move(limits));
  }
}

bool Daemon::RefuseClient(int err) {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  if (!out_of_fds_) {
    out_of_fds_ = true;
    out_of_fds_connections_ = connections_.size();
    refused_clients_ = 0;
    BATON_LOG_ERROR(
        "out of file descriptors ({}; limit {}): new clients get an error "
        "until connections close; {} connections are open",
        std::strerror(err), static_cast<uint64_t>(limit.rlim_cur),
        connections_.size());
  }
  if (!reserve_fd_) {
    PauseAccepting();
    return false;
  }
  reserve_fd_.reset();
  UniqueFd client(::accept4(listen_fd_.get(), nullptr, nullptr,
                            SOCK_CLOEXEC | SOCK_NONBLOCK));
  int accept_errno = client ? 0 : errno;
  if (client) {
    std::string reply =
        EncodeReplyLine(
            "null",
            MakeError(ErrorCode::kUnavailable,
                      fmt::format("batond is out of file descriptors (limit "
                                  "{}, {} connections open); close idle "
                                  "clients (e.g. pending 'baton wait's), or "
                                  "raise the limit (ulimit -n) and restart "
                                  "batond",
                                  static_cast<uint64_t>(limit.rlim_cur),
                                  connections_.size())),
            "") +
        "\n";
    // Best effort: a new socket takes a short line at once.
    (void)::send(client.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
    client.reset();
    ++refused_clients_;
  }
  reserve_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!reserve_fd_) {
    PauseAccepting();
    return false;
  }
  if (!client) {
    // Nobody waits any more, or even the freed descriptor did not help
    // (the system's limit, ENFILE): then pause.
    if (accept_errno != EAGAIN && accept_errno != EWOULDBLOCK &&
        accept_errno != EINTR && accept_errno != ECONNABORTED) {
      PauseAccepting();
    }
    return false;
  }
  return true;
}

void Daemon::PauseAccepting() {
  if (accept_resume_timer_)
    return;
  loop_.RemoveFd(listen_fd_.get());
  accept_resume_timer_ = loop_.Schedule(clock_.Now() + kAcceptPause, [this] {
    accept_resume_timer_ = 0;
    if (auto added = loop_.AddFd(listen_fd_.get(), EPOLLIN,
                                 [this](uint32_t) { OnAccept(); });
        !added) {
      BATON_LOG_ERROR("cannot listen again: {}", added.error().message);
    }
  });
}

void Daemon::OnClose(uint64_t connection_id) {
  auto it = connections_.find(connection_id);
  if (it == connections_.end())
    return;
  switch (it->second.channel->close_reason()) {
    case LineChannel::CloseReason::kLineTooLong:
      BATON_LOG_WARN(
          "connection {}: request line over {} MiB; answered with an error "
          "and closed",
          connection_id, kMaxRequestLine >> 20);
      break;
    case LineChannel::CloseReason::kOverBudget:
      BATON_LOG_WARN(
          "connection {}: dropped, holding the longest unfinished request "
          "when all clients' requests passed {} MiB",
          connection_id, kMaxHeldRequestBytes >> 20);
      break;
    case LineChannel::CloseReason::kUnreadOutput:
      BATON_LOG_WARN(
          "connection {}: dropped with over {} MiB of replies unread (a "
          "client that does not read)",
          connection_id, kMaxUnreadReplies >> 20);
      break;
    default:
      break;
  }
  for (WaitId wait : it->second.waits)
    registry_->CancelWait(wait);
  it->second.waits.clear();
  if (!it->second.attached_session.empty()) {
    registry_->Detach(it->second.attached_session);
    it->second.attached_session.clear();
  }
  closed_connections_.insert(connection_id);
}

Daemon::Reply Daemon::MakeReplier(uint64_t connection_id,
                                  std::string request_id_json,
                                  std::string session, bool needs_commit) {
  return Reply([this, connection_id, id_json = std::move(request_id_json),
                session = std::move(session), needs_commit](
                   Result<std::string> result, Reply::EarlyEnds early_ends) {
    auto it = connections_.find(connection_id);
    if (it == connections_.end() || it->second.channel->closed())
      return;
    HeldReply reply{.id_json = id_json,
                    .result = std::move(result),
                    .needs_commit = needs_commit};
    if (!session.empty()) {
      bool reports_ends = false;
      reply.notices_json = NoticesJson(session, reports_ends);
      // They report other ends, which EndSurvivesACrash did not check.
      if (reports_ends)
        early_ends.reset();
    }
    Connection& connection = it->second;
    // Early only with nothing held before it: replies keep their order.
    if (early_ends && connection.held.empty()) {
      connection.channel->Send(ReplyLine(std::move(reply), std::nullopt));
      connection.sent_early = true;
      registry_->KeepSeen(*early_ends);
      return;
    }
    connection.held.push_back(std::move(reply));
  });
}

void Daemon::OnLine(uint64_t connection_id, std::string_view line) {
  auto it = connections_.find(connection_id);
  if (it == connections_.end())
    return;
  Connection& connection = it->second;
  auto request = DecodeRequestLine(line);
  if (!request) {
    // Nothing was done; the error goes out in order, after the commit.
    connection.held.push_back(
        {.id_json = std::move(request.error().id_json),
         .result = std::unexpected(std::move(request.error().error)),
         .needs_commit = false});
    return;
  }
  Reply reply = MakeReplier(connection_id, std::move(request->id_json),
                            request->session, NeedsCommit(request->request));
  std::visit(
      [&](const auto& typed) {
        Handle(connection, typed, request->session, reply);
      },
      request->request);
}

void Daemon::BeforeSleep() {
  // Durability first: nothing (a spawn, a reply) leaves before the state it
  // depends on is committed. Except the end of a plain task to its waiter:
  // until batond acknowledges it after the commit, the supervisor keeps
  // that exit record and writes it to the task's exit file if batond dies,
  // so a restarted batond arrives at the same end. That saves the waiter
  // the commit's time.
  for (auto& [id, connection] : connections_) {
    if (connection.sent_early) {
      connection.channel->Flush();
      connection.sent_early = false;
    }
  }
  ObserveWakes(/*early=*/true);
  // The registry hands the executor its spawns and kills once committed.
  // If the commit fails, it takes back what this iteration did only for
  // its replies, which then say why (doc/protocol.md, "When state cannot
  // be saved").
  std::optional<Error> failure;
  bool committing = registry_->HasUncommitted();
  if (committing) {
    crash_points_.Pass("before-commit");
    std::vector<TaskId> dropped;
    if (auto committed = registry_->Commit(&dropped); !committed) {
      failure = CannotSave(committed.error());
      OnCommitFailed(committed.error(), dropped);
    } else {
      crash_points_.Pass("after-commit");
      ++changes_;
      // Their replies join the held ones sent below.
      for (auto& [connection, watch] : std::exchange(watches_, {}))
        watch(WatchReply{.changes = changes_, .daemon_pid = getpid()});
    }
    if (!failure && commit_failing_) {
      commit_failing_ = false;
      BATON_LOG_INFO(
          "state saved again, after {} failed attempts in {}", failed_commits_,
          FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(
              clock_.Now() - commit_failing_since_)));
    }
  }
  // The radar's overlaps moved (doc/conflicts.md): nothing to commit, but
  // watchers (the board) look again; a commit above already told them.
  if (radar_->TakeMoved() && !committing) {
    ++changes_;
    for (auto& [connection, watch] : std::exchange(watches_, {}))
      watch(WatchReply{.changes = changes_, .daemon_pid = getpid()});
  }
  // The supervisor's requests before the replies: once a client is told of
  // a task, its spawn is in the supervisor's socket, which a supervisor
  // reads whole even after batond died (doc/supervisor.md, "Exactly
  // once"). So an answered task runs, and with the environment its client
  // sent, which is never stored.
  if (!failure) {
    // The ends just committed need no exit files any more.
    // A run's end is held once its task ended, or a retry followed it.
    executor_->AcknowledgeExits(
        [this](const TaskId& id, const std::string& run) {
          const TaskRecord* task = registry_->FindLive(id);
          return !task || RunName(*task) != run;
        });
    router_->Flush();
    if (committing)
      crash_points_.Pass("after-flush");
  }
  for (auto& [id, connection] : connections_) {
    for (HeldReply& reply : connection.held)
      connection.channel->Send(ReplyLine(std::move(reply), failure));
    connection.held.clear();
    connection.channel->Flush();
  }
  ObserveWakes(/*early=*/false);
  if (committing && !failure)
    crash_points_.Pass("after-reply");
  // A client that sent a large request leaves free chunks in the middle of
  // the heap, which glibc gives back only from its top: trimmed once here.
  bool held_much = false;
  for (uint64_t id : closed_connections_) {
    if (auto it = connections_.find(id); it != connections_.end())
      held_much |= it->second.channel->input_capacity() >= kTrimAfterInput;
    connections_.erase(id);
    std::erase_if(watches_,
                  [id](const auto& watch) { return watch.first == id; });
  }
  closed_connections_.clear();
  if (held_much)
    ::malloc_trim(0);
}

void Daemon::OnCommitFailed(const Error& error,
                            const std::vector<TaskId>& dropped) {
  // Once per episode: the log may live on the disk that is full.
  if (!commit_failing_) {
    commit_failing_ = true;
    commit_failing_since_ = clock_.Now();
    failed_commits_ = 0;
    BATON_LOG_ERROR(
        "cannot save state: {}; requests that need it get an error, and "
        "batond retries every {} s",
        error.message, kFlushRetry.count());
  }
  ++failed_commits_;
  lands_->Rewrite();  // Its entries' writes went with the batch.
  if (!dropped.empty()) {
    std::string ids;
    for (const TaskId& id : dropped) {
      // The check runner's snapshot may have made its folder already.
      std::error_code ignored;
      std::filesystem::remove_all(router_->TaskDir(id), ignored);
      ids += (ids.empty() ? "" : ", ") + id.ToString();
    }
    BATON_LOG_WARN("not saved, so never started: {}", ids);
  }
  if (!flush_retry_timer_) {
    flush_retry_timer_ = loop_.Schedule(clock_.Now() + kFlushRetry,
                                        [this] { flush_retry_timer_ = 0; });
  }
}

Error Daemon::CannotSave(const Error& cause) const {
  const std::string& path = options_.paths.database();
  switch (cause.sys_errno) {
    case ENOSPC:
    case EDQUOT:
      return Error{
          ErrorCode::kIo,
          fmt::format("cannot save state: disk full ({}) at {}; free space "
                      "and retry",
                      cause.sys_errno == ENOSPC ? "ENOSPC" : "EDQUOT", path)};
    case EIO:
      return Error{ErrorCode::kIo,
                   fmt::format("cannot save state: I/O error (EIO) at {}; "
                               "check the disk, then retry",
                               path)};
    default:
      break;
  }
  if (cause.code == ErrorCode::kUnavailable) {
    return Error{ErrorCode::kUnavailable,
                 fmt::format("cannot save state: {} is locked by another "
                             "process; retry",
                             path)};
  }
  return Error{ErrorCode::kIo,
               fmt::format("cannot save state ({}); retry", cause.message)};
}

std::string Daemon::ReplyLine(HeldReply reply,
                              const std::optional<Error>& failure) {
  if (!failure)  // Its notices are delivered: they are committed.
    return EncodeReplyLine(reply.id_json, reply.result, reply.notices_json);
  if (!reply.result || !reply.needs_commit) {
    // True all the same; its notices were taken back.
    return EncodeReplyLine(reply.id_json, reply.result, "");
  }
  return EncodeReplyLine(reply.id_json, std::unexpected(*failure), "");
}

}  // namespace baton
