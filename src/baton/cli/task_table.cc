#include "baton/cli/task_table.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "baton/cli/format.h"
#include "baton/ipc/task_text.h"
#include "baton/util/clock.h"
#include "baton/util/terminal_text.h"

namespace baton {
namespace {

constexpr std::string_view kEllipsis = "…";

// Columns count characters, not bytes: a label may be UTF-8.
size_t Width(std::string_view text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// The byte offset of the character `chars` characters into `text`.
size_t ByteAt(std::string_view text, size_t chars) {
  size_t at = 0;
  for (size_t seen = 0; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xC0) != 0x80 &&
        seen++ == chars) {
      break;
    }
  }
  return at;
}

// `text` cut to `max` characters with "…" at the end, or in the middle
// (`keep_end`: a command's end tells rows apart, `make -j8 test-unit` from
// `make -j8 test-slow`).
std::string Cut(const std::string& text, size_t max, bool keep_end) {
  size_t width = Width(text);
  if (width <= max)
    return text;
  if (max <= 1)
    return std::string(kEllipsis.substr(0, max ? kEllipsis.size() : 0));
  if (!keep_end)
    return text.substr(0, ByteAt(text, max - 1)) + std::string(kEllipsis);
  size_t head = (max - 1) / 2 + (max - 1) % 2;
  size_t tail = max - 1 - head;
  return text.substr(0, ByteAt(text, head)) + std::string(kEllipsis) +
         text.substr(ByteAt(text, width - tail));
}

// The ANSI colour of a status: where it stands at a glance.
std::string_view StatusColor(TaskStatus status) {
  switch (status) {
    case TaskStatus::kRunning:
    case TaskStatus::kStopping:
      return "\x1b[36m";  // Cyan.
    case TaskStatus::kWaiting:
      return "\x1b[1;35m";  // Bold magenta: it needs someone.
    case TaskStatus::kQueued:
      return "\x1b[2m";  // Dim.
    case TaskStatus::kCompleted:
      return "\x1b[32m";  // Green.
    case TaskStatus::kFailed:
      return "\x1b[31m";  // Red.
    default:
      return "\x1b[33m";  // Yellow: killed, interrupted.
  }
}

enum Column { kId, kStatus, kStarted, kTime, kWhat, kModel, kDetail, kCount };

struct Row {
  std::array<std::string, kCount> cells;
  TaskStatus status = TaskStatus::kQueued;
};

Row RowOf(const TaskRecord& task, int64_t now_ms, bool* uncollected) {
  Row row;
  row.status = task.status;
  row.cells[kId] = task.id.ToString();
  row.cells[kStatus] = std::string(TaskStatusName(task.status));
  if (IsTerminal(task.status) && !task.end_seen) {
    row.cells[kStatus] += " *";
    *uncollected = true;
  }
  row.cells[kStarted] =
      task.started_ms ? TableTime(task.started_ms, now_ms) : "-";
  if (!task.started_ms)
    row.cells[kTime] = "-";
  else if (IsTerminal(task.status))
    row.cells[kTime] = ShortSpan(task.ended_ms - task.started_ms);
  else
    row.cells[kTime] = ShortSpan(now_ms - task.started_ms);
  std::string what =
      task.spec.agent ? task.spec.agent->brief : CommandText(task.spec);
  if (!task.spec.label.empty())
    what = task.spec.label + " — " + what;
  row.cells[kWhat] = TerminalSafe(what);
  if (task.spec.agent) {
    row.cells[kModel] =
        TerminalSafe(task.spec.agent->model.empty() ? task.spec.agent->profile
                                                    : task.spec.agent->model);
  }
  row.cells[kDetail] = TerminalSafe(DetailBesideStatus(task));
  return row;
}

}  // namespace

