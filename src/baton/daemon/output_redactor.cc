#include "baton/daemon/output_redactor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"
#include "baton/util/secret_shapes.h"
#include "baton/util/unique_fd.h"

namespace baton {

void RedactFinishedFile(const std::string& path) {
  auto masked = RedactLog(path, 0, /*at_end=*/true);
  if (!masked && masked.error().code != ErrorCode::kNotFound)
    BATON_LOG_WARN("redaction: {}", masked.error().message);
}

Result<RedactPass> RedactLog(const std::string& path, uint64_t from,
                             bool at_end, const RedactLimits& limits) {
  // Most passes (every task's last, at its end) find nothing new: one stat
  // says so without opening the log (doc/hot-path.md).
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0)
    return std::unexpected(ErrnoError("stat " + path, errno));
  if (std::min(limits.end, static_cast<uint64_t>(before.st_size)) <= from)
    return RedactPass{.settled = from, .readable = from};
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  // Read no more than the log holds now: a piece's buffer is filled as it
  // is sized, and most passes (every task's last, at its end) find little
  // or nothing new. What is written meanwhile is the next pass's.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return std::unexpected(ErrnoError("stat " + path, errno));
  const uint64_t end = std::min(limits.end, static_cast<uint64_t>(st.st_size));
  RedactPass pass{.settled = from, .readable = from};
  std::string text;
  uint64_t scanned = 0;
  for (;;) {
    // Up to `end`: what lies past it is not output (a capped log's hole).
    uint64_t left = end > pass.settled ? end - pass.settled : 0;
    // With the byte before `settled`: whether a shape there starts a word
    // depends on it (util/secret_shapes.h).
    size_t context = pass.settled > 0 ? 1 : 0;
    uint64_t start = pass.settled - context;
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(limits.piece, left)) + context;
    text.resize(want);
    ssize_t got =
        ::pread(fd.get(), text.data(), want, static_cast<off_t>(start));
    if (got < 0)
      return std::unexpected(ErrnoError("read " + path, errno));
    text.resize(static_cast<size_t>(got));
    if (text.size() <= context)
      return pass;
    size_t new_bytes = text.size() - context;
    bool last_piece = new_bytes < limits.piece || left <= limits.piece;
    ScanEnd scan_end;
    auto found = FindSecrets(text, at_end && last_piece, &scan_end, context);
    // A candidate as long as a whole piece is decided as it stands: each
    // pass must move on.
    if (scan_end.settled == context && !last_piece)
      found = FindSecrets(text, /*at_end=*/true, &scan_end, context);
    for (const SecretMatch& match : found) {
      std::string marker = SecretMarker(match.kind, match.length);
      off_t at = static_cast<off_t>(start + match.offset);
      if (::pwrite(fd.get(), marker.data(), marker.size(), at) !=
          static_cast<ssize_t>(marker.size())) {
        return std::unexpected(ErrnoError("write " + path, errno));
      }
      ++pass.masked[std::string(match.kind)];
    }
    if (last_piece) {
      // Up to a secret that may be starting, the log may be shown.
      pass.readable = start + scan_end.open;
      pass.settled = start + scan_end.settled;
      return pass;
    }
    scanned += scan_end.settled - context;
    pass.settled = start + scan_end.settled;
    if (scanned >= limits.budget) {
      // Stopped by the budget: what lies before `settled` is decided.
      pass.readable = pass.settled;
      pass.whole = false;
      return pass;
    }
  }
}

std::vector<RedactionCount> ReadRedactions(const std::string& path) {
  auto text = ReadFile(path);
  if (!text)
    return {};  // Nothing masked yet.
  auto parsed = ParseJson(*text);
  RedactionsFile file;
  if (!parsed || !DecodeValue(parsed->value, file, {}, kTaskRedactionsFile))
    return {};
  return file.masked;
}

OutputRedactor::OutputRedactor(EventLoop* loop, TaskRegistry* registry,
                               const Executor* executor, ExecutorListener* next)
    : ForwardingListener(next),
      loop_(loop),
      registry_(registry),
      executor_(executor) {}

OutputRedactor::~OutputRedactor() {
  if (timer_)
    loop_->Cancel(timer_);
  if (finish_timer_)
    loop_->Cancel(finish_timer_);
}

void OutputRedactor::Recover(const std::vector<TaskRecord>& live) {
  for (const TaskRecord& task : live)
    Watch(task);
}

void OutputRedactor::Watch(const TaskRecord& task) {
  if (task.held || !task.spec.redact || watched_.contains(task.id))
    return;
  Watched watched{
      .path = task.output_path,
      .counts_path = fmt::format("{}/{}", executor_->TaskDir(task.id),
                                 kTaskRedactionsFile)};
  // What the output cap keeps; past it the log is a hole while it runs.
  if (!task.spec.agent && task.spec.max_output > 0)
    watched.cap = static_cast<uint64_t>(task.spec.max_output);
  for (const RedactionCount& count : ReadRedactions(watched.counts_path))
    watched.masked[count.kind] += count.count;
  watched_.emplace(task.id, std::move(watched));
  if (!timer_)
    ScheduleTick();
}

