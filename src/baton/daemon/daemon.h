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
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "baton/core/task_registry.h"
#include "baton/daemon/agent_config_file.h"
#include "baton/daemon/agent_runtime.h"
#include "baton/daemon/app_server_probe.h"
#include "baton/daemon/check_runner.h"
#include "baton/daemon/conflict_radar.h"
#include "baton/daemon/crash_points.h"
#include "baton/daemon/merge_queue.h"
#include "baton/daemon/output_cap.h"
#include "baton/daemon/output_redactor.h"
#include "baton/daemon/preflight.h"
#include "baton/daemon/sandbox_probe.h"
#include "baton/executor/local/local_executor.h"
#include "baton/executor/routing_executor.h"
#include "baton/executor/slurm/slurm_executor.h"
#include "baton/ipc/codec.h"
#include "baton/ipc/line_channel.h"
#include "baton/loop/event_loop.h"
#include "baton/loop/worker_pool.h"
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
  // A reply waiting for the commit of its loop iteration, in parts, so
  // that a failed commit can send an error instead, or the reply without
  // the notices it would have carried.
  struct HeldReply {
    std::string id_json;         // The request's id, as it came.
    Result<std::string> result;  // The result object's text, or the error.
    std::string notices_json;    // The notices list's text, or empty.
    // Its facts hang on this iteration's commit (see NeedsCommit).
    bool needs_commit = true;
  };
  struct Connection {
    uint64_t id = 0;
    std::unique_ptr<LineChannel> channel;
    std::string attached_session;  // Set by "attach".
    // Who it is, for the audit trail: the peer as the kernel saw it at
    // connect, and what kind of client that process is (client_kind.h),
    // read from /proc at its first audited request rather than at connect:
    // most connections (wait, ls, output) are never audited.
    int64_t peer_uid = -1;
    int64_t peer_pid = 0;
    mutable std::optional<std::string> client;
    std::set<WaitId> waits;
    std::vector<HeldReply> held;  // In order; sent after the commit.
    bool sent_early = false;      // The channel holds replies to flush now.
  };
  // Sends the reply of one request, with the session's notices; the
  // connection may be gone by then. Called with the op's typed reply, or
  // an error.
  class Reply {
   public:
    // The ends a reply reports when it may go before the commit of this
    // loop iteration (RawBeforeCommit); nullopt for every other reply.
    using EarlyEnds = std::optional<std::vector<TaskId>>;
    using Sender = std::function<void(Result<std::string>, EarlyEnds)>;
    explicit Reply(Sender send) : send_(std::move(send)) {}
    template <class R>
    void operator()(const R& result) const {
      send_(EncodeObject(result), std::nullopt);
    }
    template <class R>
    void operator()(const Result<R>& result) const {
      if (!result)
        return send_(std::unexpected(result.error()), std::nullopt);
      send_(EncodeObject(*result), std::nullopt);
    }
    void operator()(std::unexpected<Error> error) const {
      send_(std::move(error), std::nullopt);
    }
    // For a reply whose every fact would come out the same after a crash
    // before the commit (see BeforeSleep): `ends` are the ends it reports,
    // which stay seen if it went early and the commit then fails.
    template <class R>
    void BeforeCommit(const R& result, std::vector<TaskId> ends) const {
      send_(EncodeObject(result), std::move(ends));
    }

   private:
    Sender send_;
  };

  void OnAccept();
  // Out of descriptors: accepts the next client on the reserve descriptor,
  // tells it why and closes it, so that no client hangs and the listening
  // socket does not wake the loop for it again and again. True when it
  // refused one (try the next); false when there was none, or when it
  // could not (then accepting pauses for a moment).
  bool RefuseClient(int err);
  void PauseAccepting();
  void OnLine(uint64_t connection_id, std::string_view line);
  void OnClose(uint64_t connection_id);
  void BeforeSleep();
  // The commit failed: logged once until it works again, retried.
  void OnCommitFailed(const Error& error, const std::vector<TaskId>& dropped);
  // The error a request gets when the state it needs cannot be saved.
  Error CannotSave(const Error& cause) const;
  // `reply` as sent, given the commit's failure (nullopt: it worked).
  static std::string ReplyLine(HeldReply reply,
                               const std::optional<Error>& failure);
  Reply MakeReplier(uint64_t connection_id, std::string request_id_json,
                    std::string session, bool needs_commit);
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
  void Handle(Connection&, const RerunRequest&, Session, Reply);
  void Handle(Connection&, const EditRequest&, Session, Reply);
  void Handle(Connection&, const SendRequest&, Session, Reply);
  void Handle(Connection&, const QueuedRequest&, Session, Reply);
  void Handle(Connection&, const AnswerRequest&, Session, Reply);
  void Handle(Connection&, const QuestionsRequest&, Session, Reply);
  void Handle(Connection&, const EventsRequest&, Session, Reply);
  void Handle(Connection&, const AgentsRequest&, Session, Reply);
  void Handle(Connection&, const GetRequest&, Session, Reply);
  void Handle(Connection&, const ListRequest&, Session, Reply);
  void Handle(Connection&, const ReadRequest&, Session, Reply);
  void Handle(Connection&, const KillRequest&, Session, Reply);
  void Handle(Connection&, const RemoveRequest&, Session, Reply);
  void Handle(Connection&, const WaitRequest&, Session, Reply);
  void Handle(Connection&, const AttachRequest&, Session, Reply);
  void Handle(Connection&, const NoticesRequest&, Session, Reply);
  void Handle(Connection&, const DaemonStatusRequest&, Session, Reply);
  void Handle(Connection&, const ShutdownRequest&, Session, Reply);
  void Handle(Connection&, const WatchRequest&, Session, Reply);
  void Handle(Connection&, const QueueSetRequest&, Session, Reply);
  void Handle(Connection&, const QueueListRequest&, Session, Reply);
  void Handle(Connection&, const BudgetRequest&, Session, Reply);
  void Handle(Connection&, const AuditRequest&, Session, Reply);
  void Handle(Connection&, const WorktreesRequest&, Session, Reply);
  // The registry's SetOnCreate: an agent that asked for its own worktree
  // gets it once its id is known (the branch is named after it), before
  // the task is stored; git runs off the loop, so a slow repository holds
  // only this task's answer. Then the check runner takes the task's
  // "before" (on a thread too). In commands/worktrees.cc.
  void PrepareThenStart(TaskRecord task, TaskRegistry::StartCallback made);
  void Handle(Connection&, const ConflictsRequest&, Session, Reply);
  void Handle(Connection&, const LandRequest&, Session, Reply);
  void Handle(Connection&, const LandsRequest&, Session, Reply);
  void Handle(Connection&, const MetricsRequest&, Session, Reply);
  // The waits an end answered in this iteration whose replies were just
  // written (those sent before the commit, or the rest): their wake times
  // into /metrics' histogram (doc/metrics.md).
  void ObserveWakes(bool early);

  // The notices a reply to `session` carries, as the list's JSON text
  // ("" for none), taken: the registry's (`reports_ends` when there are,
  // since they report ends) and the conflict radar's (daemon/notices.cc).
  std::string NoticesJson(Session session, bool& reports_ends);

  // An audit record of an action `connection` asked for in `session`:
  // who, with the action and task; the handler adds what and why.
  static AuditRecord AuditOf(const Connection& connection, Session session,
                             std::string action, std::string task = {});

  // The spec of a new task from what `run` and `delegate` share (owner,
  // folder, label, environment, deadline, checks), then its own parts.
  template <class R>
  TaskSpec CommonSpec(const R& request, TaskKind kind, Session session);
  // A shell task's spec, before its preflight (daemon/preflight.h).
  Result<TaskSpec> ShellSpec(const RunRequest& request, Session session);
  // What `run` and `delegate` do; `rerun_of` names the ended task a
  // `rerun` starts again (commands/rerun.cc), "" for a new one.
  void StartShell(Connection& connection, const RunRequest& request,
                  Session session, const std::string& rerun_of, Reply reply);
  void StartAgent(Connection& connection, const DelegateRequest& request,
                  Session session, const std::string& rerun_of, Reply reply);
  // Stores and starts `spec`, with its audit record (`audit`, to which it
  // adds the task and the command); replies with the task. A sandboxed
  // task first waits for the sandbox probe: where no sandbox can be made,
  // a profile that is `required` is refused, another runs unconfined.
  void StartTask(TaskSpec spec, AuditRecord audit, Reply reply);
  void StoreTask(TaskSpec spec, AuditRecord audit, Reply reply);
  // StartTask, after asking a remote task's executor whether it would take
  // it (Executor::Preflight; doc/slurm.md, "Preflight"); the reply waits
  // for the answer.
  void StartChecked(TaskSpec spec, AuditRecord audit, Reply reply);

  DaemonOptions options_;
  EventLoop loop_;
  SystemClock clock_;
  std::unique_ptr<SqliteTaskStore> store_;
  // The supervisor's end (tasks on this machine), Slurm's, and the router
  // the registry and the rest of batond see.
  std::unique_ptr<LocalExecutor> executor_;
  std::unique_ptr<SlurmExecutor> slurm_;
  std::unique_ptr<RoutingExecutor> router_;
  std::unique_ptr<TaskRegistry> registry_;
  std::unique_ptr<CheckRunner> checks_;
  std::unique_ptr<OutputRedactor> output_redactor_;
  std::unique_ptr<OutputCap> output_cap_;
  std::unique_ptr<AgentRuntime> agents_;
  // Whether a codex has app-server (doc/agents.md).
  std::unique_ptr<AppServerProbe> codex_probe_;
  std::unique_ptr<SandboxProbe> sandbox_probe_;
  // Where agents' worktrees are made (git, off the loop); gone before the
  // registry its answers reach.
  std::unique_ptr<WorkerPool> worktree_worker_;
  // Overlaps of live workers' worktrees (doc/conflicts.md); after the
  // registry, so gone before it.
  std::unique_ptr<ConflictRadar> radar_;
  // The merge queue (doc/land.md); gone before the registry and the store.
  std::unique_ptr<MergeQueue> lands_;
  ProgramCache command_cache_;  // For the preflight's PATH searches.
  // The preflight's `sh -n`, off the loop; after the cache its callbacks
  // use, so that it goes first.
  CommandRunner preflight_runner_{&loop_};
  AgentConfigCache config_cache_;  // The config file's last parse.
  CrashPoints crash_points_;       // Test-only (doc/faults.md).
  UniqueFd listen_fd_;
  bool socket_activated_ = false;  // listen_fd_ is systemd's
  // Kept open to be closed when descriptors run out: it makes room to
  // accept a client and tell it so (RefuseClient).
  UniqueFd reserve_fd_;
  // Since the first EMFILE, until an accept once connections closed (one
  // that a descriptor freed for a moment elsewhere allowed ends nothing:
  // the log tells an episode once).
  bool out_of_fds_ = false;
  size_t out_of_fds_connections_ = 0;  // Open when it began.
  // How many fewer connections end it (OnAccept).
  static constexpr size_t kFdEpisodeSlack = 4;
  uint64_t refused_clients_ = 0;     // While out_of_fds_.
  TimerId accept_resume_timer_ = 0;  // Set while accepting pauses.
  // What all clients' request bytes may hold together (kMaxHeldRequestBytes);
  // before connections_, which it outlives.
  InputBudget input_budget_{kMaxHeldRequestBytes};
  std::map<uint64_t, Connection> connections_;
  std::set<uint64_t> closed_connections_;  // Removed in BeforeSleep.
  // Commits that changed state, and the watches waiting for the next one,
  // by connection (WatchRequest).
  int64_t changes_ = 0;
  std::vector<std::pair<uint64_t, Reply>> watches_;
  uint64_t next_connection_id_ = 1;
  TimerId flush_retry_timer_ = 0;  // Set while a failed flush waits.
  // Since the first failed commit, until one works.
  bool commit_failing_ = false;
  MonoTime commit_failing_since_{};
  uint64_t failed_commits_ = 0;
  int64_t started_ms_ = 0;
  // When each wait an end answered in this loop iteration was answered,
  // and whether its reply goes before the commit (commands/wait.cc);
  // emptied by ObserveWakes, its capacity kept.
  struct Woken {
    MonoTime at;
    bool early = false;
  };
  std::vector<Woken> woken_;
};

}  // namespace baton

#endif  // BATON_DAEMON_DAEMON_H_