TableStyle StyleFor(std::FILE* out) {
  TableStyle style;
  style.now_ms = WallMillis();
  int fd = ::fileno(out);
  bool terminal = fd >= 0 && ::isatty(fd);
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long value = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && value > 0 && value < 10'000)
      style.width = static_cast<size_t>(value);
  }
  struct winsize size {};
  if (!style.width && terminal && ::ioctl(fd, TIOCGWINSZ, &size) == 0)
    style.width = size.ws_col;
  const char* no_color = std::getenv("NO_COLOR");
  style.color = terminal && !(no_color && *no_color);
  return style;
}

std::string TaskTable(const std::vector<TaskView>& tasks,
                      const TableStyle& style) {
  std::vector<Row> rows;
  bool uncollected = false;
  for (bool live : {true, false}) {
    for (const TaskView& view : tasks) {
      if (IsTerminal(view.task.status) != live)
        rows.push_back(RowOf(view.task, style.now_ms, &uncollected));
    }
  }
  Row head;
  head.cells = {"ID",    "STATUS", "STARTED", "TIME", "LABEL / COMMAND",
                "MODEL", "DETAIL"};
  // A column is shown when a row has something in it (ID to LABEL /
  // COMMAND always); each is as wide as its widest cell.
  std::array<bool, kCount> shown{};
  std::array<size_t, kCount> width{};
  for (int c = 0; c < kCount; ++c) {
    shown[c] = c < kWhat + 1;
    width[c] = Width(head.cells[c]);
    for (const Row& row : rows) {
      shown[c] = shown[c] || !row.cells[c].empty();
      width[c] = std::max(width[c], Width(row.cells[c]));
    }
  }
  // However wide the terminal, a cell says enough to tell rows apart;
  // `status ID` shows all of it.
  for (auto [c, cap] : {std::pair{kWhat, size_t{80}},
                        {kModel, size_t{32}},
                        {kDetail, size_t{48}}}) {
    width[c] = std::min(width[c], cap);
  }
  // Too wide: cut the text columns, the longest first, to a floor each;
  // then leave out DETAIL, MODEL and STARTED.
  auto total = [&] {
    size_t sum = 0;
    for (int c = 0; c < kCount; ++c)
      sum += shown[c] ? width[c] + 2 : 0;
    return sum - 2;
  };
  if (style.width) {
    const std::array<size_t, kCount> natural = width;
    constexpr std::array<std::pair<Column, size_t>, 3> kFloors = {
        {{kWhat, 16}, {kDetail, 12}, {kModel, 10}}};
    while (total() > style.width) {
      Column widest = kCount;
      for (auto [c, floor] : kFloors) {
        if (shown[c] && width[c] > floor &&
            (widest == kCount || width[c] > width[widest])) {
          widest = c;
        }
      }
      if (widest == kCount)
        break;
      size_t floor = 0;
      for (auto [c, f] : kFloors) {
        if (c == widest)
          floor = f;
      }
      size_t over = total() - style.width;
      width[widest] =
          width[widest] > floor + over ? width[widest] - over : floor;
    }
    for (Column c : {kDetail, kModel, kStarted}) {
      if (total() > style.width)
        shown[c] = false;
    }
    // Room left by a column left out goes back to the text, the command
    // first.
    for (Column c : {kWhat, kDetail, kModel}) {
      if (shown[c] && total() < style.width)
        width[c] = std::min(natural[c], width[c] + (style.width - total()));
    }
  }
  auto line = [&](const Row& row, bool is_head) {
    std::string text;
    for (int c = 0; c < kCount; ++c) {
      if (!shown[c])
        continue;
      std::string cell = Cut(row.cells[c], width[c], c == kWhat);
      size_t pad = width[c] - Width(cell) + 2;
      if (c == kStatus && style.color && !is_head) {
        cell = std::string(StatusColor(row.status)) + cell + "\x1b[0m";
      }
      text += cell + std::string(pad, ' ');
    }
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    return text + "\n";
  };
  std::string out = line(head, true);
  for (const Row& row : rows)
    out += line(row, false);
  if (uncollected) {
    out +=
        Cut("* ended, and not collected yet: baton wait, output or status ID "
            "tells its end",
            style.width ? style.width : SIZE_MAX, false);
    out += "\n";
  }
  return out;
}

}  // namespace baton
