// Finding a program as execvp would, but on a given environment's PATH
// rather than the caller's: the supervisor resolves a task's argv[0] on the
// task's PATH, and batond resolves an agent CLI the same way before it
// probes it (daemon/app_server_probe.h).
#ifndef BATON_UTIL_PROGRAM_PATH_H_
#define BATON_UTIL_PROGRAM_PATH_H_

#include <expected>
#include <string>
#include <vector>

namespace baton {

// `program` itself when it holds a '/'; else the first executable regular
// file named `program` in the PATH of `env` ("NAME=value" entries; without
// a PATH: /usr/local/bin:/usr/bin:/bin), relative entries taken from `cwd`.
// Returns an errno value on failure: ENOENT, or EACCES when a match was not
// executable.
std::expected<std::string, int> ResolveProgram(
    const std::string& program, const std::vector<std::string>& env,
    const std::string& cwd);

}  // namespace baton

#endif  // BATON_UTIL_PROGRAM_PATH_H_
