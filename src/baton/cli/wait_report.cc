#include "baton/cli/wait_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unordered_set>

#include "baton/cli/format.h"
#include "baton/cli/reconnect.h"
#include "baton/ipc/task_text.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

// What `baton wait` shows of an ended task's output: its last lines, read
// from the end of the log (never the whole of a huge one), without moving
// any cursor. Only for a few ended tasks at once: a wait over a thousand
// tasks is not a thousand reads.
constexpr size_t kTailLines = 10;
constexpr uint64_t kTailBytes = 8 * 1024;
constexpr size_t kMaxTasksWithTail = 10;

// "  output (last 3 lines of 120 bytes):\n    ...\n", or "" when there is
// no output or it cannot be read (the report goes on without it). The
// ended task's view in the wait reply says where its log is and how much of
// it is readable: no `read` call (a second round trip was a quarter of what
// a wait cost after the task's end: doc/hot-path.md, "Where a wake goes").
std::string OutputTail(const TaskView& view) {
  const std::string& path = view.task.output_path;
  uint64_t to = view.output_bytes.value_or(0);
  if (path.empty() || to == 0)
    return "";
  uint64_t from = to > kTailBytes ? to - kTailBytes : 0;
  auto bytes = ReadFileRange(path, from, to);
  if (!bytes)
    return "";
  std::string lines = LastLinesOf(*bytes, kTailLines);
  if (lines.empty())
    return "";
  std::string shown = IndentLines(lines, "    ");
  size_t count =
      static_cast<size_t>(std::count(shown.begin(), shown.end(), '\n'));
  return fmt::format("  output (last {} line{} of {} bytes):\n", count,
                     count == 1 ? "" : "s", to) +
         shown;
}

// A live "waiting" line on a terminal's stderr; nothing on a pipe.
class LiveLine {
 public:
  LiveLine()
      : enabled_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}
  void Show(size_t running, size_t done) {
    if (!enabled_)
      return;
    auto elapsed = std::chrono::duration_cast<milliseconds>(
        std::chrono::steady_clock::now() - start_);
    std::fprintf(stderr, "\r\033[Kwaiting: %zu running, %zu done, %s", running,
                 done, ShortSpan(elapsed.count()).c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (shown_)
      std::fputs("\r\033[K", stderr);
    shown_ = false;
  }
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

int ExitCodeOf(const TaskRecord& task) {
  // A process that exited 0 but failed a check did not do its job.
  if (task.status == TaskStatus::kFailed && task.exit_code == 0)
    return kExitFailed;
  if (task.exit_code)
    return *task.exit_code;
  if (task.signal)
    return 128 + *task.signal;
  return kExitFailed;
}

// Failed, killed or interrupted; a task that waits for an answer is not.
bool EndedBadly(const TaskRecord& task) {
  return task.status == TaskStatus::kFailed ||
         task.status == TaskStatus::kKilled ||
         task.status == TaskStatus::kInterrupted;
}

// A turn's end: that it ended, and its final text, indented.
std::string TurnText(const TurnEnd& turn) {
  return "  ended a turn; its final text:\n" + IndentLines(turn.text, "    ");
}

}  // namespace

int ReportEnd(const Context& ctx, DaemonClient& client, const std::string& id) {
  // As the stream did, across a restart of batond.
  auto reply = CallReconnecting(ctx, client, GetRequest{.task = id});
  if (!reply)
    return ReportError(ctx, reply.error());
  std::printf("%s\n", TaskSummaryLine(reply->task).c_str());
  std::fputs(EndText(reply->task).c_str(), stdout);
  PrintNotices(client);
  return ExitCodeOf(reply->task.task);
}

