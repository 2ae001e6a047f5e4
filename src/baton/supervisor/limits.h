// How the supervisor holds a task to its hard limits (doc/limits.md):
// memory, CPU share and processes, for all of the task's processes
// together. Each limit goes to the best mechanism this process may use,
// chosen once at start-up:
//   - cgroup v2, in a subtree it may write with the controller enabled;
//   - else the cgroup v1 hierarchy of that controller, where it may write;
//   - else an rlimit, for memory only (RLIMIT_AS: an allocation past it
//     fails, nothing is killed); CPU share and processes are then not held.
// A cgroup also finds what escaped the task's process group (setsid) when
// the task ends, and tells an OOM kill.
#ifndef BATON_SUPERVISOR_LIMITS_H_
#define BATON_SUPERVISOR_LIMITS_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

// One task's cgroups: one folder under cgroup v2, one per controller under
// v1 (memory, cpu, pids; only those that hold one of its limits).
class TaskCgroup {
 public:
  // `memory_dir`: the one of `dirs` that holds its memory ("" when none
  // does), under cgroup v2 when `memory_v2`.
  TaskCgroup(std::vector<std::string> dirs, std::string memory_dir,
             bool memory_v2)
      : dirs_(std::move(dirs)),
        memory_dir_(std::move(memory_dir)),
        memory_v2_(memory_v2) {}

  // The processes in any of its folders.
  std::vector<pid_t> Members() const;
  bool Empty() const { return Members().empty(); }
  // Sends `signal` to each member; returns how many there were.
  int Signal(int signal) const;
  // The kernel killed a process in it at its memory limit.
  bool OomKilled() const;
  // Removes its folders; false while a process is still in one.
  bool Remove() const;

  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  std::vector<std::string> dirs_;
  std::string memory_dir_;  // "" when memory is not held by a cgroup.
  bool memory_v2_;  // Its OOM count is in memory.events, not oom_control.
};

// What a spawn applies to the child before it execs (util/spawn_child.h).
struct LimitPlan {
  std::shared_ptr<TaskCgroup> cgroup;  // Null when no limit is a cgroup's.
  std::vector<std::string> join;       // cgroup.procs files.
  std::vector<std::pair<int, rlim_t>> rlimits;
  // For people: "cgroup v1: memory, cpus, pids", "rlimit: memory (address
  // space); not held: cpus".
  std::string held_by;
};

class LimitHolder {
 public:
  // What this process may use. `tag` keeps this baton's cgroups apart from
  // another's on the machine (StatePaths::tag()); `forced` is the
  // BATON_LIMITS variable: "rlimit" uses no cgroup (as a machine without
  // them); anything else looks for them.
  static LimitHolder Probe(std::string_view tag, std::string_view forced);

  // Makes `run`'s cgroups and writes its limits into them. Thread-safe
  // (the spawn threads call it). Fails, naming the file, when a cgroup
  // cannot be made or written: the task is then not started.
  Result<LimitPlan> Prepare(const std::string& run,
                            const ResourceLimits& limits) const;
  // The cgroup of a task started before this process (by a supervisor that
  // died), when it has one.
  std::shared_ptr<TaskCgroup> Find(const std::string& run) const;
  // Removes the empty cgroups of tasks that are not in `live`: left by a
  // supervisor that died before it removed them.
  void RemoveStale(const std::set<std::string>& live) const;
  // Removes this baton's folders from the hierarchies, when they hold no
  // task's: the supervisor's last act.
  void RemoveFolders() const;

  // For the log: "memory by cgroup v1 (/sys/fs/cgroup/memory/...), ...".
  std::string Describe() const;

 private:
  // Where each limit's cgroups live: this baton's folder in the hierarchy
  // that holds it, "" when no cgroup does.
  struct Place {
    std::string dir;
    bool v2 = false;
  };
  Place memory_, cpu_, pids_;
};

}  // namespace baton

#endif  // BATON_SUPERVISOR_LIMITS_H_
