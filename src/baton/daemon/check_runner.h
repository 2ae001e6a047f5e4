// Checks and evidence (doc/tasks.md): for a task that names check commands,
// batond snapshots its folder when it starts; when it ends, runs the checks
// there one after the other, then reports the end with the evidence: the
// files changed during the run (a before/after scan, narrowed by
// `git status` where the folder is a repository, so ignored build output
// does not count), each check's exit code and last lines, and the tasks
// that worked in the same folder meanwhile.
//
// A listener between the executor (or the agent runtime) and the registry.
// Check processes are batond's own children, watched by pidfd on the loop,
// with the task's environment (doc/agents.md, "Checks");
// a batond that dies mid-check runs the checks again after its restart (the
// task's end is only reported once they ran). Single-threaded.
#ifndef BATON_DAEMON_CHECK_RUNNER_H_
#define BATON_DAEMON_CHECK_RUNNER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/core/ports.h"
#include "baton/core/task_registry.h"
#include "baton/loop/event_loop.h"
#include "baton/loop/worker_pool.h"

namespace baton {

class CheckRunner : public ForwardingListener {
 public:
  // How long one check may run before it is killed.
  static constexpr std::chrono::minutes kCheckTimeout{10};

  CheckRunner(EventLoop* loop, Executor* executor, TaskRegistry* registry);
  ~CheckRunner() override;

  // For a new task with checks or a worktree: keeps the environment it
  // runs with, and takes the "before" half of the changed-files scan on a
  // thread, then calls `made(task)` on the loop. Part of the registry's
  // create hook (TaskRegistry::SetOnCreate), so the task is stored,
  // answered and spawned only once its "before" is on disk.
  void TakeBefore(TaskRecord task, TaskRegistry::StartCallback made);
  // The same, at once, on the loop, for a task the registry held (queue,
  // dependencies, retry) and starts now. REQUIRES: called before the task's
  // spawn request leaves batond, so the task cannot have changed anything
  // yet.
  void Snapshot(const TaskRecord& task);

  void OnTaskSpawnFailed(const TaskId& id, const Error& error) override;
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override;

 private:
  struct Run;
  void KeepEnvironment(const TaskRecord& task);
  void RunNext(const TaskId& id);
  // Runs `argv` (argv[0] a path) with `env` in `cwd`, output to `log`;
  // `done` gets the wait status.
  Status Spawn(const std::vector<std::string>& argv,
               const std::vector<std::string>& env, const std::string& cwd,
               const std::string& log, std::function<void(int)> done);
  void Complete(const TaskId& id);

  EventLoop* loop_;
  Executor* executor_;
  TaskRegistry* registry_;
  std::map<TaskId, std::unique_ptr<Run>> runs_;
  // The environments of live tasks with checks, from their TakeBefore or
  // Snapshot until their end: the one the task was started with.
  std::map<TaskId, std::vector<std::string>> environments_;
  // Where evidence is collected, off the loop, one task's at a time. Last:
  // destroyed first, its job under way finished (bounded by git's
  // deadline), the queued ones and every `done` dropped.
  WorkerPool evidence_worker_{loop_, 1, WorkerPool::AtExit::kDropQueued};
  // Where new tasks' "before" scans are taken (TakeBefore): apart from the
  // evidence, so that a start never waits behind another task's end.
  WorkerPool scan_worker_{loop_, 1, WorkerPool::AtExit::kDropQueued};
};

}  // namespace baton

#endif  // BATON_DAEMON_CHECK_RUNNER_H_
