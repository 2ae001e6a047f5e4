// Redaction of secrets in what tasks print (doc/redaction.md): batond
// scans each running task's log as it grows and overwrites each secret of
// a well-known shape (util/secret_shapes.h) in place with a marker of the
// same length, `[redacted: github-token]****`. The task writes its log
// itself (O_APPEND, past the end); batond writes only inside what was
// written, so the two never meet, and every offset into the log stays
// true. Reads of a live task's log stop where a pass decided
// (TaskRegistry::SetReadBound), so a secret still being printed is never
// handed out half masked; at the task's end, before the end is reported,
// a last pass decides what was left open. What was masked is counted per
// kind into the task's kTaskRedactionsFile. A listener between the output
// cap and the check runner. Single-threaded.
#ifndef BATON_DAEMON_OUTPUT_REDACTOR_H_
#define BATON_DAEMON_OUTPUT_REDACTOR_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baton/core/ports.h"
#include "baton/core/task_registry.h"
#include "baton/loop/event_loop.h"
#include "baton/util/result.h"

namespace baton {

// Secrets masked, per kind ("github-token": 2).
using RedactionCounts = std::map<std::string, int64_t>;

// What one pass over a log did.
struct RedactPass {
  uint64_t settled = 0;   // The next pass starts here.
  uint64_t readable = 0;  // Readers may be given the log up to here.
  RedactionCounts masked;
  bool whole = true;  // It reached the log's end (not stopped by a budget).
};

struct RedactLimits {
  // Read in pieces of this many bytes: a huge log never sits in memory.
  size_t piece = 1 << 20;
  // Scan no further (a capped log: past the cap is a hole).
  uint64_t end = UINT64_MAX;
  // Stop after about this many bytes (at a piece's end): one pass never
  // holds the loop long. The scan runs at 0.7 to 1 GB/s
  // (bench/redaction_scan.cc).
  uint64_t budget = UINT64_MAX;
};

// Scans `path` from `from` (a pass's `settled`) to its end, within
// `limits`, and masks the secrets found there. `at_end`: the task ended,
// nothing more comes.
Result<RedactPass> RedactLog(const std::string& path, uint64_t from,
                             bool at_end, const RedactLimits& limits = {});

// Masks the whole of a file nothing writes to any more (a check's log, a
// diff, an agent's stream), in place. A missing file is nothing to mask;
// a failure is logged: what is shown from the file is then not masked.
void RedactFinishedFile(const std::string& path);

// What a task's kTaskRedactionsFile at `path` says was masked; none when
// there is no such file (nothing was).
std::vector<RedactionCount> ReadRedactions(const std::string& path);

// The listener: every kTick a pass over each running task's log; at its
// end, before the end is reported, the last pass.
class OutputRedactor : public ForwardingListener {
 public:
  static constexpr std::chrono::milliseconds kTick{250};
  // What one pass scans at most, per task: some 20 ms.
  static constexpr uint64_t kPassBudget = 16 << 20;

  OutputRedactor(EventLoop* loop, TaskRegistry* registry,
                 const Executor* executor, ExecutorListener* next);
  ~OutputRedactor() override;

  // The live tasks, when batond starts: each scanned again from the start
  // of its log (a marker is no secret, so that is safe), its counts taken
  // back from its kTaskRedactionsFile.
  void Recover(const std::vector<TaskRecord>& live);
  // A pass over `id`'s log now, for a read: how far the log may be shown
  // (nullopt for a task it does not watch: all of it).
  std::optional<uint64_t> CatchUp(const TaskId& id);
  // How far `id`'s log may be shown as of the last pass, without one.
  std::optional<uint64_t> Readable(const TaskId& id) const;
  // Secrets masked in tasks' logs since batond started, by kind
  // (/metrics: doc/metrics.md).
  const RedactionCounts& masked_total() const { return masked_total_; }

  void OnTaskSpawned(const TaskId& id, int64_t pid,
                     int64_t started_ms) override;
  void OnTaskSpawnFailed(const TaskId& id, const Error& error) override;
  void OnTaskPlaced(const TaskId& id, const Placement& job) override;
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override;

 private:
  struct Watched {
    std::string path;
    std::string counts_path;    // kTaskRedactionsFile
    uint64_t cap = UINT64_MAX;  // A shell task's output cap, while it runs.
    uint64_t settled = 0;
    uint64_t readable = 0;
    RedactionCounts masked;
    // Set when it ended with more of its log to scan than one pass does:
    // its end, reported once the log is done.
    std::optional<ExitInfo> exit;
  };
  void Watch(const TaskRecord& task);
  // One pass over `watched` (at most kPassBudget); logs a failure once.
  // False when the budget stopped it before the log's end.
  bool Pass(Watched& watched, bool at_end);
  // Adds `masked` to the counts and writes them to the task's folder.
  void SaveCounts(Watched& watched, const RedactionCounts& masked);
  void ScheduleTick();
  void Tick();
  // One more pass over each ended task's log; reports the ends of those
  // done. Runs each loop turn while any is left.
  void FinishSome();
  void ScheduleFinish();

  EventLoop* loop_;
  TaskRegistry* registry_;
  const Executor* executor_;
  std::map<TaskId, Watched> watched_;
  TimerId timer_ = 0;
  TimerId finish_timer_ = 0;
  bool failure_logged_ = false;
  RedactionCounts masked_total_;
};

}  // namespace baton

#endif  // BATON_DAEMON_OUTPUT_REDACTOR_H_
