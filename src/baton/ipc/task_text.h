// How a task's end and its open questions read as text, for people and
// models alike: the evidence of its checks (each check's command, exit code
// and last lines; the changed files; the overlapping tasks) and a waiting
// agent's questions with numbered options. One renderer for the CLI
// (`wait`, `status`, `run --wait`), `baton mcp` and batond's notices. Pure.
#ifndef BATON_IPC_TASK_TEXT_H_
#define BATON_IPC_TASK_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/messages.h"

namespace baton {

// The first changed paths a text or a structured result shows.
inline constexpr size_t kShownChangedFiles = 10;
// The commits of a worktree task's branch its evidence text shows.
inline constexpr size_t kShownCommits = 10;

// The evidence, one fact a line, each line starting with `indent`:
//   check `make test`: exit code 2
//     <its last lines, at most `tail_lines`, indented once more>
//   changed files: 3 (a.txt, b.txt, gone.txt)
//   branch baton/agent-2: 2 commits on 1a2b3c4d5e6f
//     <its commits, then its diff --stat>
//   diff: /home/u/.local/state/baton/tasks/agent-2/diff.patch
//   overlapping tasks: shell-2
// A check that passed shows at most 3 of its last lines. Ends with a
// newline.
std::string EvidenceText(const Evidence& evidence, std::string_view indent,
                         size_t tail_lines);

// A conflict radar's overlap (doc/conflicts.md) in one line: "agent-3 and
// agent-5 both changed src/a.cc, src/b.cc (in /repo): a textual conflict
// in src/a.cc (their changes would not merge)", or "...: the same file, no
// textual conflict (git merges them)". At most kOverlapFilesShown files by
// name, then "and N more files".
std::string OverlapText(const OverlapInfo& overlap);
inline constexpr size_t kOverlapFilesShown = 8;

// Open questions, each item's prompt then its options numbered from 1
// ("[1] yes — do it"), each line starting with `indent`; "" when none.
std::string QuestionItemsText(const std::vector<OpenQuestion>& questions,
                              std::string_view indent);

// An agent's model as people read it: "anthropic/claude-opus-4", or "its
// default" when the agent picks (for `status`, `task_status`, `task_list`).
std::string ModelText(const AgentSpec& agent);
// An agent task's usage (doc/agents.md, "Budgets"):
//   "3 turns, 12345 tokens (10000 in, 2345 out), $0.0123"
// the cost only where the CLI reports one.
std::string UsageText(const AgentUsage& usage);
// A budget, "max-turns 10, max-tokens 200000, max-cost $2"; "" for none.
std::string BudgetText(const AgentBudget& budget);
// A session's budget and what its agent tasks spent (doc/agents.md,
// "Session budgets"), for `baton budget` and MCP `session_budget`:
//   session build: budget max-tokens 200000
//   spent: 3 agent tasks, 12 turns, 201234 tokens (180000 in, 21234 out)
//   reached: budget: session build's max-tokens 200000 reached
// (the last line once reached; "no budget" without one). Ends with a
// newline.
std::string SessionBudgetText(const BudgetReply& reply);
// A retried task's earlier attempt `number` (from 1), doc/scheduling.md:
//   "attempt 1: exit code: 1, ran 2.5s, output bytes 0-120"
std::string AttemptText(const Attempt& attempt, size_t number);

// The last `max_lines` lines of `text` (a trailing newline does not count
// as an empty last line), without the trailing newline.
std::string LastLinesOf(std::string_view text, size_t max_lines);
// Each line of `text` after `prefix`, each ending with a newline.
std::string IndentLines(std::string_view text, std::string_view prefix);

}  // namespace baton

#endif  // BATON_IPC_TASK_TEXT_H_
