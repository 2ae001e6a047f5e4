// The supervisor's journal (<home>/supervisor.journal, doc/supervisor.md,
// "When the supervisor dies"): one JSON line per event, appended with one
// write(2) each, so that a supervisor started after one that died can find
// the tasks it left: which ids it was spawning, each task's process group
// and start time (against pid reuse), its deadline and its stop, and the
// exits its keeper recorded for the orphans it reaped. Not synced: it
// survives the death of any baton process, not a power loss (nor do the
// processes it names).
#ifndef BATON_SUPERVISOR_JOURNAL_H_
#define BATON_SUPERVISOR_JOURNAL_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton {

// One task the journal says was spawned (or was being spawned) and has not
// ended.
struct JournalTask {
  std::string task;
  // False while only "spawning" is recorded: the supervisor died between
  // that line (written just before the spawn) and its outcome. The task
  // runs if its child said "began" (then `pid` is set) right before its
  // exec; else it never ran.
  bool started = false;
  // A "spawning" entry that may run though no child said "began": from a
  // journal of version 1, or an end nobody could tell (unknown_ends).
  bool may_run = false;
  int64_t pid = 0;  // Also the process group and session id.
  uint64_t start_ticks = 0;
  int64_t started_ms = 0;  // For a "spawning" entry: when the spawn began.
  std::string exit_file;
  std::string log;
  std::optional<int64_t> deadline_ms;  // Wall clock.
  int64_t grace_ms = 5000;             // For the deadline's stop.
  // Set once a stop (kill or deadline) began: SIGTERM went to the group at
  // `stopped_ms`, SIGKILL follows `stop_grace_ms` later.
  ExitCause cause = ExitCause::kNatural;
  int64_t stopped_ms = 0;
  int64_t stop_grace_ms = 0;
};

// An exit a keeper saw: a process reparented to it when its supervisor
// died, reaped by it (doc/supervisor.md, "The keeper").
struct ReapedRecord {
  int64_t pid = 0;
  uint64_t start_ticks = 0;
  int status = 0;  // As waitpid gives it.
  int64_t ended_ms = 0;
};

// An exit record sent to batond and not yet acknowledged: the journal holds
// it until batond acknowledges it or it is written to its exit file, so
// that a supervisor started after this one and batond both died writes it
// (doc/supervisor.md, "Exit records").
struct JournalExit {
  std::string exit_file;
  std::string record;  // The exited message.
};

// Task ids in a compact form: runs of numbers per kind, since a supervisor
// mostly sees them in order. Names that are not task ids are kept whole.
class TaskIdSet {
 public:
  void Insert(const std::string& id);
  bool Contains(const std::string& id) const;

 private:
  // kind name -> {first -> last} of disjoint, non-adjacent runs.
  std::map<std::string, std::map<int64_t, int64_t>> runs_;
  std::set<std::string> others_;
};

// What a journal held when it was opened.
struct JournalState {
  std::map<std::string, JournalTask> open;  // Not ended, by task.
  std::vector<ReapedRecord> reaped;
  std::map<std::string, JournalExit> held;  // Not acknowledged, by task.
  TaskIdSet known;  // Every task the journal names, ended or not.
};

// Written by the supervisor's loop and its spawn threads (each line is one
// write(2) under a lock); read by a supervisor started after one that
// died. Failures to write are logged: the journal only matters if this
// supervisor dies.
//
// Keepers append to the same file from other processes (AppendReapedRecord)
// while it may be rewritten. Both sides take flock(LOCK_EX) on the file,
// and a keeper that finds the path renamed to a new file under it writes
// there instead, so no keeper record is lost to a rewrite.
class Journal {
 public:
  // Opens (or creates) the journal at `path`, reads what it holds (nothing
  // if it was written during another boot than `boot_id`), and rewrites it
  // with only the open tasks, also dropping a line a crash cut short.
  static Result<std::pair<std::unique_ptr<Journal>, JournalState>> Open(
      std::string path, std::string boot_id);
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // A spawn thread's lines, just before and after the spawn itself. The
  // task is this journal's to keep across a compaction until the loop
  // Claim()s it (or it Ended). While the slot lives, the file is not
  // replaced, so the child can say "began" on `fd` (ChildSpec's announce,
  // with `began_before_pid` and `began_after_pid` around its pid).
  struct SpawnSlot {
    std::shared_lock<std::shared_mutex> hold;
    int fd = -1;
    std::string began_before_pid;
    std::string began_after_pid;
  };
  SpawnSlot Spawning(const JournalTask& spawning);
  void Started(const JournalTask& task);
  // The loop keeps this task's record now, and passes it to Compact.
  void Claim(const std::string& task);
  void Stopped(const JournalTask& task);
  // With `held`, the journal keeps the exit record until Acked.
  void Ended(const std::string& task, const JournalExit* held = nullptr);
  // Writes a line only for tasks whose records it holds.
  void Acked(const std::vector<std::string>& tasks);
  // An exit seen before the task's spawn outcome: recorded as a keeper
  // records one.
  void Reaped(const ReapedRecord& record);

  // Records that keepers appended since the last call (or the open).
  std::vector<ReapedRecord> ReadReaped();

  // Rewrites the file (temp file and rename) with only `open` and the
  // spawns not claimed yet; keepers' records not read yet are carried
  // over. The caller does it when the file has grown past `kCompactBytes`.
  void Compact(const std::vector<JournalTask>& open);
  static constexpr uint64_t kCompactBytes = 1 << 20;
  uint64_t size() const;
  // Lines a write refused (a full disk) are kept in memory, in order, and
  // written before any later line; this writes them now. False while the
  // file still refuses them.
  bool Flush();
  bool HasUnwritten() const;
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, std::string boot_id)
      : path_(std::move(path)), boot_id_(std::move(boot_id)) {}
  void Append(const std::string& line);
  // Writes unwritten_ to the file. REQUIRES: mu_ held.
  bool WriteUnwritten();
  // Notes a failed write (logged once per spell); false.
  bool Unwritable(int err);
  // Writes the header, `open`, the unclaimed spawns, the held exits and
  // `carried` to a temp file renamed over the journal, and appends from
  // then on to the new file. REQUIRES: mu_ held, and the file's flock.
  Status Rewrite(const std::vector<JournalTask>& open,
                 const std::string& carried = "");

  const std::string path_;
  const std::string boot_id_;
  // Held shared by a spawn under way (its child writes to fd_), and
  // exclusively by a compaction, which replaces fd_. Taken before mu_.
  std::shared_mutex file_mu_;
  mutable std::mutex mu_;
  UniqueFd fd_;
  uint64_t size_ = 0;
  uint64_t read_offset_ = 0;  // ReadReaped's position.
  // Spawns begun or done on a spawn thread, not yet claimed by the loop.
  std::map<std::string, JournalTask> unclaimed_;
  // Pids of the records Reaped() wrote: carried over by a compaction only
  // while their task is open or unclaimed (guarded by mu_).
  std::set<int64_t> own_reaped_;
  std::map<std::string, JournalExit> held_;  // Guarded by mu_.
  // Whole lines not written yet, oldest first; `cut_`: the file ends in
  // part of a line. Guarded by mu_.
  std::string unwritten_;
  bool cut_ = false;
  bool unwritable_ = false;
};

// Appends one reaped record to the journal at `path` (the keeper's side:
// it opens and locks the file for each record, since a supervisor may
// replace it meanwhile). Returns false if it could not be written.
bool AppendReapedRecord(const std::string& path, const ReapedRecord& record);

}  // namespace baton

#endif  // BATON_SUPERVISOR_JOURNAL_H_
