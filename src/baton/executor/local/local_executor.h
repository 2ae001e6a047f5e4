// The Executor that runs tasks on this machine through the supervisor
// process (doc/supervisor.md): batond's end of the supervisor protocol. It
// starts the supervisor when none runs and turns its events into listener
// calls; it never forks tasks itself, so tasks outlive batond.
#ifndef BATON_EXECUTOR_LOCAL_LOCAL_EXECUTOR_H_
#define BATON_EXECUTOR_LOCAL_LOCAL_EXECUTOR_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "baton/core/ports.h"
#include "baton/ipc/line_channel.h"
#include "baton/loop/event_loop.h"
#include "baton/supervisor/protocol.h"
#include "baton/util/clock.h"
#include "baton/util/state_paths.h"

namespace baton {

// Lives on batond's loop thread; not thread-safe. Listener calls come from
// the loop (events, a lost supervisor, deferred spawn failures) except in
// Adopt(), which reports what it settles before it returns.
// REQUIRES: SetListener() before Start() or Adopt().
//
// Ordering contract (Executor's): Start() and Kill() only queue their
// messages; nothing reaches the supervisor until Flush().
class LocalExecutor : public Executor {
 public:
  static constexpr std::chrono::milliseconds kDefaultGrace{5000};
  // The bound on starting a supervisor and on its hello reply.
  static constexpr std::chrono::seconds kConnectTimeout{10};

  // `baton_binary` is run as `<it> internal-supervisor --home H --runtime R
  // --ready-fd N` when no supervisor listens. `grace` is the SIGTERM ->
  // SIGKILL grace of timeouts.
  LocalExecutor(EventLoop* loop, StatePaths paths, std::string baton_binary,
                std::chrono::milliseconds grace = kDefaultGrace);
  ~LocalExecutor() override;
  LocalExecutor(const LocalExecutor&) = delete;
  LocalExecutor& operator=(const LocalExecutor&) = delete;

  // Connects to the supervisor, starting one if none listens, and exchanges
  // hello (blocking, at most about kConnectTimeout). Call before Adopt().
  // Fails (kTimeout, kSpawnFailed, kUnavailable, kIo) when no supervisor
  // can be reached; Start() tries again. After a lost supervisor, it also
  // settles the tasks the lost one had (doc/supervisor.md, "When the
  // supervisor dies").
  Status Connect();
  // Sends everything queued by Start() and Kill(). Never blocks.
  void Flush() override;
  // The live supervisor's pid; 0 when none is connected or it has died.
  int64_t supervisor_pid() const;
  // How many times the supervisor was lost (and a new one started to adopt
  // its tasks) since batond started.
  int64_t supervisor_losses() const { return supervisor_losses_; }

  // bubblewrap's absolute path, for sandboxed tasks (doc/sandbox.md); ""
  // when there is none: a sandboxed task then fails to start.
  void set_bwrap(std::string path) { bwrap_ = std::move(path); }

  // Instead of exec'ing baton_binary, the started supervisor process (a
  // detached grandchild of ours) calls `entry(ready_fd)`, which must not
  // return. For tests that have no baton binary.
  void set_supervisor_entry_for_testing(std::function<void(int)> entry) {
    supervisor_entry_ = std::move(entry);
  }

  void SetListener(ExecutorListener* listener) override {
    listener_ = listener;
  }
  std::string TaskDir(const TaskId& id) const override;
  std::string OutputPath(const TaskId& id) const override;
  void CloseStdin(const TaskId& id) override;
  Result<uint64_t> OutputSize(const TaskRecord& task) const override;
  void Start(const TaskRecord& task) override;
  void Kill(const TaskId& id, std::chrono::milliseconds grace) override;
  // REQUIRES: Connect() was called (if it failed, every task not recorded
  // in its exit file is reported lost). A task that never started (batond
  // died between its answer and its spawn) is started now: see
  // doc/supervisor.md, "Exactly once".
  void Adopt(const std::vector<TaskRecord>& live) override;

  // Called after a store commit. For each exit reported since that
  // `is_settled` says the store now holds (the task, and the run of it that
  // exited: RunName), tells the supervisor it may forget the record rather
  // than write the exit file. Until then the supervisor keeps it, and
  // writes the file if batond goes away.
  void AcknowledgeExits(
      const std::function<bool(const TaskId&, const std::string& run)>&
          is_settled);
  // True while the supervisor keeps the exit record of the task's last run
  // for us: if batond died now, the record would reach its exit file.
  bool HoldsExitRecord(const TaskRecord& task) const {
    return unacked_exits_.contains(RunName(task));
  }

