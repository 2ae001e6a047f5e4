#include "baton/util/environment.h"

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

}  // namespace baton
