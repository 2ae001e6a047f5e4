#include "baton/daemon/preflight.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace baton {
namespace {

// The PATH the task will see: an override, the client's, or ours; the
// fallback where the environment it gets has none, as the spawn's search.
std::string TaskPath(const TaskSpec& spec) {
  if (auto it = spec.env_overrides.find("PATH");
      it != spec.env_overrides.end()) {
    return it->second;
  }
  for (const auto& entry : spec.base_env) {
    if (entry.starts_with("PATH="))
      return entry.substr(5);
  }
  if (!spec.base_env.empty())
    return kFallbackPath;
  const char* path = std::getenv("PATH");
  return path ? path : kFallbackPath;
}

}  // namespace

Status PreflightTask(const TaskSpec& spec, ProgramCache* cache) {
  struct stat st {};
  if (::stat(spec.cwd.c_str(), &st) != 0) {
    int err = errno;
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("working directory {} cannot be used ({}); "
                                 "give an existing directory as cwd",
                                 spec.cwd, std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("working directory {} is not a directory; "
                                 "give a directory as cwd",
                                 spec.cwd));
  }
  if (::access(spec.cwd.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("cannot enter working directory {} "
                                 "(permission denied); choose another cwd",
                                 spec.cwd));
  }
  if (spec.shell_command)
    return {};
  const std::string& program = spec.argv[0];
  if (program.find('/') != std::string::npos) {
    std::string full = program[0] == '/' ? program : spec.cwd + "/" + program;
    if (!IsExecutableFile(full)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{} is not an executable file; check the "
                                   "path",
                                   full));
    }
    return {};
  }
  if (ResolveProgram(program, {"PATH=" + TaskPath(spec)}, spec.cwd, cache))
    return {};
  if (spec.agent) {
    // A delegate names an agent, not a command line: say which agent's CLI
    // is missing, on every front end alike.
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("agent {}: its CLI `{}` is not installed (not found on "
                    "PATH); install it, or name another agent (CLI: baton "
                    "agents lists them)",
                    spec.agent->profile, program));
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("command not found: {} (searched PATH); check "
                               "the name, give a full path, or run a shell "
                               "line as one argument: baton run -- '{} ...'",
                               program, program));
}

}  // namespace baton
