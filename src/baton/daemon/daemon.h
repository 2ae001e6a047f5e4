// batond: the composition root. Owns the event loop, the store, the
// executor (which talks to the supervisor) and the registry; serves the
// client protocol (doc/protocol.md) on a Unix socket. One writer of state.
#ifndef BATON_DAEMON_DAEMON_H_
#define BATON_DAEMON_DAEMON_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "baton/core/task_registry.h"
#include "baton/daemon/agent_runtime.h"
#include "baton/daemon/app_server_probe.h"
#include "baton/daemon/check_runner.h"
#include "baton/daemon/preflight.h"
#include "baton/executor/local/local_executor.h"
#include "baton/ipc/codec.h"
#include "baton/ipc/line_channel.h"
#include "baton/loop/event_loop.h"
#include "baton/store/sqlite_task_store.h"
#include "baton/util/state_paths.h"

namespace baton {

struct DaemonOptions {
  StatePaths paths;
  std::chrono::milliseconds lease = std::chrono::minutes(5);
  std::chrono::milliseconds grace = std::chrono::seconds(5);
  int ready_fd = -1;  // Written "R" when serving, "E<why>" on failure.
};

// Runs batond in this process until it is told to stop. Returns the exit
// code: 0 after a clean stop (or when another batond already runs), 1 when
// it could not start.
int RunDaemon(const DaemonOptions& options);

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Opens the store, connects to the supervisor, recovers, listens.
  Status Start();
  Status Run() { return loop_.Run(); }

 private:
  struct Connection {
    uint64_t id = 0;
    std::unique_ptr<LineChannel> channel;
    std::string attached_session;  // Set by "attach".
    std::set<WaitId> waits;
    // What the channel holds: replies that must wait for the store's
    // commit, or only replies that may go before it.
    bool holds_replies_after_commit = false;
    bool holds_replies_before_commit = false;
  };
  // Sends the reply of one request, with the session's notices; the
  // connection may be gone by then. Called with the op's typed reply, or
  // an error.
  class Reply {
   public:
    // The flag: the reply may go before the commit of this loop iteration.
    using Sender = std::function<void(Result<std::string>, bool)>;
    explicit Reply(Sender send) : send_(std::move(send)) {}
    template <class R>
    void operator()(const R& result) const {
      send_(EncodeObject(result), false);
    }
    template <class R>
    void operator()(const Result<R>& result) const {
      if (!result)
        return send_(std::unexpected(result.error()), false);
      send_(EncodeObject(*result), false);
    }
    void operator()(std::unexpected<Error> error) const {
      send_(std::move(error), false);
    }
    // For a reply whose every fact would come out the same after a crash
    // before the commit (see BeforeSleep).
    template <class R>
    void BeforeCommit(const R& result) const {
      send_(EncodeObject(result), true);
    }

   private:
    Sender send_;
  };

  void OnAccept();
  void OnLine(uint64_t connection_id, std::string_view line);
  void OnClose(uint64_t connection_id);
  void BeforeSleep();
  Reply MakeReplier(uint64_t connection_id, std::string request_id_json,
                    std::string session);
  // The task as clients see it, with its output's size.
  TaskView View(TaskRecord task);
  // True when a crash before this iteration's commit would bring a
  // restarted batond to the same end of `task`: the supervisor still keeps
  // its exit record, and batond adds nothing of its own to the end (no
  // checks, no agent verdict).
  bool EndSurvivesACrash(const TaskRecord& task) const;

  // Request handlers (daemon/commands/), one per request of ipc/messages.h.
  using Session = const std::string&;
  void Handle(Connection&, const HelloRequest&, Session, Reply);
  void Handle(Connection&, const RunRequest&, Session, Reply);
  void Handle(Connection&, const DelegateRequest&, Session, Reply);
  void Handle(Connection&, const SendRequest&, Session, Reply);
  void Handle(Connection&, const AnswerRequest&, Session, Reply);
  void Handle(Connection&, const EventsRequest&, Session, Reply);
  void Handle(Connection&, const AgentsRequest&, Session, Reply);
  void Handle(Connection&, const GetRequest&, Session, Reply);
  void Handle(Connection&, const ListRequest&, Session, Reply);
  void Handle(Connection&, const ReadRequest&, Session, Reply);
  void Handle(Connection&, const KillRequest&, Session, Reply);
  void Handle(Connection&, const WaitRequest&, Session, Reply);
  void Handle(Connection&, const AttachRequest&, Session, Reply);
  void Handle(Connection&, const NoticesRequest&, Session, Reply);
  void Handle(Connection&, const DaemonStatusRequest&, Session, Reply);
  void Handle(Connection&, const ShutdownRequest&, Session, Reply);

  // The spec of a new task from what `run` and `delegate` share (owner,
  // folder, label, environment, deadline, checks), then its own parts.
  template <class R>
  TaskSpec CommonSpec(const R& request, TaskKind kind, Session session);
  Result<TaskSpec> ShellSpec(const RunRequest& request, Session session);
  // Stores and starts `spec`; replies with the task.
  void StartTask(TaskSpec spec, Reply reply);

  DaemonOptions options_;
  EventLoop loop_;
  SystemClock clock_;
  std::unique_ptr<SqliteTaskStore> store_;
  std::unique_ptr<LocalExecutor> executor_;
  std::unique_ptr<TaskRegistry> registry_;
  std::unique_ptr<CheckRunner> checks_;
  std::unique_ptr<AgentRuntime> agents_;
  // Whether a codex has app-server (doc/agents.md).
  std::unique_ptr<AppServerProbe> codex_probe_;
  ProgramCache command_cache_;  // For the preflight's PATH searches.
  UniqueFd listen_fd_;
  std::map<uint64_t, Connection> connections_;
  std::set<uint64_t> closed_connections_;  // Removed in BeforeSleep.
  uint64_t next_connection_id_ = 1;
  TimerId flush_retry_timer_ = 0;  // Set while a failed flush waits.
  int64_t started_ms_ = 0;
};

}  // namespace baton

#endif  // BATON_DAEMON_DAEMON_H_
