#include "baton/supervisor/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "baton/supervisor/protocol.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using Json = nlohmann::json;

// Version 2: a spawning task's child says "began" with its pid before it
// execs, so a "spawning" line alone means the task never ran.
constexpr int kJournalVersion = 2;

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string HeaderLine(const std::string& boot_id) {
  return Dump(
      {{"op", "journal"}, {"version", kJournalVersion}, {"boot_id", boot_id}});
}

std::string SpawningLine(const JournalTask& t) {
  Json json = {{"op", "spawning"}, {"task", t.task}};
  if (t.may_run)
    json["may_run"] = true;
  // Whatever was read is written back: a rewrite changes nothing of it.
  json["started_ms"] = t.started_ms;
  json["exit_file"] = t.exit_file;
  json["log"] = t.log;
  json["grace_ms"] = t.grace_ms;
  if (t.deadline_ms)
    json["deadline_ms"] = *t.deadline_ms;
  return Dump(json);
}

std::string EndedLine(const std::string& task, const JournalExit* held) {
  Json json = {{"op", "ended"}, {"task", task}};
  if (held) {
    json["exit_file"] = held->exit_file;
    json["exit"] = held->record;
  }
  return Dump(json);
}

std::string ReapedLine(const ReapedRecord& record) {
  return Dump({{"op", "reaped"},
               {"pid", record.pid},
               {"start_ticks", record.start_ticks},
               {"status", record.status},
               {"ended_ms", record.ended_ms}});
}

// A "began" line without its pid and closing brace.
std::string BeganBeforePid(const std::string& task) {
  std::string line = Dump({{"op", "began"}, {"task", task}});
  line.resize(line.size() - 2);  // "}\n"
  return line + ",\"pid\":";
}

constexpr std::string_view kBeganAfterPid = "}\n";

std::string StartedLine(const JournalTask& t) {
  Json json = {{"op", "started"},
               {"task", t.task},
               {"pid", t.pid},
               {"start_ticks", t.start_ticks},
               {"started_ms", t.started_ms},
               {"exit_file", t.exit_file},
               {"log", t.log},
               {"grace_ms", t.grace_ms}};
  if (t.deadline_ms)
    json["deadline_ms"] = *t.deadline_ms;
  return Dump(json);
}

std::string StopLine(const JournalTask& t) {
  return Dump({{"op", "stop"},
               {"task", t.task},
               {"cause", ExitCauseName(t.cause)},
               {"stopped_ms", t.stopped_ms},
               {"grace_ms", t.stop_grace_ms}});
}

// The lines that bring a reader to what `task` is now.
std::string TaskLines(const JournalTask& task) {
  if (!task.started) {
    std::string lines = SpawningLine(task);
    if (task.pid > 0)
      lines += BeganBeforePid(task.task) + std::to_string(task.pid) +
               std::string(kBeganAfterPid);
    return lines;
  }
  std::string lines = StartedLine(task);
  if (task.cause != ExitCause::kNatural)
    lines += StopLine(task);
  return lines;
}

