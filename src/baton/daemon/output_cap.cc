#include "baton/daemon/output_cap.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include "baton/util/file_util.h"
#include "baton/util/log.h"
#include "baton/util/unique_fd.h"

namespace baton {
namespace {

constexpr std::string_view kMarkerStart = "[baton: output capped at ";
// A file's blocks: a hole can only be punched in whole ones.
constexpr uint64_t kBlock = 4096;

// The count a marker at the end of a finished file says, if it is one.
std::optional<uint64_t> DroppedInMarker(std::string_view tail) {
  if (!tail.empty() && tail.front() == '\n')
    tail.remove_prefix(1);
  if (!tail.starts_with(kMarkerStart) || !tail.ends_with("]\n"))
    return std::nullopt;
  size_t at = tail.find("; ");
  if (at == std::string_view::npos)
    return std::nullopt;
  uint64_t dropped = 0;
  auto [end, error] =
      std::from_chars(tail.data() + at + 2, tail.data() + tail.size(), dropped);
  if (error != std::errc() || !std::string_view(end).starts_with(" more"))
    return std::nullopt;
  return dropped;
}

// `path` opened with `flags`, and its size.
Result<std::pair<UniqueFd, uint64_t>> OpenLog(const std::string& path,
                                              int flags) {
  UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return std::unexpected(ErrnoError("stat " + path, errno));
  return std::pair(std::move(fd), static_cast<uint64_t>(st.st_size));
}

}  // namespace

std::string CapMarker(uint64_t cap, uint64_t dropped) {
  return fmt::format("{}{} bytes (max_output); {} more bytes were dropped]\n",
                     kMarkerStart, cap, dropped);
}

Result<uint64_t> PunchPastCap(const std::string& path, uint64_t cap,
                              uint64_t punched_to) {
  auto log = OpenLog(path, O_WRONLY);
  if (!log)
    return std::unexpected(log.error());
  auto& [fd, size] = *log;
  uint64_t from = std::max((cap + kBlock - 1) / kBlock * kBlock, punched_to);
  if (size <= from)
    return punched_to;
  if (::fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(from),
                  static_cast<off_t>(size - from)) != 0) {
    return std::unexpected(ErrnoError("punching a hole in " + path, errno));
  }
  return size;
}

Result<uint64_t> FinishCappedOutput(const std::string& path, uint64_t cap) {
  // Nearly every log ends under its cap: one stat, no open (doc/hot-path.md).
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0)
    return std::unexpected(ErrnoError("stat " + path, errno));
  if (static_cast<uint64_t>(before.st_size) <= cap)
    return 0;
  auto log = OpenLog(path, O_RDWR);
  if (!log)
    return std::unexpected(log.error());
  auto& [fd, size] = *log;
  if (size <= cap)
    return 0;
  // Finished already? Then what follows the cap is the marker.
  constexpr uint64_t kLongestMarker = 128;
  if (size - cap <= kLongestMarker) {
    std::string tail(size - cap, '\0');
    if (::pread(fd.get(), tail.data(), tail.size(), static_cast<off_t>(cap)) ==
        static_cast<ssize_t>(tail.size())) {
      if (auto dropped = DroppedInMarker(tail))
        return *dropped;
    }
  }
  uint64_t dropped = size - cap;
  std::string marker = CapMarker(cap, dropped);
  char last = '\n';
  if (cap > 0 &&
      ::pread(fd.get(), &last, 1, static_cast<off_t>(cap - 1)) == 1 &&
      last != '\n') {
    marker.insert(marker.begin(), '\n');
  }
  if (::pwrite(fd.get(), marker.data(), marker.size(),
               static_cast<off_t>(cap)) !=
          static_cast<ssize_t>(marker.size()) ||
      ::ftruncate(fd.get(), static_cast<off_t>(cap + marker.size())) != 0) {
    return std::unexpected(ErrnoError("ending the capped " + path, errno));
  }
  return dropped;
}

OutputCap::OutputCap(EventLoop* loop, TaskRegistry* registry,
                     ExecutorListener* next)
    : ForwardingListener(next), loop_(loop), registry_(registry) {}

OutputCap::~OutputCap() {
  if (timer_)
    loop_->Cancel(timer_);
}

void OutputCap::Recover(const std::vector<TaskRecord>& live) {
  for (const TaskRecord& task : live)
    Watch(task);
}

void OutputCap::Watch(const TaskRecord& task) {
  // Agent tasks' logs are batond's transcript, and their streams are read
  // by their adapters: only shell tasks are capped.
  if (task.spec.max_output <= 0 || task.spec.agent || task.held)
    return;
  watched_[task.id] = {task.output_path,
                       static_cast<uint64_t>(task.spec.max_output), 0};
  if (!timer_)
    ScheduleTick();
}

void OutputCap::ScheduleTick() {
  timer_ = loop_->Schedule(std::chrono::steady_clock::now() + kTick,
                           [this] { Tick(); });
}

void OutputCap::Tick() {
  timer_ = 0;
  for (auto& [id, watched] : watched_) {
    // A stat a tick for a task within its cap; only one past it is opened.
    auto size = FileSize(watched.path);
    if (!size || *size <= std::max(watched.cap, watched.punched_to))
      continue;
    auto punched = PunchPastCap(watched.path, watched.cap, watched.punched_to);
    if (punched) {
      watched.punched_to = *punched;
    } else if (!punch_failed_logged_ &&
               punched.error().code != ErrorCode::kNotFound) {
      // The cap still holds for readers and at the end; only the disk
      // holds the bytes past it until then.
      BATON_LOG_WARN("output cap: {}", punched.error().message);
      punch_failed_logged_ = true;
    }
  }
  if (!watched_.empty())
    ScheduleTick();
}

void OutputCap::OnTaskSpawned(const TaskId& id, int64_t pid,
                              int64_t started_ms) {
  if (const TaskRecord* task = registry_->FindLive(id))
    Watch(*task);
  next_->OnTaskSpawned(id, pid, started_ms);
}

void OutputCap::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  watched_.erase(id);
  next_->OnTaskSpawnFailed(id, error);
}

void OutputCap::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  watched_.erase(id);
  const TaskRecord* task = registry_->FindLive(id);
  if (!task || task->spec.max_output <= 0 || task->spec.agent)
    return next_->OnTaskExited(id, exit);
  ExitInfo capped = exit;
  auto dropped = FinishCappedOutput(
      task->output_path, static_cast<uint64_t>(task->spec.max_output));
  if (dropped) {
    capped.output_dropped = static_cast<int64_t>(*dropped);
  } else if (dropped.error().code != ErrorCode::kNotFound) {
    BATON_LOG_WARN("output cap of {}: {}", id.ToString(),
                   dropped.error().message);
  }
  next_->OnTaskExited(id, capped);
}

}  // namespace baton
