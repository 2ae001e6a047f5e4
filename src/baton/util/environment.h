// Environments as lists of "NAME=value" entries, the form tasks, spawn
// requests and clients' requests carry them in.
#ifndef BATON_UTIL_ENVIRONMENT_H_
#define BATON_UTIL_ENVIRONMENT_H_

#include <string>
#include <vector>

namespace baton {

// This process's environment (environ).
std::vector<std::string> ProcessEnvironment();

// `base` with `entries` set over it: each entry replaces the base's entry of
// the same name, which leaves its place; the entries come last, in order.
std::vector<std::string> SetEnvironmentEntries(
    const std::vector<std::string>& base,
    const std::vector<std::string>& entries);

// The environment of a task whose client sent none (a raw socket client):
// PATH (the fallback PATH), HOME, USER, LOGNAME and SHELL from the user's
// passwd entry, LANG=C.UTF-8. Never batond's own environment, which is
// whatever client first started batond (doc/protocol.md, "Environment").
std::vector<std::string> CleanEnvironment();

}  // namespace baton

#endif  // BATON_UTIL_ENVIRONMENT_H_