int WaitAndReport(const Context& ctx, DaemonClient& client,
                  const WaitOptions& options) {
  LiveLine live;
  // A plain time point, not an optional: g++ 12 misjudges the latter as
  // maybe-uninitialized.
  auto deadline = options.timeout
                      ? std::chrono::steady_clock::now() + *options.timeout
                      : std::chrono::steady_clock::time_point::max();
  // Each id once, in the order given: what is left of it after the ends
  // is what still runs.
  std::vector<std::string> remaining;
  {
    std::unordered_set<std::string_view> seen;
    for (const std::string& id : options.ids) {
      if (seen.insert(id).second)
        remaining.push_back(id);
    }
  }
  WaitReply report;
  // On a terminal with --all, wait for one at a time to keep the count
  // live; otherwise one request does it all.
  bool stepwise = options.all && live.enabled();
  while (!remaining.empty()) {
    WaitRequest request{.tasks = remaining,
                        .all = options.all && !stepwise,
                        .turns = options.turns};
    // The text output names still-running tasks by id only, and we know
    // which we asked for: without the list, a wait over a thousand tasks
    // is as quick as over one.
    if (!ctx.json)
      request.still_running = StillRunningForm::kNone;
    if (options.timeout) {
      auto left = std::chrono::duration_cast<milliseconds>(
          deadline - std::chrono::steady_clock::now());
      request.timeout = std::max(milliseconds(0), left);
    }
    // Kept for a resend, should batond go away meanwhile.
    ReconnectingWait wait(ctx, client, std::move(request));
    if (auto sent = wait.Send(); !sent)
      return ReportError(ctx, sent.error());
    Result<WaitReply> result;
    for (;;) {
      live.Show(remaining.size(), report.ended.size());
      result = wait.Read(live.enabled() ? std::optional(milliseconds(200))
                                        : std::nullopt);
      if (!result && result.error().code == ErrorCode::kTimeout)
        continue;
      break;
    }
    live.Clear();
    if (!result)
      return ReportError(ctx, result.error());
    std::unordered_set<std::string> ended_now;
    for (auto& task : result->ended) {
      ended_now.insert(task.task.id.ToString());
      report.ended.push_back(std::move(task));
    }
    for (auto& id : result->told_before)
      report.told_before.push_back(std::move(id));
    // Told before (collected): neither news nor still running.
    for (auto& id : result->already_told) {
      ended_now.insert(id);
      report.already_told.push_back(std::move(id));
    }
    std::erase_if(remaining, [&](const std::string& id) {
      return ended_now.contains(id);
    });
    for (auto& turn : result->turns)
      report.turns.push_back(std::move(turn));
    report.still_running = std::move(result->still_running);
    report.timed_out = result->timed_out;
    if (report.timed_out || !stepwise)
      break;
  }
  PrintReply(ctx, client, report, [&](const WaitReply&) {
    const bool tails = report.ended.size() <= kMaxTasksWithTail;
    for (const TaskView& task : report.ended) {
      std::printf("%s\n", TaskSummaryLine(task).c_str());
      std::string id = task.task.id.ToString();
      for (const TurnEnd& turn : report.turns) {
        if (turn.task == id)
          std::fputs(TurnText(turn).c_str(), stdout);
      }
      // The open question says what is needed; otherwise the last lines
      // say how it went.
      std::string questions = QuestionsText(task);
      if (questions.empty() && tails && IsTerminal(task.task.status))
        std::fputs(OutputTail(task).c_str(), stdout);
      std::fputs(EndText(task).c_str(), stdout);
      std::fputs(questions.c_str(), stdout);
    }
    std::string told;
    for (const std::string& id : report.already_told)
      told += " " + id;
    if (!told.empty())
      std::printf("already collected:%s\n", told.c_str());
    // Nothing named was news: said, so that a loop over the same ids sees
    // why it returned at once.
    std::string before;
    for (const std::string& id : report.told_before)
      before += " " + id;
    if (!before.empty())
      std::printf("collected before this wait:%s\n", before.c_str());
    // The daemon accepted the ids, so each is spelled as it spells them.
    std::string ids_text;
    for (const std::string& id : remaining)
      ids_text += " " + id;
    if (!ids_text.empty()) {
      std::printf(
          "%s:%s\n",
          report.timed_out ? "timed out; still running" : "still running",
          ids_text.c_str());
    }
    return kExitOk;
  });
  if (report.timed_out)
    return kExitTimeout;
  if (options.exit_like_task && report.ended.size() == 1)
    return ExitCodeOf(report.ended[0].task);
  for (const TaskView& task : report.ended) {
    if (EndedBadly(task.task))
      return kExitFailed;
  }
  return kExitOk;
}

}  // namespace baton
