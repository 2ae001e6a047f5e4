// What the supervisor reads about processes it may not be the parent of:
// a process's identity across pid reuse (its start time, from
// /proc/<pid>/stat), the members of a process group, this boot's id. Used
// to find a dead supervisor's tasks again (doc/supervisor.md, "When the
// supervisor dies") and to stop what a task left in its group.
#ifndef BATON_SUPERVISOR_PROCESS_INFO_H_
#define BATON_SUPERVISOR_PROCESS_INFO_H_

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// The fields of /proc/<pid>/stat the supervisor needs.
struct ProcStat {
  char state = '?';  // 'R', 'S', ..., 'Z' for a zombie.
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  // Clock ticks after boot at which the process started. With the pid and
  // the boot id, it names one process: a reused pid has a later start.
  uint64_t start_ticks = 0;
};

// Parses the text of a /proc/<pid>/stat file; nullopt if malformed. The
// command name (field 2) may hold spaces and parentheses, so the fields are
// read after its last ')'.
std::optional<ProcStat> ParseProcStat(std::string_view text);

// nullopt when the process is gone (or /proc cannot be read). A zombie
// still has its stat, start time included.
std::optional<ProcStat> ReadProcStat(pid_t pid);

// The wait status (as waitpid gives it) that waitid's `info` describes.
int WaitStatusOf(const siginfo_t& info);

// The pids in process group `pgid`, zombies included, found by reading
// /proc. Costs a read of every process's stat: used only for a group that
// outlived its leader.
std::vector<pid_t> GroupMembers(pid_t pgid);

// True while process group `pgid` has a member (a zombie counts).
bool GroupExists(pid_t pgid);

// The wall-clock time (ms since the epoch) at which a process that started
// `start_ticks` clock ticks after boot started, to within a tick (10 ms).
// nullopt if the clocks cannot be read.
std::optional<int64_t> StartedAtWallMillis(uint64_t start_ticks);

// The children of this process's main thread (/proc/self/task/<pid>/
// children): the orphans reparented to it, a child subreaper, since the
// kernel gives them to the first live thread. The tasks its spawn threads
// started are theirs, so the file stays short however many tasks run.
std::vector<pid_t> ChildrenOfMainThread();

// True when `pid`'s environment holds the entry `entry` ("K=V"), which
// only a process of the same user can read.
bool EnvironmentHas(pid_t pid, std::string_view entry);

// /proc/sys/kernel/random/boot_id, "" if unreadable. Start times and pids
// mean nothing across a reboot.
std::string BootId();

// pidfd_open(2): an fd that polls readable once `pid` has ended, also when
// we are not its parent. -1 (errno set) on failure.
int OpenPidfd(pid_t pid);

}  // namespace baton

#endif  // BATON_SUPERVISOR_PROCESS_INFO_H_
