#include "baton/util/cgroups.h"

#include <unistd.h>

#include <algorithm>

#include "baton/util/file_util.h"
#include "baton/util/split.h"

namespace baton {

std::map<std::string, std::string> CgroupsOf(const std::string& proc_cgroup) {
  std::map<std::string, std::string> own;
  auto text = ReadFile(proc_cgroup);
  if (!text)
    return own;
  for (std::string_view line : Split(*text, '\n')) {
    size_t first = line.find(':');
    size_t second =
        first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos)
      continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string path(line.substr(second + 1));
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      own[""] = path;
      continue;
    }
    for (std::string_view controller : Split(controllers, ','))
      own[std::string(controller)] = path;
  }
  return own;
}

std::map<std::string, CgroupMount> CgroupMounts() {
  std::map<std::string, CgroupMount> mounts;
  auto text = ReadFile("/proc/self/mountinfo");
  if (!text)
    return mounts;
  for (std::string_view line : Split(*text, '\n')) {
    // id parent major:minor root point options [optional...] - type source
    // super-options
    size_t dash = line.find(" - ");
    if (dash == std::string::npos)
      continue;
    std::vector<std::string_view> before = Split(line.substr(0, dash), ' ');
    std::vector<std::string_view> after = Split(line.substr(dash + 3), ' ');
    if (before.size() < 5 || after.size() < 3)
      continue;
    CgroupMount mount{std::string(before[4]), std::string(before[3])};
    if (after[0] == "cgroup2") {
      mounts.try_emplace("", mount);
    } else if (after[0] == "cgroup") {
      for (std::string_view option : Split(after[2], ','))
        mounts.try_emplace(std::string(option), mount);
    }
  }
  return mounts;
}

std::string CgroupDir(const CgroupMount& mount, const std::string& path) {
  std::string relative = path;
  if (mount.root != "/") {
    if (!path.starts_with(mount.root))
      return "";
    relative = path.substr(mount.root.size());
  }
  if (relative == "/")
    relative.clear();
  return mount.point + relative;
}

std::vector<std::string> OfferedControllers(const std::string& dir) {
  // "cpuset cpu io memory pids\n": whole words ("cpu" is not "cpuset").
  std::string offered = ReadFile(dir + "/cgroup.controllers").value_or("");
  std::vector<std::string> words;
  for (std::string_view word : Split(offered, ' ')) {
    while (!word.empty() && (word.back() == '\n' || word.back() == ' '))
      word.remove_suffix(1);
    if (!word.empty())
      words.emplace_back(word);
  }
  return words;
}

std::vector<LimitMechanism> ForecastLimits(std::string_view forced) {
  std::vector<LimitMechanism> found = {
      {"memory", "", ""}, {"cpus", "", ""}, {"pids", "", ""}};
  auto controller_of = [](const LimitMechanism& m) {
    return m.limit == "cpus" ? std::string("cpu") : m.limit;
  };
  if (forced != "rlimit") {
    std::map<std::string, std::string> own = CgroupsOf();
    std::map<std::string, CgroupMount> mounts = CgroupMounts();
    if (own.contains("") && mounts.contains("")) {
      std::string dir = CgroupDir(mounts[""], own[""]);
      std::vector<std::string> offered = OfferedControllers(dir);
      bool writable =
          !dir.empty() && ::access(dir.c_str(), W_OK) == 0 &&
          ::access((dir + "/cgroup.subtree_control").c_str(), W_OK) == 0;
      for (LimitMechanism& m : found) {
        if (writable && std::find(offered.begin(), offered.end(),
                                  controller_of(m)) != offered.end()) {
          m.how = "cgroup v2";
          m.dir = dir;
        }
      }
    }
    for (LimitMechanism& m : found) {
      std::string controller = controller_of(m);
      if (!m.how.empty() || !own.contains(controller) ||
          !mounts.contains(controller)) {
        continue;
      }
      std::string dir = CgroupDir(mounts[controller], own[controller]);
      if (!dir.empty() && ::access(dir.c_str(), W_OK) == 0 &&
          ::access((dir + "/cgroup.procs").c_str(), F_OK) == 0) {
        m.how = "cgroup v1";
        m.dir = dir;
      }
    }
  }
  if (found[0].how.empty())
    found[0].how = "rlimit";
  return found;
}

}  // namespace baton
