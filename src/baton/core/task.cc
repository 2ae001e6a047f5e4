#include "baton/core/task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstring>

#include "baton/util/byte_size.h"
#include "baton/util/duration.h"

namespace baton {

std::string_view TaskKindName(TaskKind kind) {
  return kind == TaskKind::kShell ? "shell" : "agent";
}

Result<TaskKind> ParseTaskKind(std::string_view name) {
  if (name == "shell")
    return TaskKind::kShell;
  if (name == "agent")
    return TaskKind::kAgent;
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("unknown task kind '{}'", name));
}

std::string TaskId::ToString() const {
  // Not fmt::format: batond and the CLI call this once per id of a wait
  // over a thousand tasks.
  std::string text(TaskKindName(kind));
  text += '-';
  text += std::to_string(number);
  return text;
}

Result<TaskId> TaskId::Parse(std::string_view text) {
  auto bad = [&] {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' is not a task id; ids look like "
                                 "shell-3 or agent-1 (see 'baton ls')",
                                 text));
  };
  size_t dash = text.rfind('-');
  if (dash == std::string_view::npos)
    return bad();
  auto kind = ParseTaskKind(text.substr(0, dash));
  if (!kind)
    return bad();
  std::string_view digits = text.substr(dash + 1);
  int64_t number = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || ec != std::errc() ||
      end != digits.data() + digits.size() || number < 1 || digits[0] == '0') {
    return bad();
  }
  return TaskId{*kind, number};
}

namespace {
constexpr std::string_view kStatusNames[] = {
    "queued",    "running", "waiting", "stopping",
    "completed", "failed",  "killed",  "interrupted"};
}  // namespace

std::string_view TaskStatusName(TaskStatus status) {
  return kStatusNames[static_cast<int>(status)];
}

std::string TaskStatusNames() {
  std::string names;
  for (int i = 0; i <= static_cast<int>(TaskStatus::kInterrupted); ++i) {
    names += (i ? ", " : "");
    names += TaskStatusName(static_cast<TaskStatus>(i));
  }
  return names;
}

Result<TaskStatus> ParseTaskStatus(std::string_view name) {
  for (size_t i = 0; i < std::size(kStatusNames); ++i) {
    if (kStatusNames[i] == name)
      return static_cast<TaskStatus>(i);
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("unknown task status '{}'", name));
}

int64_t RetryDelayMs(const RetryPolicy& policy, int64_t n) {
  int64_t cap = std::max(policy.delay_ms, kMaxRetryBackoffMs);
  int64_t delay = policy.delay_ms;
  for (int64_t i = 1; i < n && delay < cap; ++i)
    delay *= 2;
  return std::min(delay, cap);
}

std::string RunName(const TaskRecord& task) {
  if (task.attempts.empty())
    return task.id.ToString();
  return fmt::format("{}.{}", task.id.ToString(), task.attempts.size() + 1);
}

Result<TaskId> TaskIdOfRun(std::string_view run) {
  size_t dot = run.find('.');
  if (dot != std::string_view::npos) {
    std::string_view attempt = run.substr(dot + 1);
    int number = 0;
    auto [end, ec] = std::from_chars(attempt.data(),
                                     attempt.data() + attempt.size(), number);
    if (ec != std::errc() || end != attempt.data() + attempt.size() ||
        number < 2) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("'{}' names no attempt of a task", run));
    }
    run = run.substr(0, dot);
  }
  return TaskId::Parse(run);
}

bool IsCostBudget(double dollars) {
  return std::isfinite(dollars) && dollars > 0 && dollars <= kMaxCostUsd;
}

bool KeepsEnvironment(const TaskRecord& task) {
  return task.held ||
         (!IsTerminal(task.status) &&
          static_cast<int64_t>(task.attempts.size()) < task.spec.retry.retries);
}

std::vector<std::string> TaskEnvironmentEntries(const TaskRecord& task) {
  std::map<std::string, std::string> entries = task.spec.env_overrides;
  entries["BATON_TASK_ID"] = task.id.ToString();
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& [name, value] : entries)
    out.push_back(name + "=" + value);
  return out;
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev == nullptr)
    return fmt::format("signal {}", signal);
  return fmt::format("SIG{}", abbrev);
}

std::optional<int> SignalFromName(std::string_view name) {
  for (int signal = 1; signal < 65; ++signal) {
    if (SignalName(signal) == name)
      return signal;
  }
  int number = 0;
  if (name.starts_with("signal ")) {
    std::string_view digits = name.substr(7);
    auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (ec == std::errc() && end == digits.data() + digits.size())
      return number;
  }
  return std::nullopt;
}

