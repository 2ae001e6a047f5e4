// How the CLI shows tasks to people (text). JSON goes out as the protocol's
// documents (ipc/codec.h).
#ifndef BATON_CLI_FORMAT_H_
#define BATON_CLI_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/messages.h"

namespace baton {

// "shell-3 completed (exit code: 0)".
std::string TaskSummaryLine(const TaskView& task);
// A time for a table, in local time: 14:02:11 on the day of `now_ms`,
// Nov 30 14:02 before.
std::string TableTime(int64_t wall_ms, int64_t now_ms);
// "2026-12-06 07:03:48", in local time; with `zone`, its name after.
std::string LocalDateTime(int64_t wall_ms, bool zone);
// The `status` block: one "key: value" line per field.
std::string TaskDetails(const TaskView& task);
// What a task's end adds to its summary line: its checks' evidence (each
// check's command, exit code and last lines, the changed files, the
// overlapping tasks), indented; "" when it had no checks.
std::string EndText(const TaskView& task);
// A task on another executor, for `status`: "job 12, partition debug,
// node n1, time 10m, 2 cpus".
std::string RemoteText(const TaskRecord& task);
// A waiting agent's open questions, each item's prompt with its numbered
// options, and how to answer; "" when it has none.
std::string QuestionsText(const TaskView& task);
// The same for the questions `questions` of the task `id`.
std::string OpenQuestionsText(std::string_view id,
                              const std::vector<OpenQuestion>& questions);
// `baton questions`: every open question of the session's tree of agents,
// oldest first, each with the chain of tasks that asked it and how to
// answer; "no open questions" when none.
std::string TreeQuestionsText(const QuestionsReply& reply);
// "3.2s", "4m10s", "2h5m" for a span in milliseconds.
std::string ShortSpan(int64_t ms);

}  // namespace baton

#endif  // BATON_CLI_FORMAT_H_
