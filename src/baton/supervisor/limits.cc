#include "baton/supervisor/limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <sstream>

#include "baton/util/cgroups.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"
#include "baton/util/split.h"

namespace baton {
namespace {

// The CFS period a CPU share is written against: 100 ms, the kernel's own
// default, so that a 1.5-CPU task gets 150 ms of CPU time every 100 ms.
constexpr int64_t kCpuPeriodUs = 100000;

// Writes `value` into a cgroup file, as one write (the kernel takes a
// cgroup file's value from a single write).
Status WriteCgroupFile(const std::string& path, std::string_view value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return std::unexpected(ErrnoError("open " + path, errno));
  ssize_t wrote = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (wrote != static_cast<ssize_t>(value.size())) {
    return std::unexpected(ErrnoError(
        fmt::format("write \"{}\" to {}", value, path), wrote < 0 ? err : EIO));
  }
  return {};
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The value after `key` in a "key value" file (memory.events,
// memory.oom_control); 0 when absent.
int64_t KeyedValue(const std::string& path, std::string_view key) {
  auto text = ReadFile(path);
  if (!text)
    return 0;
  std::istringstream lines(*text);
  std::string name;
  int64_t value = 0;
  while (lines >> name >> value) {
    if (name == key)
      return value;
  }
  return 0;
}

// Enables `controller` for the children of `dir` (cgroup v2).
Status EnableForChildren(const std::string& dir, std::string_view controller) {
  return WriteCgroupFile(dir + "/cgroup.subtree_control",
                         fmt::format("+{}", controller));
}

std::vector<pid_t> ReadProcs(const std::string& dir) {
  std::vector<pid_t> pids;
  auto text = ReadFile(dir + "/cgroup.procs");
  if (!text)
    return pids;
  for (std::string_view line : Split(*text, '\n')) {
    pid_t pid = 0;
    auto [end, error] =
        std::from_chars(line.data(), line.data() + line.size(), pid);
    if (error == std::errc() && pid > 0)
      pids.push_back(pid);
  }
  return pids;
}

}  // namespace

std::vector<pid_t> TaskCgroup::Members() const {
  std::vector<pid_t> members;
  for (const std::string& dir : dirs_) {
    for (pid_t pid : ReadProcs(dir)) {
      if (std::find(members.begin(), members.end(), pid) == members.end())
        members.push_back(pid);
    }
  }
  return members;
}

int TaskCgroup::Signal(int signal) const {
  std::vector<pid_t> members = Members();
  for (pid_t pid : members)
    ::kill(pid, signal);
  return static_cast<int>(members.size());
}

bool TaskCgroup::OomKilled() const {
  if (memory_dir_.empty())
    return false;
  return memory_v2_
             ? KeyedValue(memory_dir_ + "/memory.events", "oom_kill") > 0
             : KeyedValue(memory_dir_ + "/memory.oom_control", "oom_kill") > 0;
}

bool TaskCgroup::Remove() const {
  bool removed = true;
  for (const std::string& dir : dirs_) {
    if (::rmdir(dir.c_str()) != 0 && errno != ENOENT)
      removed = false;
  }
  return removed;
}

LimitHolder LimitHolder::Probe(std::string_view tag, std::string_view forced) {
  LimitHolder holder;
  if (forced == "rlimit")
    return holder;
  // The reading is shared with `baton doctor`'s forecast (util/cgroups.h).
  std::map<std::string, std::string> own = CgroupsOf();
  std::map<std::string, CgroupMount> mounts = CgroupMounts();
  std::string folder = fmt::format("baton-{}", tag);
  // cgroup v2: this baton's folder under our own cgroup, with the
  // controllers enabled for its children. Our own cgroup may enable them
  // only while no process is in it (the kernel's "no internal processes"
  // rule): if it has some, this process moves into a folder of its own
  // first, which is enough when it is alone (a delegated service).
  if (own.contains("") && mounts.contains("")) {
    std::string dir = CgroupDir(mounts[""], own[""]);
    std::vector<std::string> words = OfferedControllers(dir);
    std::vector<std::string> wanted;
    for (const char* controller : {"memory", "cpu", "pids"}) {
      if (std::find(words.begin(), words.end(), controller) != words.end())
        wanted.push_back(controller);
    }
    if (!dir.empty() && !wanted.empty()) {
      Status enabled = EnableForChildren(dir, wanted[0]);
      if (!enabled && enabled.error().sys_errno == EBUSY) {
        std::string alone = fmt::format("{}/baton-supervisor-{}", dir, tag);
        if (MakeDir(alone) && WriteCgroupFile(alone + "/cgroup.procs", "0")) {
          enabled = EnableForChildren(dir, wanted[0]);
        }
      }
      std::string base = dir + "/" + folder;
      if (enabled && MakeDir(base)) {
        for (const std::string& controller : wanted) {
          if (!EnableForChildren(dir, controller) ||
              !EnableForChildren(base, controller)) {
            continue;
          }
          Place place{base, true};
          if (controller == "memory")
            holder.memory_ = place;
          else if (controller == "cpu")
            holder.cpu_ = place;
          else
            holder.pids_ = place;
        }
      }
    }
  }
  // cgroup v1: each controller's own hierarchy, where we may write.
  for (auto [controller, place] :
       {std::pair("memory", &holder.memory_), std::pair("cpu", &holder.cpu_),
        std::pair("pids", &holder.pids_)}) {
    if (!place->dir.empty() || !own.contains(controller) ||
        !mounts.contains(controller)) {
      continue;
    }
    std::string dir = CgroupDir(mounts[controller], own[controller]);
    if (dir.empty())
      continue;
    // Made by the first task that needs it (Prepare), so that a baton that
    // never limits a task leaves no folder in the hierarchy.
    if (::access(dir.c_str(), W_OK) == 0 && Exists(dir + "/cgroup.procs"))
      *place = {dir + "/" + folder, false};
  }
  return holder;
}

Result<LimitPlan> LimitHolder::Prepare(const std::string& run,
                                       const ResourceLimits& limits) const {
  LimitPlan plan;
  std::vector<std::string> dirs;  // The task's, one per distinct place.
  std::string memory_dir;
  std::map<std::string, std::vector<std::string>> held;  // By mechanism.
  std::vector<std::string> not_held;
  // The task's folder in `place`, made once.
  auto task_dir = [&](const Place& place) -> Result<std::string> {
    std::string dir = place.dir + "/" + run;
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
      Status made = MakeDir(place.dir);
      if (made)
        made = MakeDir(dir);
      if (!made)
        return std::unexpected(made.error());
      dirs.push_back(dir);
      plan.join.push_back(dir + "/cgroup.procs");
    }
    return dir;
  };
  auto name_held = [&](const Place& place, const char* limit) {
    held[place.v2 ? "cgroup v2" : "cgroup v1"].push_back(limit);
  };
  if (limits.memory_bytes > 0) {
    if (!memory_.dir.empty()) {
      auto dir = task_dir(memory_);
      if (!dir)
        return std::unexpected(dir.error());
      std::string bytes = fmt::format("{}", limits.memory_bytes);
      if (memory_.v2) {
        if (auto set = WriteCgroupFile(*dir + "/memory.max", bytes); !set)
          return std::unexpected(set.error());
        // No swapping past the limit, and an OOM kill takes the whole task,
        // not one process of it. Both are best effort (no swap accounting,
        // an older kernel).
        (void)WriteCgroupFile(*dir + "/memory.swap.max", "0");
        (void)WriteCgroupFile(*dir + "/memory.oom.group", "1");
      } else {
        if (auto set = WriteCgroupFile(*dir + "/memory.limit_in_bytes", bytes);
            !set) {
          return std::unexpected(set.error());
        }
        (void)WriteCgroupFile(*dir + "/memory.memsw.limit_in_bytes", bytes);
      }
      memory_dir = *dir;
      name_held(memory_, "memory");
    } else {
      plan.rlimits.emplace_back(RLIMIT_AS,
                                static_cast<rlim_t>(limits.memory_bytes));
      held["rlimit"].push_back("memory (address space)");
    }
  }
  if (limits.cpu_millis > 0) {
    if (!cpu_.dir.empty()) {
      auto dir = task_dir(cpu_);
      if (!dir)
        return std::unexpected(dir.error());
      int64_t quota = limits.cpu_millis * kCpuPeriodUs / 1000;
      Status set;
      if (cpu_.v2) {
        set = WriteCgroupFile(*dir + "/cpu.max",
                              fmt::format("{} {}", quota, kCpuPeriodUs));
      } else {
        set = WriteCgroupFile(*dir + "/cpu.cfs_period_us",
                              fmt::format("{}", kCpuPeriodUs));
        if (set) {
          set = WriteCgroupFile(*dir + "/cpu.cfs_quota_us",
                                fmt::format("{}", quota));
        }
      }
      if (!set)
        return std::unexpected(set.error());
      name_held(cpu_, "cpus");
    } else {
      not_held.push_back("cpus");
    }
  }
  if (limits.pids > 0) {
    if (!pids_.dir.empty()) {
      auto dir = task_dir(pids_);
      if (!dir)
        return std::unexpected(dir.error());
      if (auto set = WriteCgroupFile(*dir + "/pids.max",
                                     fmt::format("{}", limits.pids));
          !set) {
        return std::unexpected(set.error());
      }
      name_held(pids_, "pids");
    } else {
      not_held.push_back("pids");
    }
  }
  if (!dirs.empty())
    plan.cgroup = std::make_shared<TaskCgroup>(dirs, memory_dir, memory_.v2);
  std::vector<std::string> parts;
  for (const auto& [mechanism, names] : held) {
    parts.push_back(fmt::format("{}: {}", mechanism, fmt::join(names, ", ")));
  }
  if (!not_held.empty()) {
    parts.push_back(
        fmt::format("not held (no cgroup): {}", fmt::join(not_held, ", ")));
  }
  plan.held_by = fmt::format("{}", fmt::join(parts, "; "));
  return plan;
}

std::shared_ptr<TaskCgroup> LimitHolder::Find(const std::string& run) const {
  std::vector<std::string> dirs;
  std::string memory_dir;
  for (const Place* place : {&memory_, &cpu_, &pids_}) {
    if (place->dir.empty())
      continue;
    std::string dir = place->dir + "/" + run;
    if (!Exists(dir) || std::find(dirs.begin(), dirs.end(), dir) != dirs.end())
      continue;
    dirs.push_back(dir);
    if (place == &memory_)
      memory_dir = dir;
  }
  if (dirs.empty())
    return nullptr;
  return std::make_shared<TaskCgroup>(dirs, memory_dir, memory_.v2);
}

void LimitHolder::RemoveStale(const std::set<std::string>& live) const {
  std::set<std::string> bases;
  for (const Place* place : {&memory_, &cpu_, &pids_}) {
    if (!place->dir.empty())
      bases.insert(place->dir);
  }
  for (const std::string& base : bases) {
    DIR* listing = ::opendir(base.c_str());
    if (!listing)
      continue;
    std::vector<std::string> stale;
    while (dirent* entry = ::readdir(listing)) {
      std::string name = entry->d_name;
      if (entry->d_type == DT_DIR && name != "." && name != ".." &&
          !live.contains(name)) {
        stale.push_back(base + "/" + name);
      }
    }
    ::closedir(listing);
    for (const std::string& dir : stale) {
      // A folder with processes in it stays (rmdir refuses it).
      if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
        BATON_LOG_WARN("stale cgroup {} is not empty: {}", dir,
                       std::strerror(errno));
      }
    }
  }
}

void LimitHolder::RemoveFolders() const {
  for (const Place* place : {&memory_, &cpu_, &pids_}) {
    // One with a task's folder in it stays (rmdir refuses it).
    if (!place->dir.empty())
      ::rmdir(place->dir.c_str());
  }
}

std::string LimitHolder::Describe() const {
  std::vector<std::string> parts;
  for (auto [name, place] :
       {std::pair("memory", &memory_), std::pair("cpus", &cpu_),
        std::pair("pids", &pids_)}) {
    if (place->dir.empty()) {
      parts.push_back(fmt::format("{} by {}", name,
                                  place == &memory_ ? "rlimit" : "nothing"));
    } else {
      parts.push_back(fmt::format("{} by cgroup {} ({})", name,
                                  place->v2 ? "v2" : "v1", place->dir));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace baton
