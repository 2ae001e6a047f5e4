#include "baton/cli/format.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/ipc/task_text.h"
#include "baton/util/clock.h"

namespace baton {
namespace {

std::string Shorten(std::string text, size_t max) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() <= max)
    return text;
  return text.substr(0, max - 3) + "...";
}

std::string Time(int64_t wall_ms) {
  return wall_ms ? FormatIsoTime(wall_ms) : "";
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
    line += fmt::format(" ({})", task.detail);
  if (!task.spec.label.empty())
    line += fmt::format(" — {}", task.spec.label);
  return line;
}

std::string TaskTable(const std::vector<TaskView>& tasks) {
  std::string out = fmt::format("{:<10} {:<11} {:<16} {}\n", "ID", "STATUS",
                                "DETAIL", "LABEL / COMMAND");
  for (const TaskView& view : tasks) {
    const TaskRecord& task = view.task;
    std::string what = task.spec.label;
    if (what.empty())
      what = task.spec.agent ? task.spec.agent->brief : CommandText(task.spec);
    out += fmt::format("{:<10} {:<11} {:<16} {}\n", task.id.ToString(),
                       TaskStatusName(task.status), Shorten(task.detail, 16),
                       Shorten(what, 60));
  }
  return out;
}

std::string TaskDetails(const TaskView& view) {
  const TaskRecord& task = view.task;
  std::string out = TaskSummaryLine(view) + "\n";
  auto field = [&](const char* name, const std::string& value) {
    if (!value.empty())
      out += fmt::format("  {:<9} {}\n", name, value);
  };
  field("command:", CommandText(task.spec));
  field("label:", task.spec.label);
  field("cwd:", task.spec.cwd);
  field("owner:", task.spec.owner);
  field("pid:", task.pid ? std::to_string(task.pid) : "");
  field("created:", Time(task.created_ms));
  field("started:", Time(task.started_ms));
  std::string ended = Time(task.ended_ms);
  if (!ended.empty() && task.started_ms)
    ended +=
        fmt::format(" (ran {})", ShortSpan(task.ended_ms - task.started_ms));
  field("ended:", ended);
  if (task.spec.timeout)
    field("timeout:", ShortSpan(task.spec.timeout->count()));
  if (view.output_bytes) {
    field("output:",
          fmt::format("{} bytes in {}", *view.output_bytes, task.output_path));
  }
  out += EndText(view);
  out += QuestionsText(view);
  return out;
}

std::string EndText(const TaskView& view) {
  if (!view.task.evidence)
    return "";
  return EvidenceText(*view.task.evidence, "  ", 10);
}

std::string QuestionsText(const TaskView& view) {
  std::string out;
  for (const OpenQuestion& question : view.questions) {
    out += fmt::format("  question {}:\n", question.seq);
    for (const QuestionItem& item : question.items) {
      out += fmt::format("    {}{}\n", item.prompt,
                         item.multi_select ? " (several: 1,3)" : "");
      for (size_t i = 0; i < item.options.size(); ++i) {
        const QuestionOption& option = item.options[i];
        out += fmt::format(
            "      [{}] {}{}\n", i + 1, option.label,
            option.description.empty() ? "" : " — " + option.description);
      }
    }
  }
  if (!out.empty()) {
    out += fmt::format(
        "  answer: baton answer {} <number|label|text|skip> (one per item)\n",
        view.task.id.ToString());
  }
  return out;
}

}  // namespace baton
