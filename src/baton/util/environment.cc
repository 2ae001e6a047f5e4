#include "baton/util/environment.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

extern char** environ;

namespace baton {
namespace {

std::string_view Name(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

}  // namespace

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry)
    env.emplace_back(*entry);
  return env;
}

std::vector<std::string> SetEnvironmentEntries(
    const std::vector<std::string>& base,
    const std::vector<std::string>& entries) {
  std::vector<std::string> env;
  env.reserve(base.size() + entries.size());
  for (const std::string& entry : base) {
    bool replaced = std::ranges::any_of(entries, [&](const std::string& set) {
      return Name(set) == Name(entry);
    });
    if (!replaced)
      env.push_back(entry);
  }
  env.insert(env.end(), entries.begin(), entries.end());
  return env;
}

std::vector<std::string> CleanEnvironment() {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "LANG=C.UTF-8"};
  passwd entry{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &entry, buf, sizeof buf, &found) == 0 &&
      found != nullptr) {
    env.push_back(std::string("HOME=") + found->pw_dir);
    env.push_back(std::string("USER=") + found->pw_name);
    env.push_back(std::string("LOGNAME=") + found->pw_name);
    env.push_back(std::string("SHELL=") + (found->pw_shell && *found->pw_shell
                                               ? found->pw_shell
                                               : "/bin/sh"));
  }
  return env;
}

}  // namespace baton
