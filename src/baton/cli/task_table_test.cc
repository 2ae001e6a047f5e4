#include "baton/cli/task_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace baton {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

TaskView ShellTask(int64_t number, TaskStatus status, std::string command,
                   std::string label = "", std::string detail = "") {
  TaskView view;
  TaskRecord& task = view.task;
  task.id = TaskId{TaskKind::kShell, number};
  task.status = status;
  task.spec.shell_command = std::move(command);
  task.spec.label = std::move(label);
  task.detail = std::move(detail);
  task.end_seen = true;
  return view;
}

std::vector<std::string> TableLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

size_t Chars(const std::string& text) {
  size_t n = 0;
  for (char c : text)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Issue 38: `ls` was 126 columns whatever the terminal, interleaved running
// and ended tasks, hid the command behind a label and had no time column.
TEST(TaskTable, LiveFirstLabelAndCommandAndTheTimeOfEach) {
  TaskView ended = ShellTask(1, TaskStatus::kCompleted, "make test", "tests",
                             "exit code: 0");
  ended.task.started_ms = kNow - 60'000;
  ended.task.ended_ms = kNow - 15'000;
  TaskView running = ShellTask(2, TaskStatus::kRunning, "sleep 100");
  running.task.started_ms = kNow - 125'000;
  TaskView queued = ShellTask(3, TaskStatus::kQueued, "true");
  std::string table =
      TaskTable({ended, running, queued}, {.width = 0, .now_ms = kNow});
  auto lines = TableLines(table);
  ASSERT_EQ(lines.size(), 4u) << table;
  EXPECT_EQ(lines[0],
            "ID       STATUS     STARTED   TIME  LABEL / COMMAND    DETAIL");
  EXPECT_TRUE(lines[1].starts_with("shell-2  running  ")) << table;
  EXPECT_NE(lines[1].find("  2m5s  sleep 100"), std::string::npos) << table;
  EXPECT_TRUE(lines[2].starts_with("shell-3  queued     -         -     true"))
      << table;
  EXPECT_NE(lines[3].find("45s   tests — make test  exit code: 0"),
            std::string::npos)
      << table;
  // No agent listed: no MODEL column.
  EXPECT_EQ(table.find("MODEL"), std::string::npos);
}

TEST(TaskTable, FitsTheTerminalCuttingTheCommandInTheMiddle) {
  std::vector<TaskView> tasks = {
      ShellTask(1, TaskStatus::kFailed,
                "make -j8 test-unit-very-long-target-name-that-goes-on-and-on",
                "", "exit code: 2"),
      ShellTask(2, TaskStatus::kFailed,
                "make -j8 test-slow-very-long-target-name-that-goes-on-and-on",
                "", "exit code: 2")};
  for (size_t width : {200u, 80u, 60u, 40u}) {
    std::string table = TaskTable(tasks, {.width = width, .now_ms = kNow});
    for (const std::string& line : TableLines(table))
      EXPECT_LE(Chars(line), width) << width << "\n" << table;
  }
  std::string narrow = TaskTable(tasks, {.width = 60, .now_ms = kNow});
  // The rows still differ where the commands do, and end as they end.
  auto lines = TableLines(narrow);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1], lines[2]);
  EXPECT_NE(lines[1].find("…"), std::string::npos) << narrow;
  EXPECT_TRUE(lines[1].ends_with("and-on")) << narrow;
  // Wide enough, nothing is cut.
  std::string wide = TaskTable(tasks, {.width = 200, .now_ms = kNow});
  EXPECT_EQ(wide.find("…"), std::string::npos) << wide;
  EXPECT_NE(wide.find("exit code: 2"), std::string::npos) << wide;
}

TEST(TaskTable, StatusesAreColouredOnlyWhenAsked) {
  std::vector<TaskView> tasks = {ShellTask(1, TaskStatus::kFailed, "false")};
  EXPECT_EQ(TaskTable(tasks, {.now_ms = kNow}).find('\x1b'), std::string::npos);
  std::string coloured = TaskTable(tasks, {.color = true, .now_ms = kNow});
  EXPECT_NE(coloured.find("\x1b[31mfailed\x1b[0m"), std::string::npos)
      << coloured;
  // The header is not coloured, and the colour does not shift the columns.
  EXPECT_TRUE(coloured.starts_with("ID       STATUS  ")) << coloured;
}

}  // namespace
}  // namespace baton
