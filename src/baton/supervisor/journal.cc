#include "baton/supervisor/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "baton/supervisor/protocol.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using Json = nlohmann::json;

constexpr int kJournalVersion = 1;

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string HeaderLine(const std::string& boot_id) {
  return Dump(
      {{"op", "journal"}, {"version", kJournalVersion}, {"boot_id", boot_id}});
}

std::string SpawningLine(const std::string& task) {
  return Dump({{"op", "spawning"}, {"task", task}});
}

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
  if (!task.started)
    return SpawningLine(task.task);
  std::string lines = StartedLine(task);
  if (task.cause != ExitCause::kNatural)
    lines += StopLine(task);
  return lines;
}

// Applies one journal line to `state`. Unknown or malformed lines are
// skipped: a journal is advice for recovery, never a reason to fail.
void Replay(const Json& json, JournalState& state) {
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
  if (task.empty())
    return;
  if (op == "spawning") {
    state.known.Insert(task);
    JournalTask spawning;
    spawning.task = task;
    state.open[task] = std::move(spawning);
  } else if (op == "started") {
    state.known.Insert(task);
    JournalTask& t = state.open[task];
    t.task = task;
    t.started = true;
    t.pid = number("pid").value_or(0);
    t.start_ticks = ticks().value_or(0);
    t.started_ms = number("started_ms").value_or(0);
    t.exit_file = StringAt(json, "exit_file");
    t.log = StringAt(json, "log");
    t.deadline_ms = number("deadline_ms");
    t.grace_ms = number("grace_ms").value_or(5000);
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

Result<std::pair<Journal, JournalState>> Journal::Open(std::string path,
                                                       std::string boot_id) {
  JournalState state;
  if (auto text = ReadFile(path)) {
    bool this_boot = false;
    bool first = true;
    ForEachLine(*text, [&](std::string_view line) {
      Json json = Json::parse(line, nullptr, false);
      if (first) {
        first = false;
        this_boot = json.is_object() && StringAt(json, "op") == "journal" &&
                    StringAt(json, "boot_id") == boot_id && !boot_id.empty();
        return;
      }
      if (this_boot)
        Replay(json, state);
    });
  } else if (text.error().code != ErrorCode::kNotFound) {
    return std::unexpected(text.error());
  }
  Journal journal(std::move(path), std::move(boot_id));
  std::vector<JournalTask> open;
  for (const auto& [task, entry] : state.open)
    open.push_back(entry);
  if (auto written = journal.Rewrite(open); !written)
    return std::unexpected(written.error());
  return std::pair<Journal, JournalState>(std::move(journal), std::move(state));
}

Status Journal::Rewrite(const std::vector<JournalTask>& open) {
  std::string text = HeaderLine(boot_id_);
  for (const JournalTask& task : open)
    text += TaskLines(task);
  if (auto written = WriteFileAtomic(path_, text); !written)
    return written;
  fd_.reset(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd_)
    return std::unexpected(ErrnoError("open " + path_, errno));
  size_ = text.size();
  read_offset_ = size_;
  return {};
}

void Journal::Append(const std::string& line) {
  if (!fd_)
    return;
  if (auto written = WriteAll(fd_.get(), line); !written) {
    BATON_LOG_WARN("journal {}: {}", path_, written.error().message);
    return;
  }
  size_ += line.size();
}

void Journal::Spawning(const std::string& task) {
  Append(SpawningLine(task));
}

void Journal::Started(const JournalTask& task) {
  Append(StartedLine(task));
}

void Journal::Stopped(const JournalTask& task) {
  Append(StopLine(task));
}

void Journal::Ended(const std::string& task) {
  Append(Dump({{"op", "ended"}, {"task", task}}));
}

std::vector<ReapedRecord> Journal::ReadReaped() {
  JournalState state;
  UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return {};
  std::string text;
  char buf[65536];
  for (off_t at = static_cast<off_t>(read_offset_);;) {
    ssize_t n = ::pread(fd.get(), buf, sizeof buf, at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  read_offset_ += ForEachLine(text, [&](std::string_view line) {
    if (line.find("\"reaped\"") != std::string_view::npos)
      Replay(Json::parse(line, nullptr, false), state);
  });
  return state.reaped;
}

void Journal::Compact(const std::vector<JournalTask>& open) {
  if (auto written = Rewrite(open); !written) {
    BATON_LOG_WARN("journal {}: compaction failed: {}", path_,
                   written.error().message);
  }
}

bool AppendReapedRecord(const std::string& path, const ReapedRecord& record) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd)
    return false;
  std::string line = Dump({{"op", "reaped"},
                           {"pid", record.pid},
                           {"start_ticks", record.start_ticks},
                           {"status", record.status},
                           {"ended_ms", record.ended_ms}});
  return static_cast<bool>(WriteAll(fd.get(), line));
}

}  // namespace baton