 private:
  // The exit file of `run` (RunName) of task `id`.
  std::string ExitFilePath(const TaskId& id, std::string_view run) const;
  // The name the task's live run goes by (RunName of its current attempt).
  std::string RunOf(const TaskId& id) const;
  // Start(), for a new task (`restart` false: batond makes its stdin) or
  // for one that never started before batond died (its stdin file, if
  // any, is in its folder already).
  void StartTask(const TaskRecord& task, bool restart);
  // After a reconnection: the tasks the lost supervisor had are adopted by
  // the new one, ended (exit file), unknown (lost), or were never received
  // (spawned again).
  void Reconcile();
  // Reports every task sent or adopted through their exit files, or lost.
  void SettleLost();
  void Resend(SpawnRequest request);
  ExitInfo LostExit() const;
  // Reported lost because the supervisor could not tell its end: batond
  // acknowledges it after the commit, so the supervisor forgets it.
  void ReportUnknownEnd(const TaskId& id, const std::string& run);
  // The hello's unknown ends that are not live here (settled, or not ours):
  // acknowledged after the next commit, so the supervisor forgets them.
  void AcknowledgeUnknownEnds();
  // Says hello on a fresh connection and hands it to a LineChannel.
  // kUnavailable if the supervisor closes it first (it was exiting).
  Status Handshake(UniqueFd fd, MonoTime deadline);
  // True once the new supervisor listens, false if another one held the
  // lock (connect again).
  Result<bool> StartSupervisor(MonoTime deadline);
  void OnLine(std::string_view line);
  void OnSupervisorLost();
  // The recorded end of a task the supervisor no longer has: its exit file,
  // or kLost.
  ExitInfo RecordedExit(const TaskId& id, std::string_view run) const;
  std::optional<ExitInfo> ExitFileRecord(const TaskId& id,
                                         std::string_view run) const;
  void FailLater(const TaskId& id, Error error);
  // The id of `env` on this connection; defines it first if it is new.
  // `shared` gets the environment as kept for a spawn sent again.
  uint64_t EnvironmentId(
      const std::vector<std::string>& env,
      std::shared_ptr<const std::vector<std::string>>* shared = nullptr);
  bool connected() const { return channel_ && !channel_->closed(); }

  EventLoop* loop_;
  StatePaths paths_;
  std::string baton_binary_;
  std::chrono::milliseconds grace_;
  std::function<void(int)> supervisor_entry_;
  ExecutorListener* listener_ = nullptr;

  std::unique_ptr<LineChannel> channel_;
  // A closed channel kept until the next Connect(): it may be inside its
  // own callback when it closes.
  std::unique_ptr<LineChannel> retired_channel_;
  std::vector<std::string> outbox_;  // Lines waiting for Flush().
  int64_t supervisor_pid_ = 0;
  UniqueFd supervisor_pidfd_;   // Polls readable once it died.
  int supervisor_version_ = 0;  // Its protocol, from the hello reply.
  std::map<std::string, LiveTask> hello_live_;  // At hello, by task.
  std::set<std::string> unknown_ends_;          // From the hello.
  // Spawns queued or sent whose outcome has not come: sent again to a new
  // supervisor if the one they went to died (the new one refuses an id
  // already started).
  std::map<std::string, SpawnRequest> unanswered_;
  // Kills asked for live tasks, by task: sent again after a reconnection.
  std::map<std::string, std::chrono::milliseconds> kills_;
  // The supervisor was lost: the next Connect() settles what it had.
  bool reconcile_pending_ = false;
  TimerId reconnect_timer_ = 0;
  int64_t supervisor_losses_ = 0;
  // Tasks sent to (or adopted from) the supervisor whose end we have not
  // reported yet.
  std::map<std::string, TaskId> live_;
  // Exits reported to the listener and not yet acknowledged.
  std::map<std::string, TaskId> unacked_exits_;
  // Exits that came between the hello and Adopt() for tasks not yet
  // claimed: Adopt() takes them (the supervisor wrote no file for them).
  std::map<std::string, ExitInfo> unclaimed_exits_;
  // Environments sent to the supervisor on this connection (EnvRequest),
  // so that a spawn names one instead of carrying its kilobytes.
  static constexpr uint64_t kEnvironments = 16;
  struct EnvironmentSlot {
    uint64_t id = 0;
    std::shared_ptr<const std::vector<std::string>> env;
  };
  std::map<std::vector<std::string>, EnvironmentSlot> environment_ids_;
  uint64_t next_environment_ = 0;
  // For a task that brings no environment (started again after a restart:
  // its client's is never stored): the clean one (util/environment.h),
  // never batond's own.
  const std::vector<std::string> own_env_;
  std::string bwrap_;  // "": no sandbox can be made.
  // bubblewrap's command line for a sandboxed task, whose environment
  // (before the sandbox cleans it) is `env`.
  Result<std::vector<std::string>> SandboxedArgv(
      const TaskRecord& task, const std::vector<std::string>& env) const;
  std::vector<std::pair<TaskId, Error>> failures_;  // For FailLater().
  TimerId failure_timer_ = 0;                       // 0 = none.
};

}  // namespace baton

#endif  // BATON_EXECUTOR_LOCAL_LOCAL_EXECUTOR_H_
