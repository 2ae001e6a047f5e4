// The cap on a shell task's output (doc/tasks.md, "Output cap"): past its
// `max_output` bytes, what the task prints is dropped while it runs on, and
// its log ends with a marker that says exactly how many bytes were dropped.
//
// The task writes its log itself (its stdout and stderr are the file,
// O_APPEND): output goes at the disk's speed, and survives batond and the
// supervisor. So the cap is kept from outside, by batond: every kTick the
// bytes past the cap are punched out of the file (fallocate PUNCH_HOLE:
// the file's size still counts every byte written, the disk keeps none of
// them); readers get the file up to the cap (the executor's OutputSize);
// and when the task ends, before its end is reported, the file is cut at
// the cap and the marker written. A listener between the agent runtime and
// the check runner. Single-threaded.
#ifndef BATON_DAEMON_OUTPUT_CAP_H_
#define BATON_DAEMON_OUTPUT_CAP_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "baton/core/ports.h"
#include "baton/core/task_registry.h"
#include "baton/loop/event_loop.h"

namespace baton {

// The line that ends a capped log: "[baton: output capped at 1024 bytes
// (max_output); 4000 more bytes were dropped]\n".
std::string CapMarker(uint64_t cap, uint64_t dropped);

// Punches the bytes of `path` from `cap` (rounded up to a block) to its end
// out of the file, past `punched_to` (what an earlier call punched).
// Returns the new `punched_to`; an error when the file system cannot
// (then the disk is not bounded: batond logs it once).
Result<uint64_t> PunchPastCap(const std::string& path, uint64_t cap,
                              uint64_t punched_to);

// At the task's end: the number of bytes dropped past `cap`, with the file
// cut at the cap and the marker written after it; 0 when the output stayed
// within the cap (the file is left alone). Idempotent: for a file it
// already finished (a batond restarted while reporting the end), the count
// its marker says.
Result<uint64_t> FinishCappedOutput(const std::string& path, uint64_t cap);

class OutputCap : public ForwardingListener {
 public:
  static constexpr std::chrono::milliseconds kTick{250};

  OutputCap(EventLoop* loop, TaskRegistry* registry, ExecutorListener* next);
  ~OutputCap() override;

  // The live tasks with a cap, when batond starts.
  void Recover(const std::vector<TaskRecord>& live);

  void OnTaskSpawned(const TaskId& id, int64_t pid,
                     int64_t started_ms) override;
  void OnTaskSpawnFailed(const TaskId& id, const Error& error) override;
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override;

 private:
  struct Watched {
    std::string path;
    uint64_t cap = 0;
    uint64_t punched_to = 0;
  };
  void Watch(const TaskRecord& task);
  // Tick runs kTick from now (while any task is watched).
  void ScheduleTick();
  void Tick();

  EventLoop* loop_;
  TaskRegistry* registry_;
  std::map<TaskId, Watched> watched_;
  TimerId timer_ = 0;
  bool punch_failed_logged_ = false;
};

}  // namespace baton

#endif  // BATON_DAEMON_OUTPUT_CAP_H_
