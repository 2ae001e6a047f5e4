#include "baton/cli/verbs.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace baton {

CLI::Validator WholeNumber(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        int64_t value = 0;
        auto [end, ec] =
            std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() ||
            value < min || value > max) {
          return fmt::format("'{}' is not a whole number from {} to {}", text,
                             min, max);
        }
        // CLI11 converts the text itself after this check (a check may not
        // rewrite it), with strtoll's base 0: "010" would be octal 8.
        std::string_view digits(text);
        if (digits.starts_with('-'))
          digits.remove_prefix(1);
        if (digits.size() > 1 && digits.front() == '0') {
          return fmt::format("'{}' has a leading zero; write {}", text, value);
        }
        return "";
      },
      fmt::format("INT in [{} - {}]", min, max), "WholeNumber");
}

namespace {

// `text` as a finite decimal number, whole text or nothing. NaN compares
// false with everything: without isfinite it passed any range.
std::optional<double> FiniteNumber(const std::string& text) {
  double value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace

CLI::Validator DecimalNumber(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        auto value = FiniteNumber(text);
        if (!value || *value < min || *value > max) {
          return fmt::format("'{}' is not a number from {} to {}", text, min,
                             max);
        }
        return "";
      },
      fmt::format("NUMBER in [{} - {}]", min, max), "DecimalNumber");
}

CLI::Validator PositiveAmount(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        auto value = FiniteNumber(text);
        if (!value || *value <= 0 || *value > max) {
          return fmt::format(
              "'{}' is not a number above 0 and at most {}, "
              "e.g. 2.50",
              text, max);
        }
        return "";
      },
      "NUMBER > 0", "PositiveAmount");
}

// The groups `baton --help` shows the verbs in, in this order.
constexpr std::string_view kGroupTasks = "Tasks";
constexpr std::string_view kGroupAgents = "Agents";
constexpr std::string_view kGroupSessionsQueuesAndBudgets =
    "Sessions, queues and budgets";
constexpr std::string_view kGroupSetUpAndAdmin = "Set-up and admin";

const std::vector<Verb>& Verbs() {
  static const std::vector<Verb> verbs = {
      {"run", "Start a command in the background", kGroupTasks, DefineRun},
      {"ls", "List your tasks", kGroupTasks, DefineList},
      {"status", "Show one task", kGroupTasks, DefineStatus},
      {"output", "Print a task's output", kGroupTasks, DefineOutput},
      {"wait", "Wait until any of the tasks ends (all, with --all)",
       kGroupTasks, DefineWait},
      {"kill", "Stop tasks (SIGTERM, then SIGKILL)", kGroupTasks, DefineKill},
      {"rerun", "Start an ended task again, as a new task", kGroupTasks,
       DefineRerun},
      {"edit", "Change a queued task before it starts", kGroupTasks,
       DefineEdit},
      {"rm", "Remove ended tasks, with their output", kGroupTasks,
       DefineRemove},
      {"clear", "Remove every ended task you see, with its output", kGroupTasks,
       DefineClear},
      {"delegate", "Hand a brief to an agent CLI running in the background",
       kGroupAgents, DefineDelegate},
      {"send", "Send a running agent a message", kGroupAgents, DefineSend},
      {"answer", "Answer an agent's open question, one answer per item",
       kGroupAgents, DefineAnswer},
      {"questions",
       "List every open question of your agents and the workers they "
       "started, oldest first",
       kGroupAgents, DefineQuestions},
      {"events", "Show an agent's events", kGroupAgents, DefineEvents},
      {"agents", "List the agent profiles (built-in and from the config)",
       kGroupAgents, DefineAgents},
      {"attach", "Hold the session attached (its lease starts when this ends)",
       kGroupSessionsQueuesAndBudgets, DefineAttach},
      {"notices", "Print tasks of this session that ended unseen",
       kGroupSessionsQueuesAndBudgets, DefineNotices},
      {"queue", "Make and change queues that run tasks a few at a time",
       kGroupSessionsQueuesAndBudgets, DefineQueue},
      {"budget", "Show or set the session's budget over all its agent tasks",
       kGroupSessionsQueuesAndBudgets, DefineBudget},
      {"audit",
       "Show the audit trail: who started, stopped, steered or answered "
       "what, when and why",
       kGroupSessionsQueuesAndBudgets, DefineAudit},
      {"worktree",
       "List and clean the git worktrees of agent tasks (delegate "
       "--worktree)",
       kGroupAgents, DefineWorktree},
      {"conflicts",
       "List overlaps between live workers' worktrees: the same files, or "
       "changes that would conflict",
       kGroupAgents, DefineConflicts},
      {"land",
       "Queue finished worktree workers' branches to land, checked, on "
       "their target branch",
       kGroupAgents, DefineLand},
      {"lands", "List the merge queue: each entry's state, reason and commit",
       kGroupAgents, DefineLands},
      {"daemon", "Manage batond", kGroupSetUpAndAdmin, DefineDaemon},
      {"mcp",
       "Serve MCP on stdio for a coding agent; install CLIENT registers it "
       "in claude, codex, gemini, cursor or vscode",
       kGroupSetUpAndAdmin, DefineMcp},
      {"serve",
       "Serve MCP over HTTP at http://127.0.0.1:7420/mcp (baton serve "
       "--help)",
       kGroupSetUpAndAdmin, DefineServe},
      {"board",
       "Open the live board in your browser (prints a one-time login URL; "
       "starts baton serve when none runs)",
       kGroupSetUpAndAdmin, DefineBoard},
      {"doctor", "Check the set-up: batond, state, agent CLIs, MCP clients",
       kGroupSetUpAndAdmin, DefineDoctor},
      {"completion", "Print the completion script of bash, zsh or fish",
       kGroupSetUpAndAdmin, DefineCompletion},
  };
  return verbs;
}

}  // namespace baton
