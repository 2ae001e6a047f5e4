#include "baton/ipc/task_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "baton/util/duration.h"
#include "baton/util/terminal_text.h"

namespace baton {
namespace {

// The last lines shown of a check that passed (a failed one shows what the
// caller asks for).
constexpr size_t kPassedCheckLines = 3;

}  // namespace

std::string IndentLines(std::string_view text, std::string_view prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      nl = text.size();
    out += fmt::format("{}{}\n", prefix,
                       TerminalSafe(text.substr(start, nl - start)));
    start = nl + 1;
  }
  return out;
}

std::string AttemptText(const Attempt& attempt, size_t number) {
  return fmt::format(
      "attempt {}: {}, ran {}, output bytes {}-{}", number, attempt.detail,
      FormatDuration(
          std::chrono::milliseconds(attempt.ended_ms - attempt.started_ms)),
      attempt.output_from, attempt.output_to);
}

std::string UsageText(const AgentUsage& usage) {
  std::string text =
      fmt::format("{} turn{}, {} tokens ({} in, {} out)", usage.turns,
                  usage.turns == 1 ? "" : "s", usage.tokens(),
                  usage.input_tokens, usage.output_tokens);
  if (usage.cost_usd)
    text += fmt::format(", ${:.4f}", *usage.cost_usd);
  return text;
}

std::string BudgetText(const AgentBudget& budget) {
  std::string text;
  auto add = [&](const std::string& limit) {
    text += (text.empty() ? "" : ", ") + limit;
  };
  if (budget.max_turns)
    add(fmt::format("max-turns {}", *budget.max_turns));
  if (budget.max_tokens)
    add(fmt::format("max-tokens {}", *budget.max_tokens));
  if (budget.max_cost_usd)
    add(fmt::format("max-cost ${}", *budget.max_cost_usd));
  return text;
}

std::string SessionBudgetText(const BudgetReply& reply) {
  std::string budget = BudgetText(reply.budget);
  std::string text = fmt::format(
      "session {}: {}\nspent: {} agent task{}, {}\n", reply.session,
      budget.empty() ? "no budget" : "budget " + budget, reply.agent_tasks,
      reply.agent_tasks == 1 ? "" : "s", UsageText(reply.usage));
  if (!reply.reached.empty())
    text += "reached: " + reply.reached + "\n";
  return text;
}

std::string LastLinesOf(std::string_view text, size_t max_lines) {
  while (!text.empty() && text.back() == '\n')
    text.remove_suffix(1);
  if (max_lines == 0)
    return "";
  size_t start = text.size();
  size_t lines = 0;
  while (start > 0) {
    size_t nl = text.rfind('\n', start - 1);
    if (nl == std::string_view::npos) {
      start = 0;
      break;
    }
    if (++lines == max_lines) {
      start = nl + 1;
      break;
    }
    start = nl;
  }
  return std::string(text.substr(start));
}

std::string ModelText(const AgentSpec& agent) {
  return agent.model.empty() ? "its default" : agent.model;
}

