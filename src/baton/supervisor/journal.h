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
#include <optional>
#include <set>
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
  // that line and the spawn's outcome, so the task may or may not run.
  bool started = false;
  int64_t pid = 0;  // Also the process group and session id.
  uint64_t start_ticks = 0;
  int64_t started_ms = 0;
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
  TaskIdSet known;  // Every task the journal names, ended or not.
};

// Owned by the supervisor's loop thread; not thread-safe. Failures to
// write are logged: the journal only matters if this supervisor dies.
class Journal {
 public:
  // Opens (or creates) the journal at `path`, reads what it holds (nothing
  // if it was written during another boot than `boot_id`), and rewrites it
  // with only the open tasks, also dropping a line a crash cut short.
  static Result<std::pair<Journal, JournalState>> Open(std::string path,
                                                       std::string boot_id);
  Journal(Journal&&) = default;
  Journal& operator=(Journal&&) = default;

  void Spawning(const std::string& task);
  void Started(const JournalTask& task);
  void Stopped(const JournalTask& task);
  void Ended(const std::string& task);

  // Records that keepers appended since the last call (or the open).
  std::vector<ReapedRecord> ReadReaped();

  // Rewrites the file (temp file and rename) with only `open`. The caller
  // does it when the file has grown past `kCompactBytes` and no keeper may
  // still add a record it waits for.
  void Compact(const std::vector<JournalTask>& open);
  static constexpr uint64_t kCompactBytes = 1 << 20;
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, std::string boot_id)
      : path_(std::move(path)), boot_id_(std::move(boot_id)) {}
  void Append(const std::string& line);
  // Writes the header and `open` to a temp file renamed over the journal,
  // and appends from then on to the new file.
  Status Rewrite(const std::vector<JournalTask>& open);

  std::string path_;
  std::string boot_id_;
  UniqueFd fd_;
  uint64_t size_ = 0;
  uint64_t read_offset_ = 0;  // ReadReaped's position.
};

// Appends one reaped record to the journal at `path` (the keeper's side:
// it opens the file for each record, since the supervisor may have
// replaced it meanwhile). Returns false if it could not be written.
bool AppendReapedRecord(const std::string& path, const ReapedRecord& record);

}  // namespace baton

#endif  // BATON_SUPERVISOR_JOURNAL_H_
