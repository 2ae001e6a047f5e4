// How the CLI shows tasks to people (text); JSON goes out as the daemon sent
// it.
#ifndef BATON_CLI_FORMAT_H_
#define BATON_CLI_FORMAT_H_

#include <string>

#include "baton/ipc/protocol.h"

namespace baton {

// "shell-3 completed (exit code: 0)".
std::string TaskSummaryLine(const Json& task);
// The `ls` table, header included.
std::string TaskTable(const Json& tasks);
// The `status` block: one "key: value" line per field.
std::string TaskDetails(const Json& task);
// "3.2s", "4m10s", "2h5m" for a span in milliseconds.
std::string ShortSpan(int64_t ms);

}  // namespace baton

#endif  // BATON_CLI_FORMAT_H_