// Applies one journal line of a journal of `version` to `state`. Unknown or
// malformed lines are skipped: a journal is advice for recovery, never a
// reason to fail.
void Replay(const Json& json, int version, JournalState& state) {
  if (!json.is_object())
    return;
  auto number = [&](const char* key) -> std::optional<int64_t> {
    if (!MemberAt(json, key).is_number_integer())
      return std::nullopt;
    return IntAt(json, key);
  };
  // Start ticks are unsigned; a negative one was never written by a
  // supervisor, and cast it would become a number past what this reader
  // takes back after the rewrite (IntAt's range): read as unknown.
  auto ticks = [&]() -> std::optional<uint64_t> {
    auto value = number("start_ticks");
    if (!value || *value < 0)
      return std::nullopt;
    return static_cast<uint64_t>(*value);
  };
  std::string op = StringAt(json, "op");
  std::string task = StringAt(json, "task");
  if (op == "reaped") {
    auto pid = number("pid");
    auto start_ticks = ticks();
    auto status = number("status");
    if (pid && start_ticks && status) {
      state.reaped.push_back({*pid, *start_ticks, static_cast<int>(*status),
                              number("ended_ms").value_or(0)});
    }
    return;
  }
  if (op == "acked") {
    std::vector<std::string> acked;
    if (DecodeValue(MemberAt(json, "tasks"), acked, {}, "tasks")) {
      for (const std::string& task : acked)
        state.held.erase(task);
    }
    return;
  }
  if (task.empty())
    return;
  auto read_paths = [&](JournalTask& t) {
    t.task = task;
    t.started_ms = number("started_ms").value_or(0);
    t.exit_file = StringAt(json, "exit_file");
    t.log = StringAt(json, "log");
    t.deadline_ms = number("deadline_ms");
    t.grace_ms = number("grace_ms").value_or(5000);
  };
  if (op == "spawning") {
    // Before version 2 a spawn's child said nothing: the id may run.
    JournalTask spawning;
    read_paths(spawning);
    spawning.may_run = version < 2 || BoolAt(json, "may_run");
    if (spawning.may_run)
      state.known.Insert(task);
    state.open[task] = std::move(spawning);
  } else if (op == "began") {
    auto it = state.open.find(task);
    auto pid = number("pid");
    if (it != state.open.end() && !it->second.started && pid) {
      state.known.Insert(task);
      it->second.pid = *pid;
    }
  } else if (op == "started") {
    state.known.Insert(task);
    JournalTask& t = state.open[task];
    read_paths(t);
    t.started = true;
    t.pid = number("pid").value_or(0);
    t.start_ticks = ticks().value_or(0);
  } else if (op == "stop") {
    // Only a started task is stopped (Supervisor stops the tasks it runs);
    // a stop of one only being spawned is not kept by the rewrite either.
    auto it = state.open.find(task);
    auto cause = ParseExitCause(StringAt(json, "cause"));
    if (it != state.open.end() && it->second.started && cause) {
      it->second.cause = *cause;
      it->second.stopped_ms = number("stopped_ms").value_or(0);
      it->second.stop_grace_ms = number("grace_ms").value_or(0);
    }
  } else if (op == "ended") {
    state.known.Insert(task);
    state.open.erase(task);
    if (MemberAt(json, "exit").is_string()) {
      state.held[task] = {StringAt(json, "exit_file"), StringAt(json, "exit")};
    } else {
      state.held.erase(task);
    }
  }
}

// Calls `line` for each complete line of `text`; returns the length of
// what they cover (a last line without its newline was cut by a crash, or
// is still being written).
template <class F>
size_t ForEachLine(std::string_view text, F line) {
  size_t done = 0;
  for (size_t nl; (nl = text.find('\n', done)) != std::string_view::npos;
       done = nl + 1) {
    line(text.substr(done, nl - done));
  }
  return done;
}

