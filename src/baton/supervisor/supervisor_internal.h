// The supervisor process's state and loop (doc/supervisor.md). Internal to
// supervisor/: supervisor.cc has the connection, hello and spawn side,
// supervisor_tasks.cc the task side (stops, reaping, leftovers, exit
// records, adopting a dead supervisor's tasks). RunSupervisor
// (supervisor.h) is the entry point.
#ifndef BATON_SUPERVISOR_SUPERVISOR_INTERNAL_H_
#define BATON_SUPERVISOR_SUPERVISOR_INTERNAL_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/ipc/line_channel.h"
#include "baton/loop/event_loop.h"
#include "baton/supervisor/journal.h"
#include "baton/supervisor/limits.h"
#include "baton/supervisor/process_info.h"
#include "baton/supervisor/protocol.h"
#include "baton/supervisor/spawn_pool.h"
#include "baton/util/state_paths.h"
#include "baton/util/unique_fd.h"

namespace baton {

// A task's exit record on its way to batond: the file it goes to when no
// batond takes it, the record (an exited message), and what a hello lists
// of a task whose end is still to be told.
struct PendingExit {
  std::string file;
  std::string record;
  int64_t pid = 0;
  int64_t started_ms = 0;
};

class Supervisor {
 public:
  explicit Supervisor(const StatePaths& paths) : paths_(paths) {}
  // REQUIRES: `lock` holds the supervisor lock; `journal` was opened.
  int Run(UniqueFd ready, UniqueFd lock, std::unique_ptr<Journal> journal,
          JournalState state);

 private:
  using milliseconds = std::chrono::milliseconds;

  struct Task {
    std::string id;
    pid_t pid = 0;    // Also the process group and session id.
    UniqueFd log_fd;  // Kept open until the exit, for the disk-full check.
    UniqueFd stdin_holder;  // A FIFO stdin's writer, until close_stdin.
    // What the journal says of it (exit file, start, deadline, stop).
    JournalTask record;
    milliseconds grace{0};                  // For the timeout and leftovers.
    ExitCause cause = ExitCause::kNatural;  // Else a stop is under way.
    TimerId deadline = 0;                   // 0 = none.
    // Adopted from a supervisor that died: not our child, so its end comes
    // through this pidfd and its status from the keeper's record.
    bool orphan = false;
    UniqueFd pidfd;
    int record_tries = 0;
    // The leader has ended and its group is being emptied (doc/supervisor.md,
    // "Leftovers"); its status and how many it left.
    bool leader_ended = false;
    int leader_status = 0;
    bool status_lost = false;
    int64_t leader_ended_ms = 0;
    bool drained = false;  // The group outlived the leader.
    MonoTime drain_deadline{};
    int leftovers = 0;
    TimerId drain_timer = 0;
    // Its cgroups, when a limit of it is held by one: the leftovers then
    // include what escaped its group (setsid), and the end says whether
    // the kernel killed it out of memory.
    std::shared_ptr<TaskCgroup> cgroup;
    // Without a cgroup, what escaped its group is found among the orphans
    // reparented to us (the subreaper) by this entry of its
    // environment, "BATON_TASK_ID=<id>", and stopped with the group.
    std::string id_entry;
    std::vector<pid_t> escapees;
  };
  using TaskMap = std::map<std::string, Task>;

  // supervisor.cc: signals as loop events, then the socket.
  Status Listen();
  void OnAccept();
  void OnLine(std::string_view line);
  void Send(const std::string& line);
  void Spawn(SpawnRequest request);
  void OnSpawned(SpawnOutcome outcome);
  // Answers a hello once no spawn is under way, so that its live list is
  // complete.
  void MaybeAnswerHello();
  void OnAck(const std::vector<std::string>& tasks);
  void ScheduleDeadline(Task& task, milliseconds after);

