// Waiting for tasks and reporting their ends: `baton wait`, and `run
// --wait` / `delegate --wait` after the start.
#ifndef BATON_CLI_WAIT_REPORT_H_
#define BATON_CLI_WAIT_REPORT_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "baton/cli/context.h"

namespace baton {

struct WaitOptions {
  std::vector<std::string> ids;
  bool all = false;  // Every one must end (else any).
  std::optional<std::chrono::milliseconds> timeout;
  // Exit with the (single) task's own exit code, as `run --wait` does.
  bool exit_like_task = false;
  // Also return when a named agent task ends a turn (`wait --turn`).
  bool turns = false;
};

// Waits; prints each ended task; exits 0 if all reported tasks completed,
// 1 if one did not, 124 on timeout (or the task's code, exit_like_task).
int WaitAndReport(const Context& ctx, DaemonClient& client,
                  const WaitOptions& options);

// The end of a task whose output was shown as it came (`run --wait` on a
// terminal): its summary and end, no tail; returns its own exit code.
int ReportEnd(const Context& ctx, DaemonClient& client, const std::string& id);

}  // namespace baton

#endif  // BATON_CLI_WAIT_REPORT_H_
