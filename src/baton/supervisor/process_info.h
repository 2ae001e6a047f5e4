// What the supervisor reads about processes it may not be the parent of:
// a process's identity across pid reuse (its start time, from
// /proc/<pid>/stat), the members of a process group, this boot's id. Used
// to find a dead supervisor's tasks again (doc/supervisor.md, "When the
// supervisor dies") and to stop what a task left in its group.
#ifndef BATON_SUPERVISOR_PROCESS_INFO_H_
#define BATON_SUPERVISOR_PROCESS_INFO_H_

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

// The pids in process group `pgid`, zombies included, found by reading
// /proc. Costs a read of every process's stat: used only for a group that
// outlived its leader.
std::vector<pid_t> GroupMembers(pid_t pgid);

// True while process group `pgid` has a member (a zombie counts).
bool GroupExists(pid_t pgid);

// A session leader whose environment holds the entry `marker` ("K=V") and
// that started at `not_before_ms` (wall clock) or later, within the clock
// tick's precision; the first to start if several do. Reads every
// process's stat and a leader's environment: used only to find a task that a
// dead supervisor was starting (its children, and a daemon a task started
// earlier with setsid, carry the same entry but start later or earlier).
// A process that already ended is not found (a zombie shows no environment).
struct FoundProcess {
  pid_t pid = 0;
  uint64_t start_ticks = 0;
};
std::optional<FoundProcess> FindTaskLeader(std::string_view marker,
                                           int64_t not_before_ms);

// /proc/sys/kernel/random/boot_id, "" if unreadable. Start times and pids
// mean nothing across a reboot.
std::string BootId();

// pidfd_open(2): an fd that polls readable once `pid` has ended, also when
// we are not its parent. -1 (errno set) on failure.
int OpenPidfd(pid_t pid);

}  // namespace baton

#endif  // BATON_SUPERVISOR_PROCESS_INFO_H_
