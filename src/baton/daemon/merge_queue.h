// The merge queue (doc/land.md): finished worktree workers' branches,
// queued per target branch, brought onto the target's tip in a scratch
// worktree in batches, checked once per batch, and landed with a
// compare-and-swap of the target; a red batch is split until the entry
// that broke it is found. Entries are stored (schema 10): a restarted
// batond takes up the unfinished ones.
//
// Costs: git and the checks run on a WorkerPool thread of the queue's own,
// never on batond's loop, each with a deadline; one job at a time.
#ifndef BATON_DAEMON_MERGE_QUEUE_H_
#define BATON_DAEMON_MERGE_QUEUE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/core/audit.h"
#include "baton/core/land.h"
#include "baton/core/ports.h"
#include "baton/core/task.h"
#include "baton/daemon/crash_points.h"
#include "baton/daemon/merge_git.h"
#include "baton/loop/event_loop.h"
#include "baton/loop/worker_pool.h"

namespace baton {

class MergeQueue {
 public:
  struct Options {
    LandGit git;
    // A target checked out with changes: looked at again this often.
    std::chrono::milliseconds wait_retry{1000};
    size_t max_batch = 16;       // Entries tested together at most.
    size_t finished_kept = 200;  // Finished entries listed after a restart.
  };
  // Each land, failure and wait, for the audit trail (batond's own
  // actions: the caller stamps who).
  using Audit = std::function<void(AuditRecord)>;

  // Borrows all; they must outlive it.
  MergeQueue(EventLoop* loop, TaskStore* store, const Clock* clock,
             CrashPoints* crash_points, Options options, Audit audit);
  // Waits for a job's git or check to end (its result is dropped).
  ~MergeQueue();
  MergeQueue(const MergeQueue&) = delete;
  MergeQueue& operator=(const MergeQueue&) = delete;

  // Reads the stored entries; those a batond died testing are queued again
  // (the target is before or after them: doc/land.md, "Crashes"). Starts
  // their targets' work.
  Status Load();

  // Queues the branches of `tasks` (ended worktree workers, checked by
  // the caller), in order, onto `onto` (or each one's own target), with
  // `check` ("" = the repository's); each entry is its task's owner's.
  // git's checks run off the loop; `done`
  // gets the new entries, or the first refusal (nothing queued then).
  using Added = std::function<void(Result<std::vector<LandEntry>>)>;
  void Add(std::vector<TaskRecord> tasks, const std::string& onto,
           const std::string& check, Added done);

  // Every entry kept (unfinished, and the last finished), by id.
  std::vector<LandEntry> Entries() const;
  // The entry of `task` that is not finished, if any.
  const LandEntry* Unfinished(const std::string& task) const;
  // A commit failed and the store dropped its batch: every entry is put
  // again, for the next.
  void Rewrite();
  // Check runs since batond started.
  int64_t check_runs() const { return check_runs_; }

 private:
  // One target branch of one repository.
  struct Target {
    bool in_flight = false;
    TimerId timer = 0;
    // Entries known red together on `suspect_tip`, with the output.
    std::vector<int64_t> suspect;
    std::string suspect_tip;
    std::string suspect_output;
  };
  struct Job;
  using Key = std::pair<std::string, std::string>;  // Repository, target.

  void Put(const LandEntry& entry);
  void Plan(const Key& key);
  void Finish(const Key& key, Job& job);
  void Land(LandEntry& entry, const std::string& onto, std::string result);
  void Fail(LandEntry& entry, std::string reason, std::string output,
            std::vector<std::string> files = {});
  void Record(const LandEntry& entry, std::string action, std::string detail);

  EventLoop* loop_;
  TaskStore* store_;
  const Clock* clock_;
  CrashPoints* crash_points_;
  Options options_;
  Audit audit_;
  std::map<int64_t, LandEntry> entries_;
  std::map<Key, Target> targets_;
  int64_t next_id_ = 1;
  int64_t check_runs_ = 0;
  // Last: gone first, before what its jobs' results would reach.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace baton

#endif  // BATON_DAEMON_MERGE_QUEUE_H_