namespace {

// Quotes an argument for a POSIX shell only when it needs it.
std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() &&
      arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                            "VWXYZ0123456789-_./=:,+@%") == std::string::npos) {
    return arg;
  }
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

std::string CommandText(const TaskSpec& spec) {
  if (spec.shell_command)
    return *spec.shell_command;
  std::string text;
  for (const auto& arg : spec.argv) {
    if (!text.empty())
      text += ' ';
    text += ShellQuote(arg);
  }
  return text;
}

bool LooksSecret(std::string_view name) {
  std::string upper(name);
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // PASS: DB_PASS, PASSPHRASE, SMTP_PASSWD as well as PASSWORD. AUTH:
  // BASIC_AUTH, AUTH_HEADER, but not GIT_AUTHOR_NAME.
  for (std::string_view word :
       {"KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "PRIVATE", "AUTH"}) {
    for (size_t at = upper.find(word); at != std::string::npos;
         at = upper.find(word, at + 1)) {
      if (word != "AUTH" || upper.compare(at, 6, "AUTHOR") != 0)
        return true;
    }
  }
  return false;
}

std::string BudgetReached(const AgentBudget& budget, const AgentUsage& usage,
                          std::string_view whose) {
  std::string of = whose.empty() ? "" : fmt::format("{}'s ", whose);
  // N turns may finish: the one past them is stopped.
  if (budget.max_turns && usage.turns > *budget.max_turns)
    return fmt::format("budget: {}max-turns {} reached", of, *budget.max_turns);
  if (budget.max_tokens && usage.tokens() >= *budget.max_tokens) {
    return fmt::format("budget: {}max-tokens {} reached", of,
                       *budget.max_tokens);
  }
  if (budget.max_cost_usd && usage.cost_usd &&
      *usage.cost_usd >= *budget.max_cost_usd) {
    return fmt::format("budget: {}max-cost ${} reached", of,
                       *budget.max_cost_usd);
  }
  return "";
}

AgentBudget BudgetOf(const AgentSpec& spec) {
  return {.max_turns = spec.max_turns,
          .max_tokens = spec.max_tokens,
          .max_cost_usd = spec.max_cost_usd};
}

std::string BudgetReached(const AgentSpec& spec, const AgentUsage& usage) {
  return BudgetReached(BudgetOf(spec), usage);
}

AgentUsage AddUsage(const AgentUsage& total, const AgentUsage& usage) {
  // Clamped first: a stored count is only known to be at least 0.
  auto add = [](int64_t a, int64_t b) {
    return std::min(kMaxUsageCount,
                    std::clamp<int64_t>(a, 0, kMaxUsageCount) +
                        std::clamp<int64_t>(b, 0, kMaxUsageCount));
  };
  AgentUsage sum;
  sum.input_tokens = add(total.input_tokens, usage.input_tokens);
  sum.output_tokens = add(total.output_tokens, usage.output_tokens);
  sum.turns = add(total.turns, usage.turns);
  if (total.cost_usd || usage.cost_usd)
    sum.cost_usd = total.cost_usd.value_or(0) + usage.cost_usd.value_or(0);
  return sum;
}

AgentUsage SubtractUsage(const AgentUsage& total, const AgentUsage& usage) {
  auto less = [](int64_t a, int64_t b) { return a > b ? a - b : 0; };
  AgentUsage rest;
  rest.input_tokens = less(total.input_tokens, usage.input_tokens);
  rest.output_tokens = less(total.output_tokens, usage.output_tokens);
  rest.turns = less(total.turns, usage.turns);
  if (total.cost_usd) {
    rest.cost_usd = std::max(0.0, *total.cost_usd - usage.cost_usd.value_or(0));
  }
  return rest;
}

std::string LimitsText(const ResourceLimits& limits) {
  std::vector<std::string> parts;
  if (limits.memory_bytes > 0)
    parts.push_back("memory " + FormatByteSize(limits.memory_bytes));
  if (limits.cpu_millis > 0) {
    int64_t whole = limits.cpu_millis / 1000;
    std::string cpus = fmt::format("{}", whole);
    if (int64_t rest = limits.cpu_millis % 1000; rest != 0) {
      std::string decimals = fmt::format("{:03}", rest);
      decimals.erase(decimals.find_last_not_of('0') + 1);
      cpus += "." + decimals;
    }
    parts.push_back(
        fmt::format("{} CPU{}", cpus, limits.cpu_millis == 1000 ? "" : "s"));
  }
  if (limits.pids > 0) {
    parts.push_back(
        fmt::format("{} process{}", limits.pids, limits.pids == 1 ? "" : "es"));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string RedactionsText(const std::vector<RedactionCount>& masked) {
  int64_t total = 0;
  std::vector<std::string> parts;
  for (const RedactionCount& count : masked) {
    total += count.count;
    parts.push_back(fmt::format("{} {}", count.count, count.kind));
  }
  if (total == 0)
    return "";
  return fmt::format("{} secret{} masked ({})", total, total == 1 ? "" : "s",
                     fmt::join(parts, ", "));
}

std::string_view DetailBesideStatus(const TaskRecord& task) {
  std::string_view detail = task.detail;
  std::string_view status = TaskStatusName(task.status);
  if (detail.size() > status.size() + 2 && detail.starts_with(status) &&
      detail.substr(status.size(), 2) == ": ") {
    detail.remove_prefix(status.size() + 2);
  }
  return detail;
}

std::string PlacementText(const Placement& job) {
  if (job.job_id.empty())
    return "submitting to " + job.executor;
  std::string state = job.state.empty() ? "submitted" : job.state;
  std::transform(state.begin(), state.end(), state.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (job.unreachable) {
    return fmt::format("{} unreachable (job {} was {})", job.executor,
                       job.job_id, state);
  }
  std::string text =
      fmt::format("{} job {} {}", job.executor, job.job_id, state);
  if (!job.node.empty())
    text += " on " + job.node;
  if (!job.reason.empty() && job.reason != "None")
    text += " (" + job.reason + ")";
  return text;
}

void ApplyExit(const ExitInfo& exit, TaskRecord& task) {
  task.exit_code = exit.exit_code;
  task.signal = exit.signal;
  task.ended_ms = exit.ended_ms;
  // It ran, but batond never heard of the start (it died first).
  if (task.pid == 0 && exit.pid > 0)
    task.pid = exit.pid;
  if (task.started_ms == 0 && exit.started_ms > 0)
    task.started_ms = exit.started_ms;
  if (exit.evidence)
    task.evidence = exit.evidence;
  task.output_dropped = exit.output_dropped;
  switch (exit.cause) {
    case ExitCause::kLost:
      task.status = TaskStatus::kInterrupted;
      task.detail =
          "interrupted: the runtime lost the task; its exit status "
          "is unknown";
      break;
    case ExitCause::kTimedOut:
      task.status = TaskStatus::kKilled;
      task.detail = task.spec.timeout
                        ? fmt::format("timed out after {}",
                                      FormatDuration(*task.spec.timeout))
                        : "timed out";
      break;
    case ExitCause::kKilled:
      task.status = TaskStatus::kKilled;
      if (task.killed_at_limit) {
        task.detail = task.kill_reason;
        break;
      }
      task.detail = fmt::format("killed: {}", task.kill_reason.empty()
                                                  ? "by request"
                                                  : task.kill_reason);
      break;
    case ExitCause::kNatural:
      if (exit.out_of_memory) {
        task.status = TaskStatus::kFailed;
        task.detail =
            task.spec.limits.memory_bytes > 0
                ? fmt::format("out of memory: the limit of {} was reached",
                              FormatByteSize(task.spec.limits.memory_bytes))
                : "out of memory";
      } else if (exit.verdict) {
        task.status = *exit.verdict;
        task.detail = exit.verdict_detail;
      } else if (exit.exit_code) {
        task.status =
            *exit.exit_code == 0 ? TaskStatus::kCompleted : TaskStatus::kFailed;
        task.detail = fmt::format("exit code: {}", *exit.exit_code);
      } else if (exit.signal) {
        task.status = TaskStatus::kFailed;
        task.detail = fmt::format("signal: {}", SignalName(*exit.signal));
      } else {
        task.status = TaskStatus::kFailed;
        task.detail = "ended without an exit status";
      }
      break;
  }
  // A process that succeeded did not do its job when a check failed
  // (doc/tasks.md, "Statuses"): its own exit code stays on the record.
  if (task.status == TaskStatus::kCompleted && task.evidence) {
    const std::vector<CheckResult>& checks = task.evidence->checks;
    auto failed =
        std::find_if(checks.begin(), checks.end(),
                     [](const CheckResult& c) { return c.exit_code != 0; });
    if (failed != checks.end()) {
      task.status = TaskStatus::kFailed;
      task.detail = fmt::format("check failed: {} (exit code {})",
                                failed->command, failed->exit_code);
      size_t more =
          std::count_if(failed + 1, checks.end(),
                        [](const CheckResult& c) { return c.exit_code != 0; });
      if (more > 0)
        task.detail += fmt::format(" and {} more", more);
    }
  }
  if (exit.leftovers_stopped > 0) {
    task.detail +=
        fmt::format("; stopped {} leftover process{}", exit.leftovers_stopped,
                    exit.leftovers_stopped == 1 ? "" : "es");
  }
  if (exit.output_disk_full) {
    task.detail += "; output incomplete: disk full (no space left on device)";
  }
}

}  // namespace baton
