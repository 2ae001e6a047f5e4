#include "baton/daemon/output_redactor.h"

#include <fcntl.h>
#include <unistd.h>

#include <string_view>

#include "baton/util/log.h"
#include "baton/util/secret_shapes.h"
#include "baton/util/unique_fd.h"

namespace baton {

Result<RedactPass> RedactLog(const std::string& path, uint64_t from,
                             bool at_end, size_t piece) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  RedactPass pass{.settled = from, .readable = from};
  std::string text;
  for (;;) {
    text.resize(piece);
    ssize_t got =
        ::pread(fd.get(), text.data(), piece, static_cast<off_t>(pass.settled));
    if (got < 0)
      return std::unexpected(ErrnoError("read " + path, errno));
    text.resize(static_cast<size_t>(got));
    if (text.empty())
      return pass;
    bool last_piece = text.size() < piece;
    ScanEnd end;
    auto found = FindSecrets(text, at_end && last_piece, &end);
    // A candidate as long as a whole piece is decided as it stands: each
    // pass must move on.
    if (end.settled == 0 && !last_piece)
      found = FindSecrets(text, /*at_end=*/true, &end);
    for (const SecretMatch& match : found) {
      std::string marker = SecretMarker(match.kind, match.length);
      off_t at = static_cast<off_t>(pass.settled + match.offset);
      if (::pwrite(fd.get(), marker.data(), marker.size(), at) !=
          static_cast<ssize_t>(marker.size())) {
        return std::unexpected(ErrnoError("write " + path, errno));
      }
      ++pass.masked[std::string(match.kind)];
    }
    if (last_piece) {
      // Up to a secret that may be starting, the log may be shown.
      pass.readable = pass.settled + end.open;
      pass.settled += end.settled;
      return pass;
    }
    pass.settled += end.settled;
  }
}

OutputRedactor::OutputRedactor(EventLoop* loop, TaskRegistry* registry,
                               ExecutorListener* next)
    : loop_(loop), registry_(registry), next_(next) {}

OutputRedactor::~OutputRedactor() {
  if (timer_)
    loop_->Cancel(timer_);
}

void OutputRedactor::Recover(const std::vector<TaskRecord>& live) {
  for (const TaskRecord& task : live)
    Watch(task);
}

void OutputRedactor::Watch(const TaskRecord& task) {
  if (task.held)
    return;
  watched_[task.id] = {.path = task.output_path};
  if (!timer_)
    ScheduleTick();
}

void OutputRedactor::Pass(Watched& watched, bool at_end) {
  auto pass = RedactLog(watched.path, watched.settled, at_end);
  if (!pass) {
    // Not there yet (the spawn makes it): the next tick tries again.
    if (pass.error().code != ErrorCode::kNotFound && !failure_logged_) {
      BATON_LOG_WARN("redaction: {}", pass.error().message);
      failure_logged_ = true;
    }
    return;
  }
  watched.settled = pass->settled;
  watched.readable = pass->readable;
  for (const auto& [kind, count] : pass->masked)
    watched.masked[kind] += count;
}

std::optional<uint64_t> OutputRedactor::CatchUp(const TaskId& id) {
  auto it = watched_.find(id);
  if (it == watched_.end())
    return std::nullopt;
  Pass(it->second, /*at_end=*/false);
  return it->second.readable;
}

RedactionCounts OutputRedactor::CountsOf(const TaskId& id) const {
  auto it = watched_.find(id);
  return it == watched_.end() ? RedactionCounts{} : it->second.masked;
}

void OutputRedactor::ScheduleTick() {
  timer_ = loop_->Schedule(std::chrono::steady_clock::now() + kTick,
                           [this] { Tick(); });
}

void OutputRedactor::Tick() {
  timer_ = 0;
  for (auto& [id, watched] : watched_)
    Pass(watched, /*at_end=*/false);
  if (!watched_.empty())
    ScheduleTick();
}

void OutputRedactor::OnTaskSpawned(const TaskId& id, int64_t pid,
                                   int64_t started_ms) {
  if (const TaskRecord* task = registry_->FindLive(id))
    Watch(*task);
  next_->OnTaskSpawned(id, pid, started_ms);
}

void OutputRedactor::OnTaskPlaced(const TaskId& id, const SlurmJob& job) {
  next_->OnTaskPlaced(id, job);
}

void OutputRedactor::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  watched_.erase(id);
  next_->OnTaskSpawnFailed(id, error);
}

void OutputRedactor::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  // The last pass, before anyone hears of the end: a reader told of it
  // reads a log with nothing left to mask.
  if (auto it = watched_.find(id); it != watched_.end()) {
    Pass(it->second, /*at_end=*/true);
    watched_.erase(it);
  }
  next_->OnTaskExited(id, exit);
}

}  // namespace baton
