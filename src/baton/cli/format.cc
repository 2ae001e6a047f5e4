#include "baton/cli/format.h"

#include <fmt/format.h>

#include <algorithm>

namespace baton {
namespace {

std::string Str(const Json& task, const char* key) {
  auto it = task.find(key);
  if (it == task.end() || it->is_null())
    return "";
  if (it->is_string())
    return it->get<std::string>();
  return it->dump();
}

std::string Shorten(std::string text, size_t max) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() <= max)
    return text;
  return text.substr(0, max - 3) + "...";
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

std::string TaskSummaryLine(const Json& task) {
  std::string line = fmt::format("{} {}", Str(task, "id"), Str(task, "status"));
  std::string detail = Str(task, "detail");
  if (!detail.empty())
    line += fmt::format(" ({})", detail);
  std::string label = Str(task, "label");
  if (!label.empty())
    line += fmt::format(" — {}", label);
  return line;
}

std::string TaskTable(const Json& tasks) {
  std::string out = fmt::format("{:<10} {:<11} {:<16} {}\n", "ID", "STATUS",
                                "DETAIL", "LABEL / COMMAND");
  for (const auto& task : tasks) {
    std::string what = Str(task, "label");
    if (what.empty())
      what = Str(task, "command");
    out += fmt::format("{:<10} {:<11} {:<16} {}\n", Str(task, "id"),
                       Str(task, "status"), Shorten(Str(task, "detail"), 16),
                       Shorten(what, 60));
  }
  return out;
}

std::string TaskDetails(const Json& task) {
  std::string out = TaskSummaryLine(task) + "\n";
  auto field = [&](const char* name, const std::string& value) {
    if (!value.empty())
      out += fmt::format("  {:<9} {}\n", name, value);
  };
  field("command:", Str(task, "command"));
  field("label:", Str(task, "label"));
  field("cwd:", Str(task, "cwd"));
  field("owner:", Str(task, "owner"));
  field("pid:", Str(task, "pid"));
  field("created:", Str(task, "created_at"));
  field("started:", Str(task, "started_at"));
  std::string ended = Str(task, "ended_at");
  if (!ended.empty() && task.value("duration_ms", Json()).is_number()) {
    ended +=
        fmt::format(" (ran {})", ShortSpan(task["duration_ms"].get<int64_t>()));
  }
  field("ended:", ended);
  if (task.value("timeout_ms", Json()).is_number()) {
    field("timeout:", ShortSpan(task["timeout_ms"].get<int64_t>()));
  }
  if (task.contains("output_bytes")) {
    field("output:", fmt::format("{} bytes in {}", Str(task, "output_bytes"),
                                 Str(task, "output_path")));
  }
  return out;
}

}  // namespace baton