bool OutputRedactor::Pass(Watched& watched, bool at_end) {
  auto pass = RedactLog(
      watched.path, watched.settled, at_end,
      {.end = at_end ? UINT64_MAX : watched.cap, .budget = kPassBudget});
  if (!pass) {
    // Not there yet (the spawn makes it): the next tick tries again.
    if (pass.error().code != ErrorCode::kNotFound && !failure_logged_) {
      BATON_LOG_WARN("redaction: {}", pass.error().message);
      failure_logged_ = true;
    }
    return true;
  }
  watched.settled = pass->settled;
  // Never less than a reader was already given.
  watched.readable = std::max(watched.readable, pass->readable);
  if (!pass->masked.empty())
    SaveCounts(watched, pass->masked);
  return pass->whole;
}

void OutputRedactor::SaveCounts(Watched& watched,
                                const RedactionCounts& masked) {
  RedactionsFile file;
  for (const auto& [kind, count] : masked) {
    watched.masked[kind] += count;
    masked_total_[kind] += count;
  }
  for (const auto& [kind, count] : watched.masked)
    file.masked.push_back({kind, count});
  if (auto written = WriteFileAtomic(watched.counts_path, EncodeObject(file));
      !written && !failure_logged_) {
    BATON_LOG_WARN("redaction: {}", written.error().message);
    failure_logged_ = true;
  }
}

std::optional<uint64_t> OutputRedactor::CatchUp(const TaskId& id) {
  auto it = watched_.find(id);
  if (it == watched_.end())
    return std::nullopt;
  // An ended one's last passes are under way (FinishSome).
  if (!it->second.exit)
    Pass(it->second, /*at_end=*/false);
  return it->second.readable;
}

std::optional<uint64_t> OutputRedactor::Readable(const TaskId& id) const {
  auto it = watched_.find(id);
  if (it == watched_.end())
    return std::nullopt;
  return it->second.readable;
}

void OutputRedactor::ScheduleTick() {
  timer_ = loop_->Schedule(std::chrono::steady_clock::now() + kTick,
                           [this] { Tick(); });
}

void OutputRedactor::Tick() {
  timer_ = 0;
  for (auto& [id, watched] : watched_) {
    if (!watched.exit)
      Pass(watched, /*at_end=*/false);
  }
  if (!watched_.empty())
    ScheduleTick();
}

void OutputRedactor::FinishSome() {
  finish_timer_ = 0;
  std::vector<std::pair<TaskId, ExitInfo>> done;
  for (auto& [id, watched] : watched_) {
    if (watched.exit && Pass(watched, /*at_end=*/true))
      done.emplace_back(id, *watched.exit);
  }
  for (const auto& [id, exit] : done) {
    watched_.erase(id);
    next_->OnTaskExited(id, exit);
  }
  if (std::ranges::any_of(watched_, [](const auto& entry) {
        return entry.second.exit.has_value();
      })) {
    ScheduleFinish();
  }
}

void OutputRedactor::ScheduleFinish() {
  if (!finish_timer_) {
    finish_timer_ = loop_->Schedule(std::chrono::steady_clock::now(),
                                    [this] { FinishSome(); });
  }
}

void OutputRedactor::OnTaskSpawned(const TaskId& id, int64_t pid,
                                   int64_t started_ms) {
  if (const TaskRecord* task = registry_->FindLive(id))
    Watch(*task);
  next_->OnTaskSpawned(id, pid, started_ms);
}

void OutputRedactor::OnTaskPlaced(const TaskId& id, const Placement& job) {
  // A remote job's log is in the shared folder batond reads it from.
  if (const TaskRecord* task = registry_->FindLive(id))
    Watch(*task);
  next_->OnTaskPlaced(id, job);
}

void OutputRedactor::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  watched_.erase(id);
  next_->OnTaskSpawnFailed(id, error);
}

void OutputRedactor::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  // The last pass, before anyone hears of the end: a reader told of it
  // reads a log with nothing left to mask. (Every live task is watched
  // from its spawn, or from batond's start: Recover.)
  if (auto it = watched_.find(id); it != watched_.end()) {
    // A log that grew faster than the ticks scanned it is finished a
    // budget per loop turn, so batond serves on meanwhile; its end is
    // reported when the log is done.
    if (!Pass(it->second, /*at_end=*/true)) {
      it->second.exit = exit;
      ScheduleFinish();
      return;
    }
    watched_.erase(it);
  }
  next_->OnTaskExited(id, exit);
}

}  // namespace baton
