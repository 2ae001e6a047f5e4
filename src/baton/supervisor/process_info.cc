#include "baton/supervisor/process_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
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

int WaitStatusOf(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED)
    return (info.si_status & 0xff) << 8;
  return (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
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

std::optional<int64_t> StartedAtWallMillis(uint64_t start_ticks) {
  long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  timespec boot{};
  if (ticks_per_second <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    return std::nullopt;
  int64_t since_boot_ms = boot.tv_sec * 1000 + boot.tv_nsec / 1000000;
  int64_t started_ms =
      static_cast<int64_t>(start_ticks) * 1000 / ticks_per_second;
  return WallMillis() - (since_boot_ms - started_ms);
}

std::vector<pid_t> ChildrenOfMainThread() {
  std::vector<pid_t> children;
  pid_t self = ::getpid();
  auto text = ReadFile(fmt::format("/proc/{}/task/{}/children", self, self));
  if (!text)
    return children;
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    pid_t pid = 0;
    if (ParseNumber(rest.substr(0, space), &pid) && pid > 0)
      children.push_back(pid);
    if (space == std::string_view::npos)
      break;
    rest.remove_prefix(space + 1);
  }
  return children;
}

bool EnvironmentHas(pid_t pid, std::string_view entry) {
  auto environ = ReadFile("/proc/" + std::to_string(pid) + "/environ");
  if (!environ || entry.empty())
    return false;
  std::string_view text = *environ;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos)
      end = text.size();
    if (text.substr(start, end - start) == entry)
      return true;
    start = end + 1;
  }
  return false;
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