  // supervisor_tasks.cc.
  void Stop(Task& task, milliseconds grace, ExitCause cause);
  // SIGKILL after `grace` to what is left of group `pgid` and of `cgroup`.
  void EscalateAfter(pid_t pgid, milliseconds grace,
                     std::shared_ptr<TaskCgroup> cgroup);
  // Sends `signal` to the task's group and to everything in its cgroup.
  static void SignalTask(const Task& task, int signal);
  // Something of the task still runs: its group, or in its cgroup.
  static bool TaskAlive(const Task& task);
  // Removes a finished task's cgroup, again a little later while a process
  // that was just killed has not left it yet.
  void RemoveCgroup(std::shared_ptr<TaskCgroup> cgroup, int tries);
  void ReapChildren();
  // The leader of `it` ended with `status`: the task ends now, or once the
  // processes it left in its group are gone.
  void LeaderEnded(TaskMap::iterator it, int status, bool status_lost,
                   int64_t ended_ms = 0);
  // Ends the task once its group is empty; else looks again shortly.
  void PollDrain(const std::string& id);
  // Ends the tasks whose leader ended and whose group is now empty.
  void FinishDrainedTasks();
  void Finish(TaskMap::iterator it);
  // Writes the exit records batond has not acknowledged to their files: it
  // went away, so the files are now their only record.
  void WriteUnackedExits();
  // Writes `exit` to its file; on failure (a full disk) keeps it in
  // unwritten_exits_ and tries again every second (doc/supervisor.md).
  void WriteExitFile(const std::string& task, PendingExit exit);
  void RetryUnwrittenExits();
  // At start-up: takes over the tasks a dead supervisor's journal names.
  void AdoptOrphans(JournalState state);
  void AdoptOrphan(const JournalTask& record);
  // Adds to task.escapees the processes of `task` that left its group and
  // its session and came to us when their parent died.
  void FindEscapees(Task& task);
  // The task a dead supervisor was spawning, as started, if its child said
  // "began" and the pid is still (or was, by its keeper's record) that
  // child's.
  std::optional<JournalTask> IdentifyBegun(const JournalTask& record);
  // A child reaped before its spawn's outcome came back (or a grandchild).
  void EarlyExit(pid_t pid, int status);
  // Journals the end of task `id`, whose leader `pid` ended with `status`
  // and is not reaped yet (ReapChildren).
  void JournalEnd(const std::string& id, pid_t pid, int status);
  static constexpr int64_t kTickSlackMs = 20;
  void OnOrphanEnded(const std::string& id);
  // The keeper's record of an orphan's end, if it wrote it yet.
  std::optional<ReapedRecord> FindReaped(const Task& task);
  void CompactJournalIfLarge();

  StatePaths paths_;
  EventLoop loop_;
  UniqueFd listen_fd_;
  std::unique_ptr<LineChannel> client_;
  // Unsolicited events go only to a client that said hello, so that the
  // first line it reads is the hello reply.
  bool client_said_hello_ = false;
  TaskMap tasks_;  // Live tasks by id.
  std::unordered_map<pid_t, std::string> ids_by_pid_;
  // Tasks handed to the pool and not yet started, with what batond asked
  // for them meanwhile.
  struct Starting {
    bool close_stdin = false;
    std::optional<milliseconds> kill_grace;
    uint64_t connection = 0;  // Which client asked (connection_).
  };
  std::map<std::string, Starting> starting_;
  // Children reaped while spawns were under way whose pid no task had yet:
  // a task that ended before its spawn's outcome came back, or an orphaned
  // grandchild. Cleared once nothing is starting.
  std::unordered_map<pid_t, int> early_exits_;
  bool hello_pending_ = false;
  // Counts accepted connections: a spawn's outcome is answered only to
  // the connection that asked; a later one learns it from its hello.
  uint64_t connection_ = 0;
  // Pending SIGKILLs by process group, also of groups whose leader is gone.
  struct Escalation {
    TimerId timer = 0;
    std::shared_ptr<TaskCgroup> cgroup;
  };
  std::map<pid_t, Escalation> escalations_;
  // What holds tasks to their limits (doc/limits.md); probed at start-up.
  LimitHolder limits_;
  // Exit records sent to batond and not yet acknowledged (it acknowledges
  // once it has committed the task's end), by task.
  std::map<std::string, PendingExit> unacked_exits_;
  // Exit records neither acknowledged nor written (the disk was full), by
  // task: held here until a write succeeds or a batond takes them (its
  // hello lists them as live, and their records follow).
  std::map<std::string, PendingExit> unwritten_exits_;
  TimerId unwritten_timer_ = 0;
  // Retries the journal's lines a write refused (Journal::Flush).
  static constexpr std::chrono::milliseconds kJournalRetry{100};
  TimerId journal_timer_ = 0;
  // Environments batond defined on this connection (EnvRequest), by id.
  static constexpr size_t kMaxEnvironments = 256;
  std::unordered_map<uint64_t, std::shared_ptr<const std::vector<std::string>>>
      environments_;
  // Exiting when idle waits until a client came or the start-up grace ran
  // out.
  bool idle_exit_armed_ = false;
  bool stop_requested_ = false;

  std::unique_ptr<Journal> journal_;
  // After what its threads use (limits_, journal_), so that it is destroyed,
  // and its threads joined, before them.
  std::unique_ptr<SpawnPool> pool_;
  // Every id spawned by us or named by the journal we started from: never
  // spawned again (doc/supervisor.md, "Exactly once").
  TaskIdSet spawned_ids_;
  // Started (or being started) by a supervisor that died, their ends not
  // known: told to batond in every hello until it acknowledges them.
  std::vector<std::string> unknown_ends_;
  // Keeper records read from the journal and not yet matched.
  std::vector<ReapedRecord> reaped_;
};

}  // namespace baton

#endif  // BATON_SUPERVISOR_SUPERVISOR_INTERNAL_H_