// Opens the journal at `path` with `flags` and takes its flock, retrying
// when the path was renamed to a new file while we waited: the lock must be
// on the file that `path` names (journal.h). There is no cap on the tries:
// each retry means a rewriter renamed a file in, so it made progress, and
// a keeper that gave up would lose a task's end (flock is not fair; a
// supervisor compacting in a loop won it over 100 times in a row once).
UniqueFd LockJournalFile(const std::string& path, int flags) {
  for (;;) {
    UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC, 0600));
    if (!fd)
      return fd;
    int locked;
    while ((locked = ::flock(fd.get(), LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (locked != 0)
      return UniqueFd();
    struct stat held = {};
    struct stat named = {};
    if (::fstat(fd.get(), &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      return fd;
    }
  }
}

// What the file at `path` holds from `offset` on ("" if unreadable).
std::string ReadFrom(const std::string& path, uint64_t offset) {
  std::string text;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return text;
  char buf[65536];
  for (off_t at = static_cast<off_t>(offset);;) {
    ssize_t n = ::pread(fd.get(), buf, sizeof buf, at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return text;
}

bool IsReapedLine(std::string_view line) {
  return line.find("\"reaped\"") != std::string_view::npos;
}

}  // namespace

void TaskIdSet::Insert(const std::string& id) {
  auto parsed = TaskId::Parse(id);
  if (!parsed) {
    others_.insert(id);
    return;
  }
  auto& runs = runs_[std::string(TaskKindName(parsed->kind))];
  int64_t n = parsed->number;
  // The run that starts at or before n, if any.
  auto next = runs.upper_bound(n);
  if (next != runs.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= n)
      return;  // Already in.
    if (prev->second == n - 1) {
      prev->second = n;
      if (next != runs.end() && next->first == n + 1) {
        prev->second = next->second;
        runs.erase(next);
      }
      return;
    }
  }
  if (next != runs.end() && next->first == n + 1) {
    int64_t last = next->second;
    runs.erase(next);
    runs[n] = last;
    return;
  }
  runs[n] = n;
}

bool TaskIdSet::Contains(const std::string& id) const {
  auto parsed = TaskId::Parse(id);
  if (!parsed)
    return others_.contains(id);
  auto kind = runs_.find(std::string(TaskKindName(parsed->kind)));
  if (kind == runs_.end())
    return false;
  auto next = kind->second.upper_bound(parsed->number);
  if (next == kind->second.begin())
    return false;
  return std::prev(next)->second >= parsed->number;
}

Result<std::pair<std::unique_ptr<Journal>, JournalState>> Journal::Open(
    std::string path, std::string boot_id) {
  // Held until the rewrite is renamed in: a keeper's record appended
  // meanwhile would go to the file we replace.
  UniqueFd lock = LockJournalFile(path, O_RDWR | O_CREAT);
  if (!lock)
    return std::unexpected(ErrnoError("open " + path, errno));
  JournalState state;
  if (auto text = ReadFile(path)) {
    bool this_boot = false;
    bool first = true;
    int version = 0;
    ForEachLine(*text, [&](std::string_view line) {
      Json json = Json::parse(line, nullptr, false);
      if (first) {
        first = false;
        this_boot = json.is_object() && StringAt(json, "op") == "journal" &&
                    StringAt(json, "boot_id") == boot_id && !boot_id.empty();
        if (this_boot && MemberAt(json, "version").is_number_integer())
          version = static_cast<int>(IntAt(json, "version"));
        return;
      }
      if (this_boot)
        Replay(json, version, state);
    });
    // A spawn whose child never said "began" never ran: it is forgotten,
    // so that batond's spawn of it, sent again, runs it once.
    std::erase_if(state.open, [](const auto& entry) {
      const JournalTask& task = entry.second;
      return !task.started && task.pid == 0 && !task.may_run;
    });
  } else if (text.error().code != ErrorCode::kNotFound) {
    return std::unexpected(text.error());
  }
  std::unique_ptr<Journal> journal(
      new Journal(std::move(path), std::move(boot_id)));
  std::vector<JournalTask> open;
  for (const auto& [task, entry] : state.open)
    open.push_back(entry);
  {
    std::lock_guard hold(journal->mu_);
    journal->held_ = state.held;
    if (auto written = journal->Rewrite(open); !written)
      return std::unexpected(written.error());
  }
  return std::pair<std::unique_ptr<Journal>, JournalState>(std::move(journal),
                                                           std::move(state));
}

Status Journal::Rewrite(const std::vector<JournalTask>& open,
                        const std::string& carried) {
  std::string text = HeaderLine(boot_id_);
  std::set<std::string> written;
  for (const JournalTask& task : open) {
    text += TaskLines(task);
    written.insert(task.task);
  }
  for (const auto& [id, task] : unclaimed_) {
    if (!written.contains(id))
      text += TaskLines(task);
  }
  for (const auto& [id, held] : held_)
    text += EndedLine(id, &held);
  uint64_t unread = text.size();
  text += carried;
  if (auto saved = WriteFileAtomic(path_, text); !saved)
    return saved;
  fd_.reset(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd_)
    return std::unexpected(ErrnoError("open " + path_, errno));
  size_ = text.size();
  read_offset_ = unread;
  cut_ = false;  // A new file; lines still unwritten go on to it.
  return {};
}

uint64_t Journal::size() const {
  std::lock_guard hold(mu_);
  return size_;
}

void Journal::Append(const std::string& line) {
  std::lock_guard hold(mu_);
  if (!fd_)
    return;
  unwritten_ += line;
  WriteUnwritten();
}

bool Journal::WriteUnwritten() {
  while (!unwritten_.empty()) {
    // A line cut short by a failed write is ended first, so that it stays
    // one line a reader drops, not the head of the next one.
    if (cut_) {
      if (::write(fd_.get(), "\n", 1) != 1)
        return Unwritable(errno);
      cut_ = false;
      ++size_;
    }
    ssize_t n = ::write(fd_.get(), unwritten_.data(), unwritten_.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Unwritable(n < 0 ? errno : ENOSPC);
    // Only whole lines are done; the part of one that reached the file is
    // written again, whole, after its end.
    auto written = static_cast<size_t>(n);
    size_t whole = written;
    if (written < unwritten_.size()) {
      size_t newline = unwritten_.rfind('\n', written - 1);
      whole = newline == std::string::npos ? 0 : newline + 1;
      cut_ = whole < written;
    }
    size_ += written;
    unwritten_.erase(0, whole);
  }
  if (unwritable_) {
    unwritable_ = false;
    BATON_LOG_INFO("journal {}: written again, with the lines it kept", path_);
  }
  return true;
}

bool Journal::Unwritable(int err) {
  if (!unwritable_) {
    unwritable_ = true;
    BATON_LOG_ERROR(
        "journal {}: write: {}; its lines are kept in memory "
        "and written once the file takes them",
        path_, std::strerror(err));
  }
  return false;
}

bool Journal::HasUnwritten() const {
  std::lock_guard hold(mu_);
  return !unwritten_.empty();
}

bool Journal::Flush() {
  std::lock_guard hold(mu_);
  return !fd_ || WriteUnwritten();
}

Journal::SpawnSlot Journal::Spawning(const JournalTask& spawning) {
  SpawnSlot slot{std::shared_lock(file_mu_)};
  {
    std::lock_guard hold(mu_);
    unclaimed_[spawning.task] = spawning;
    slot.fd = fd_.get();
  }
  Append(SpawningLine(spawning));
  slot.began_before_pid = BeganBeforePid(spawning.task);
  slot.began_after_pid = kBeganAfterPid;
  {
    // A child's "began" may not come before the lines kept in memory:
    // then "started", kept after them, says it.
    std::lock_guard hold(mu_);
    if (!unwritten_.empty())
      slot.fd = -1;
  }
  return slot;
}

void Journal::Started(const JournalTask& task) {
  {
    std::lock_guard hold(mu_);
    unclaimed_[task.task] = task;
  }
  Append(StartedLine(task));
}

void Journal::Claim(const std::string& task) {
  std::lock_guard hold(mu_);
  unclaimed_.erase(task);
}

void Journal::Stopped(const JournalTask& task) {
  Append(StopLine(task));
}

void Journal::Reaped(const ReapedRecord& record) {
  {
    std::lock_guard hold(mu_);
    own_reaped_.insert(record.pid);
  }
  Append(ReapedLine(record));
}

void Journal::Ended(const std::string& task, const JournalExit* held) {
  {
    std::lock_guard hold(mu_);
    unclaimed_.erase(task);
    if (held)
      held_[task] = *held;
  }
  Append(EndedLine(task, held));
}

void Journal::Acked(const std::vector<std::string>& tasks) {
  Json acked = Json::array();
  {
    std::lock_guard hold(mu_);
    for (const std::string& task : tasks) {
      if (held_.erase(task) > 0)
        acked.push_back(task);
    }
  }
  if (!acked.empty())
    Append(Dump({{"op", "acked"}, {"tasks", acked}}));
}

std::vector<ReapedRecord> Journal::ReadReaped() {
  JournalState state;
  std::lock_guard hold(mu_);
  std::string text = ReadFrom(path_, read_offset_);
  read_offset_ += ForEachLine(text, [&](std::string_view line) {
    if (IsReapedLine(line))
      Replay(Json::parse(line, nullptr, false), kJournalVersion, state);
  });
  return state.reaped;
}

void Journal::Compact(const std::vector<JournalTask>& open) {
  std::unique_lock no_spawns(file_mu_);
  std::lock_guard hold(mu_);
  UniqueFd lock = LockJournalFile(path_, O_WRONLY | O_APPEND);
  if (!lock) {
    BATON_LOG_WARN("journal {}: not compacted: lock: {}", path_,
                   std::strerror(errno));
    return;
  }
  // Keepers' records this supervisor has not read yet (one may wait for
  // them) go on to the new file, to be read there. Its own records of
  // early exits only while their task is still open: once it ended nobody
  // looks for them, and carried at every compaction they grew the journal
  // until each spawn rewrote it (50,000 of them: ~20 spawns/s).
  std::set<int64_t> needed;
  for (const JournalTask& task : open)
    needed.insert(task.pid);
  for (const auto& [id, task] : unclaimed_)
    needed.insert(task.pid);
  std::string carried;
  ForEachLine(ReadFrom(path_, read_offset_), [&](std::string_view line) {
    if (!IsReapedLine(line))
      return;
    int64_t pid = IntAt(Json::parse(line, nullptr, false), "pid");
    if (own_reaped_.contains(pid) && !needed.contains(pid))
      return;
    carried += line;
    carried += '\n';
  });
  std::erase_if(own_reaped_,
                [&](int64_t pid) { return !needed.contains(pid); });
  if (auto written = Rewrite(open, carried); !written) {
    BATON_LOG_WARN("journal {}: compaction failed: {}", path_,
                   written.error().message);
  }
}

bool AppendReapedRecord(const std::string& path, const ReapedRecord& record) {
  UniqueFd fd = LockJournalFile(path, O_WRONLY | O_APPEND);
  if (!fd)
    return false;
  return static_cast<bool>(WriteAll(fd.get(), ReapedLine(record)));
}

}  // namespace baton
