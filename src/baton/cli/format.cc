#include "baton/cli/format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ctime>

#include "baton/ipc/slurm_request.h"
#include "baton/ipc/task_text.h"
#include "baton/util/clock.h"
#include "baton/util/terminal_text.h"

namespace baton {
namespace {

// A time for a person reading `status`: the full local date and time with
// its zone ("2026-12-06 14:02:11 CET"), as `ls` shows local clock times;
// --json keeps ISO UTC for programs.
std::string Time(int64_t wall_ms) {
  return wall_ms ? LocalDateTime(wall_ms, /*zone=*/true) : "";
}

// Days since the epoch in local time, to tell today's times from older ones.
int64_t LocalDay(int64_t wall_ms) {
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  struct tm local {};
  localtime_r(&seconds, &local);
  return static_cast<int64_t>(local.tm_year) * 366 + local.tm_yday;
}

// A start time for a table: 14:02:11 today, Nov 30 14:02 before.
std::string LocalClock(int64_t wall_ms, int64_t today) {
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  struct tm local {};
  localtime_r(&seconds, &local);
  char text[32];
  const char* format = LocalDay(wall_ms) == today ? "%H:%M:%S" : "%b %d %H:%M";
  size_t n = std::strftime(text, sizeof text, format, &local);
  return std::string(text, n);
}

}  // namespace

std::string ShortSpan(int64_t ms) {
  if (ms < 0)
    ms = 0;
  if (ms < 10'000)
    return fmt::format("{:.1f}s", ms / 1000.0);
  int64_t s = ms / 1000;
  if (s < 60)
    return fmt::format("{}s", s);
  if (s < 3600)
    return fmt::format("{}m{}s", s / 60, s % 60);
  if (s < 86400)
    return fmt::format("{}h{}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d{}h", s / 86400, s % 86400 / 3600);
}

std::string TaskSummaryLine(const TaskView& view) {
  const TaskRecord& task = view.task;
  std::string line =
      fmt::format("{} {}", task.id.ToString(), TaskStatusName(task.status));
  if (!task.detail.empty())
    line += fmt::format(" ({})", TerminalSafe(DetailBesideStatus(task)));
  if (!task.spec.label.empty())
    line += fmt::format(" — {}", TerminalSafe(task.spec.label));
  return line;
}

std::string LocalDateTime(int64_t wall_ms, bool zone) {
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  struct tm local {};
  localtime_r(&seconds, &local);
  char text[64];
  size_t n = std::strftime(text, sizeof text,
                           zone ? "%Y-%m-%d %H:%M:%S %Z" : "%Y-%m-%d %H:%M:%S",
                           &local);
  return std::string(text, n);
}

std::string TableTime(int64_t wall_ms, int64_t now_ms) {
  return LocalClock(wall_ms, LocalDay(now_ms));
}

std::string TaskDetails(const TaskView& view) {
  const TaskRecord& task = view.task;
  std::string out = TaskSummaryLine(view) + "\n";
  // Every field is one line, whatever it holds.
  auto field = [&](const char* name, const std::string& value) {
    if (!value.empty())
      out += fmt::format("  {:<9} {}\n", name, TerminalSafe(value));
  };
  if (const auto& agent = task.spec.agent) {
    // An agent's brief is what it was told; its CLI's command line comes
    // after, as what baton ran.
    field("agent:", agent->profile + ", model " + ModelText(*agent) +
                        (agent->AsksPerson() ? ", asks the person" : ""));
    if (!agent->resume_from.empty())
      field("resumes:", agent->resume_from);
    std::string_view brief = agent->brief;
    for (bool first = true; !brief.empty(); first = false) {
      size_t end = brief.find('\n');
      field(first ? "brief:" : "", std::string(brief.substr(0, end)));
      brief = end == std::string_view::npos ? "" : brief.substr(end + 1);
    }
    field("runs:", CommandText(task.spec));
  } else {
    field("command:", CommandText(task.spec));
  }
  field("label:", task.spec.label);
  field("rerun of:", task.spec.rerun_of);
  field("cwd:", task.spec.cwd);
  if (task.spec.agent && task.spec.agent->worktree) {
    const Worktree& worktree = *task.spec.agent->worktree;
    field("worktree:", fmt::format("branch {} from {} of {}", worktree.branch,
                                   worktree.base.substr(0, 12), worktree.repo));
  }
  field("owner:", task.spec.owner);
  field("pid:", task.pid ? std::to_string(task.pid) : "");
  if (task.spec.remote) {
    std::string on = task.spec.remote->executor + ":";
    field(on.c_str(), RemoteText(task));
  }
  field("created:", Time(task.created_ms));
  field("started:", Time(task.started_ms));
  std::string ended = Time(task.ended_ms);
  if (!ended.empty() && task.started_ms)
    ended +=
        fmt::format(" (ran {})", ShortSpan(task.ended_ms - task.started_ms));
  field("ended:", ended);
  if (task.spec.timeout)
    field("timeout:", ShortSpan(task.spec.timeout->count()));
  if (task.spec.limits.any()) {
    field("limits:", LimitsText(task.spec.limits));
    field("", view.limits_held_by.empty()
                  ? std::string("held by: not known yet (not started)")
                  : "held by " + view.limits_held_by);
  }
  if (task.spec.sandbox)
    field("sandbox:", SandboxText(*task.spec.sandbox));
  if (view.output_bytes) {
    field("output:",
          fmt::format("{} bytes in {}", *view.output_bytes, task.output_path));
  }
  if (!task.spec.redact)
    field("redacted:", "off (run --no-redact): kept as printed");
  else
    field("redacted:", RedactionsText(view.redactions));
  if (task.spec.agent) {
    field("budget:", BudgetText(BudgetOf(*task.spec.agent)));
    if (task.usage)
      field("usage:", UsageText(*task.usage));
  }
  if (task.spec.retry.retries > 0) {
    field("retries:",
          fmt::format("up to {}, the first after {}", task.spec.retry.retries,
                      ShortSpan(task.spec.retry.delay_ms)));
  }
  for (size_t i = 0; i < task.attempts.size(); ++i)
    field(i == 0 ? "attempts:" : "", AttemptText(task.attempts[i], i + 1));
  if (task.output_dropped > 0) {
    field("dropped:",
          fmt::format("{} bytes past the cap of {} bytes (max_output)",
                      task.output_dropped, task.spec.max_output));
  }
  out += EndText(view);
  out += QuestionsText(view);
  return out;
}

std::string RemoteText(const TaskRecord& task) {
  // The options are in the executor's own terms: a Slurm request is read
  // as one, another executor's shows its job only.
  SlurmRequest asked;
  if (auto slurm = SlurmRequestOf(task.spec); slurm && *slurm)
    asked = std::move(**slurm);
  const std::optional<Placement>& job = task.placement;
  std::vector<std::string> parts;
  if (job && !job->job_id.empty())
    parts.push_back("job " + job->job_id);
  std::string partition =
      job && !job->partition.empty() ? job->partition : asked.partition;
  if (!partition.empty())
    parts.push_back("partition " + partition);
  if (job && !job->node.empty())
    parts.push_back("node " + job->node);
  if (asked.time_limit_s > 0)
    parts.push_back("time " + ShortSpan(asked.time_limit_s * 1000));
  if (asked.cpus > 0)
    parts.push_back(fmt::format("{} cpus", asked.cpus));
  if (!asked.mem.empty())
    parts.push_back("mem " + asked.mem);
  if (!asked.gres.empty())
    parts.push_back("gres " + asked.gres);
  if (parts.empty())
    return "submitting";
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string EndText(const TaskView& view) {
  if (!view.task.evidence)
    return "";
  return EvidenceText(*view.task.evidence, "  ", 10);
}

std::string TreeQuestionsText(const QuestionsReply& reply) {
  if (reply.questions.empty())
    return "no open questions\n";
  std::string out;
  int64_t today = LocalDay(WallMillis());
  for (const TreeQuestion& asked : reply.questions) {
    std::string when;
    if (auto ms = ParseIsoTime(asked.question.at))
      when = ", asked " + LocalClock(*ms, today);
    out += fmt::format(
        "{}{} ({}{}): {}\n", asked.task,
        asked.label.empty() ? "" : " (" + TerminalSafe(asked.label) + ")",
        asked.agent, when, fmt::join(asked.chain, " > "));
    out += OpenQuestionsText(asked.task, {asked.question});
  }
  return out;
}

std::string QuestionsText(const TaskView& view) {
  return OpenQuestionsText(view.task.id.ToString(), view.questions);
}

std::string OpenQuestionsText(std::string_view id,
                              const std::vector<OpenQuestion>& questions) {
  std::string out;
  for (const OpenQuestion& question : questions) {
    out += fmt::format("  question {}:\n", question.seq);
    for (const QuestionItem& item : question.items) {
      out += fmt::format("    {}{}\n", TerminalSafe(item.prompt),
                         item.multi_select ? " (several: 1,3)" : "");
      for (size_t i = 0; i < item.options.size(); ++i) {
        const QuestionOption& option = item.options[i];
        out +=
            fmt::format("      [{}] {}{}\n", i + 1, TerminalSafe(option.label),
                        option.description.empty()
                            ? ""
                            : " — " + TerminalSafe(option.description));
      }
    }
  }
  if (!out.empty()) {
    out += fmt::format(
        "  answer: baton answer {} <number|label|text|skip> (one per item)\n",
        id);
  }
  return out;
}

}  // namespace baton