std::string EvidenceText(const Evidence& evidence, std::string_view indent,
                         size_t tail_lines) {
  std::string out;
  for (const CheckResult& check : evidence.checks) {
    out += fmt::format("{}check `{}`: exit code {}\n", indent,
                       TerminalSafe(check.command), check.exit_code);
    // A failed check's last lines say why; a passed one's (a few) what it
    // checked ("25 tests passed").
    size_t lines = check.exit_code == 0
                       ? std::min(tail_lines, kPassedCheckLines)
                       : tail_lines;
    if (lines == 0)
      continue;
    out += IndentLines(LastLinesOf(check.tail, lines),
                       fmt::format("{}  | ", indent));
  }
  const auto& files = evidence.changed_files;
  std::string paths;
  for (size_t i = 0; i < files.size() && i < kShownChangedFiles; ++i)
    paths += (i ? ", " : "") + TerminalSafe(files[i]);
  if (files.size() > kShownChangedFiles)
    paths += ", ...";
  out += fmt::format("{}changed files: {}{}\n", indent, files.size(),
                     files.empty() ? "" : " (" + paths + ")");
  if (evidence.branch) {
    const BranchEvidence& branch = *evidence.branch;
    out += fmt::format("{}branch {}: {} commit{} on {}{}\n", indent,
                       branch.branch, branch.commits.size(),
                       branch.commits.size() == 1 ? "" : "s",
                       branch.base.substr(0, 12),
                       branch.uncommitted ? ", and uncommitted changes" : "");
    // The latest ones, when there are many.
    size_t shown = std::min(branch.commits.size(), kShownCommits);
    if (shown < branch.commits.size()) {
      out += fmt::format("{}  ... {} earlier\n", indent,
                         branch.commits.size() - shown);
    }
    for (size_t i = branch.commits.size() - shown; i < branch.commits.size();
         ++i) {
      out += fmt::format("{}  {}\n", indent, TerminalSafe(branch.commits[i]));
    }
    if (tail_lines > 0)
      out += IndentLines(LastLinesOf(branch.diff_stat, tail_lines),
                         fmt::format("{}  | ", indent));
  }
  if (!evidence.diff_path.empty()) {
    out +=
        fmt::format("{}diff: {}{}\n", indent, TerminalSafe(evidence.diff_path),
                    evidence.diff_truncated ? " (cut at 1 MiB)" : "");
  }
  if (!evidence.overlapping_tasks.empty()) {
    std::string ids;
    for (const auto& id : evidence.overlapping_tasks)
      ids += (ids.empty() ? "" : ", ") + id;
    out += fmt::format("{}overlapping tasks in the same folder: {}\n", indent,
                       ids);
  }
  return out;
}

std::string QuestionItemsText(const std::vector<OpenQuestion>& questions,
                              std::string_view indent) {
  std::string out;
  for (const OpenQuestion& question : questions) {
    for (const QuestionItem& item : question.items) {
      out += fmt::format(
          "{}{}{}{}\n", indent,
          item.header.empty() ? "" : "[" + TerminalSafe(item.header) + "] ",
          TerminalSafe(item.prompt),
          item.multi_select ? " (several: 1,3)" : "");
      for (size_t i = 0; i < item.options.size(); ++i) {
        const QuestionOption& option = item.options[i];
        out += fmt::format("{}  {}. {}{}\n", indent, i + 1,
                           TerminalSafe(option.label),
                           option.description.empty()
                               ? ""
                               : " — " + TerminalSafe(option.description));
      }
    }
  }
  return out;
}

namespace {

// "a, b and 3 more files".
std::string OverlapFileList(const std::vector<std::string>& files) {
  std::string text;
  size_t shown = std::min(files.size(), kOverlapFilesShown);
  for (size_t i = 0; i < shown; ++i)
    text += (i ? ", " : "") + TerminalSafe(files[i]);
  if (files.size() > shown) {
    size_t more = files.size() - shown;
    text += fmt::format(" and {} more file{}", more, more == 1 ? "" : "s");
  }
  return text;
}

}  // namespace

std::string OverlapText(const OverlapInfo& overlap) {
  std::string pair = overlap.tasks.size() == 2
                         ? overlap.tasks[0] + " and " + overlap.tasks[1]
                         : "two tasks";
  std::string text =
      fmt::format("{} both changed {} (in {}): ", pair,
                  OverlapFileList(overlap.files), TerminalSafe(overlap.repo));
  if (overlap.kind == OverlapKind::kConflict) {
    text +=
        fmt::format("a textual conflict in {} (their changes would not merge)",
                    OverlapFileList(overlap.conflict_files));
  } else {
    text +=
        fmt::format("the same file{}, no textual conflict (git merges them)",
                    overlap.files.size() == 1 ? "" : "s");
  }
  return text;
}

}  // namespace baton
