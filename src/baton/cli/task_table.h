// The `baton ls` table (doc/cli.md, "ls"): what a person reads in a
// terminal, fitted to its width, with the statuses coloured.
#ifndef BATON_CLI_TASK_TABLE_H_
#define BATON_CLI_TASK_TABLE_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "baton/ipc/messages.h"

namespace baton {

struct TableStyle {
  size_t width = 0;    // The terminal's columns; 0 = no limit (a pipe).
  bool color = false;  // ANSI colours for the statuses.
  int64_t now_ms = 0;  // Wall clock, for the time of a running task.
};

// The style for `out`: its width from $COLUMNS, else the terminal's (0 for
// a pipe or a file); colour on a terminal unless $NO_COLOR is set and not
// empty (https://no-color.org).
TableStyle StyleFor(std::FILE* out);

// Live tasks first, then the ended ones, each group in the order given.
// Columns: ID, STATUS, STARTED, TIME (a live task's time since its start,
// an ended one's run time), LABEL / COMMAND (both when it has a label),
// MODEL (when an agent task is listed) and DETAIL (when a task has one);
// those three are cut at 80, 32 and 48 characters however wide the
// terminal. Wider than `style.width`, they are cut further, the longest
// first, with "…" (a command keeps its start and its end), then DETAIL,
// MODEL and STARTED are left out, in that order.
std::string TaskTable(const std::vector<TaskView>& tasks,
                      const TableStyle& style);

}  // namespace baton

#endif  // BATON_CLI_TASK_TABLE_H_
