#include "baton/daemon/daemon.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "baton/ipc/unix_socket.h"
#include "baton/util/detached_process.h"
#include "baton/util/log.h"

namespace baton {
namespace {

// How long to wait before retrying a store flush that failed (disk full).
constexpr std::chrono::seconds kFlushRetry{1};

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

  Daemon daemon(options);
  if (auto started = daemon.Start(); !started) {
    return fail(started.error().message);
  }
  startup->reset();  // Releases the startup lock.
  BATON_LOG_INFO("batond {} serving on {}", getpid(),
                 options.paths.daemon_socket());
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
  connections_.clear();
  if (listen_fd_)
    ::unlink(options_.paths.daemon_socket().c_str());
}

Status Daemon::Start() {
  started_ms_ = clock_.WallNowMillis();
  if (!loop_.ok())
    return MakeError(ErrorCode::kIo, "epoll_create failed");
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

  auto store = SqliteTaskStore::Open(options_.paths.database());
  if (!store)
    return std::unexpected(store.error());
  store_ = std::move(*store);

  executor_ = std::make_unique<LocalExecutor>(&loop_, options_.paths,
                                              SelfExecutable(), options_.grace);
  TaskRegistry::Options registry_options;
  registry_options.lease = options_.lease;
  registry_options.default_grace = options_.grace;
  registry_ = std::make_unique<TaskRegistry>(store_.get(), executor_.get(),
                                             &loop_, &clock_, registry_options);
  // Executor events pass the agent runtime (an agent's verdict), then the
  // check runner (checks and evidence), then reach the registry.
  checks_ =
      std::make_unique<CheckRunner>(&loop_, executor_.get(), registry_.get());
  agents_ = std::make_unique<AgentRuntime>(&loop_, executor_.get(),
                                           registry_.get(), checks_.get());
  codex_probe_ = std::make_unique<AppServerProbe>(&loop_);
  executor_->SetListener(agents_.get());
  if (auto connected = executor_->Connect(); !connected) {
    return MakeError(connected.error().code, "cannot reach the supervisor: " +
                                                 connected.error().message);
  }
  if (auto recovered = registry_->Recover(); !recovered)
    return recovered;
  agents_->Recover(registry_->LiveTasks());

  auto listener = ListenUnix(options_.paths.daemon_socket());
  if (!listener)
    return std::unexpected(listener.error());
  listen_fd_ = std::move(*listener);
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
      if (fd.error().code == ErrorCode::kUnavailable)
        return;
      BATON_LOG_WARN("accept: {}", fd.error().message);
      if (fd.error().code == ErrorCode::kPermissionDenied)
        continue;
      return;
    }
    uint64_t id = next_connection_id_++;
    Connection& connection = connections_[id];
    connection.id = id;
    connection.channel = std::make_unique<LineChannel>(
        &loop_, std::move(*fd),
        [this, id](std::string_view line) { OnLine(id, line); },
        [this, id] { OnClose(id); });
  }
}

void Daemon::OnClose(uint64_t connection_id) {
  auto it = connections_.find(connection_id);
  if (it == connections_.end())
    return;
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
                                  std::string session) {
  return Reply([this, connection_id, id_json = std::move(request_id_json),
                session = std::move(session)](Result<std::string> result,
                                              bool before_commit) {
    auto it = connections_.find(connection_id);
    if (it == connections_.end() || it->second.channel->closed())
      return;
    std::string notices_json;
    if (!session.empty()) {
      auto notices = registry_->TakeNotices(session);
      if (!notices.empty()) {
        // They report other ends, which EndSurvivesACrash did not check.
        before_commit = false;
        std::vector<Notice> typed;
        typed.reserve(notices.size());
        for (auto& task : notices) {
          std::string text = NoticeText(task);
          typed.push_back({View(std::move(task)), std::move(text)});
        }
        EncodeValue(notices_json, typed);
      }
    }
    Connection& connection = it->second;
    connection.channel->Send(EncodeReplyLine(id_json, result, notices_json));
    if (before_commit) {
      connection.holds_replies_before_commit = true;
    } else {
      connection.holds_replies_after_commit = true;
    }
  });
}

void Daemon::OnLine(uint64_t connection_id, std::string_view line) {
  auto it = connections_.find(connection_id);
  if (it == connections_.end())
    return;
  Connection& connection = it->second;
  auto request = DecodeRequestLine(line);
  if (!request) {
    // Nothing was done: the error goes out with the next flush.
    connection.channel->Send(EncodeReplyLine(
        request.error().id_json, std::unexpected(request.error().error), ""));
    connection.holds_replies_after_commit = true;
    return;
  }
  Reply reply =
      MakeReplier(connection_id, std::move(request->id_json), request->session);
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
    if (connection.holds_replies_before_commit &&
        !connection.holds_replies_after_commit) {
      connection.channel->Flush();
      connection.holds_replies_before_commit = false;
    }
  }
  bool flushed = true;
  if (store_->HasPendingWrites()) {
    if (auto status = store_->Flush(); !status) {
      flushed = false;
      BATON_LOG_ERROR("committing state failed, will retry: {}",
                      status.error().message);
      if (!flush_retry_timer_) {
        flush_retry_timer_ = loop_.Schedule(clock_.Now() + kFlushRetry,
                                            [this] { flush_retry_timer_ = 0; });
      }
    }
  }
  // Replies before the supervisor's requests: a client waits on its reply,
  // while writing to the supervisor wakes it, and on a busy machine the
  // kernel may run it (and the spawn) before we get the CPU back.
  for (auto& [id, connection] : connections_) {
    connection.channel->Flush();
    connection.holds_replies_after_commit = false;
    connection.holds_replies_before_commit = false;
  }
  if (flushed) {
    // The ends just committed need no exit files any more.
    executor_->AcknowledgeExits(
        [this](const TaskId& id) { return !registry_->IsLive(id); });
    executor_->Flush();
  }
  for (uint64_t id : closed_connections_)
    connections_.erase(id);
  closed_connections_.clear();
}

}  // namespace baton
