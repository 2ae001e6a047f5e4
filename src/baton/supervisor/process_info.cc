#include "baton/supervisor/process_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "baton/util/clock.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

template <class T>
bool ParseNumber(std::string_view text, T* out) {
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  size_t close = text.rfind(')');
  if (close == std::string_view::npos)
    return std::nullopt;
  // Fields 3 onwards, space-separated: state ppid pgrp session tty_nr
  // tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  // priority nice num_threads itrealvalue starttime ...
  std::vector<std::string_view> fields;
  std::string_view rest = text.substr(close + 1);
  while (fields.size() < 20) {
    size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos)
      break;
    rest.remove_prefix(start);
    size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos)
      break;
    rest.remove_prefix(end);
  }
  if (fields.size() < 20 || fields[0].size() != 1)
    return std::nullopt;
  ProcStat stat;
  stat.state = fields[0][0];
  if (!ParseNumber(fields[1], &stat.ppid) ||
      !ParseNumber(fields[2], &stat.pgrp) ||
      !ParseNumber(fields[3], &stat.session) ||
      !ParseNumber(fields[19], &stat.start_ticks)) {
    return std::nullopt;
  }
  return stat;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  // Read on the supervisor's loop once per task: one open, one read into
  // the stack (the file is a few hundred bytes), no allocation.
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd)
    return std::nullopt;
  char buf[1024];
  ssize_t n;
  do {
    n = ::read(fd.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n <= 0)
    return std::nullopt;
  return ParseProcStat(std::string_view(buf, static_cast<size_t>(n)));
}

std::vector<pid_t> GroupMembers(pid_t pgid) {
  std::vector<pid_t> members;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), ::closedir);
  if (!proc)
    return members;
  while (dirent* entry = ::readdir(proc.get())) {
    pid_t pid = 0;
    if (!ParseNumber(std::string_view(entry->d_name), &pid) || pid <= 0)
      continue;
    auto stat = ReadProcStat(pid);
    if (stat && stat->pgrp == pgid)
      members.push_back(pid);
  }
  return members;
}

bool GroupExists(pid_t pgid) {
  return pgid > 0 && (::kill(-pgid, 0) == 0 || errno == EPERM);
}

std::optional<FoundProcess> FindTaskLeader(std::string_view marker,
                                           int64_t not_before_ms) {
  if (marker.empty())
    return std::nullopt;
  long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  timespec boot{};
  if (ticks_per_second <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    return std::nullopt;
  int64_t boot_ms = boot.tv_sec * 1000 + boot.tv_nsec / 1000000;
  // The tick at which not_before_ms was, less one tick of rounding.
  int64_t ago_ms = WallMillis() - not_before_ms;
  int64_t first_tick = (boot_ms - ago_ms) * ticks_per_second / 1000 - 1;
  std::string entry = std::string(marker) + '\0';
  std::optional<FoundProcess> found;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), ::closedir);
  if (!proc)
    return std::nullopt;
  while (dirent* dir = ::readdir(proc.get())) {
    pid_t pid = 0;
    if (!ParseNumber(std::string_view(dir->d_name), &pid) || pid <= 0)
      continue;
    auto stat = ReadProcStat(pid);
    if (!stat || stat->session != pid ||
        static_cast<int64_t>(stat->start_ticks) < first_tick ||
        (found && found->start_ticks <= stat->start_ticks)) {
      continue;
    }
    auto environ = ReadFile("/proc/" + std::to_string(pid) + "/environ");
    if (!environ)
      continue;
    std::string_view env = *environ;
    if (env.starts_with(entry) || env.find('\0' + entry) != std::string::npos)
      found = FoundProcess{pid, stat->start_ticks};
  }
  return found;
}

std::string BootId() {
  auto text = ReadFile("/proc/sys/kernel/random/boot_id");
  if (!text)
    return "";
  while (!text->empty() && (text->back() == '\n' || text->back() == ' '))
    text->pop_back();
  return *text;
}

int OpenPidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

}  // namespace baton
