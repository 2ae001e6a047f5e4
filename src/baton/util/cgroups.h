// The cgroup hierarchies as a process sees them, read without writing
// anything: where each is mounted, a process's cgroups, and what a
// supervisor started from here could hold each task limit with
// (doc/limits.md, "What holds them"). The supervisor's LimitHolder::Probe
// reads them through here, and so does `baton doctor`, which must change
// nothing on the machine.
#ifndef BATON_UTIL_CGROUPS_H_
#define BATON_UTIL_CGROUPS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// A cgroup hierarchy's mount: its point, and its own root, which a cgroup
// path is relative to.
struct CgroupMount {
  std::string point;
  std::string root;
};

// The cgroups of the process whose /proc/<pid>/cgroup `proc_cgroup` names:
// hierarchy 0 (v2) as "", each v1 controller by name, to its path.
std::map<std::string, std::string> CgroupsOf(
    const std::string& proc_cgroup = "/proc/self/cgroup");
// The mounts of /proc/self/mountinfo: "" for v2, each v1 controller by
// name.
std::map<std::string, CgroupMount> CgroupMounts();
// The folder of a cgroup path under its mount, or "" when it is not below
// the mount's root (another namespace's).
std::string CgroupDir(const CgroupMount& mount, const std::string& path);
// The controllers a cgroup v2 folder offers its children's parent
// (cgroup.controllers), as whole words.
std::vector<std::string> OfferedControllers(const std::string& dir);

// How one limit would be held: `how` is "cgroup v2", "cgroup v1",
// "rlimit" or "" (not held); `dir` the cgroup folder it is judged by.
struct LimitMechanism {
  std::string limit;  // "memory", "cpus", "pids".
  std::string how;
  std::string dir;
};

// What a supervisor started from this process (its cgroups, the mounts it
// sees, BATON_LIMITS `forced`) would use for memory, cpus and pids, judged
// by permissions only, as LimitHolder::Probe decides: cgroup v2 where its
// cgroup offers the controller and its folder is writable; else the v1
// hierarchy of that controller where it may write; else, for memory only,
// an rlimit. A forecast: Probe may still fall back from v2 when batond
// shares the supervisor's cgroup (doc/limits.md).
std::vector<LimitMechanism> ForecastLimits(std::string_view forced);

}  // namespace baton

#endif  // BATON_UTIL_CGROUPS_H_
