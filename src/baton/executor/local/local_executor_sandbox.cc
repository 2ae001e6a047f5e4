// LocalExecutor's part in a task's sandbox (doc/sandbox.md): what of this
// machine the sandbox's command line needs (the task's HOME, what to hide
// that exists), found here; the command line itself is core/sandbox.h's.
#include <fmt/format.h>
#include <sys/stat.h>

#include "baton/executor/local/local_executor.h"

namespace baton {

Result<std::vector<std::string>> LocalExecutor::SandboxedArgv(
    const TaskRecord& task, const std::vector<std::string>& env) const {
  const TaskSpec& spec = task.spec;
  if (bwrap_.empty()) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("sandbox {}: bubblewrap (bwrap) is not "
                                 "installed here (apt install bubblewrap)",
                                 spec.sandbox->name));
  }
  SandboxSite site{.bwrap = bwrap_,
                   .folder = spec.cwd.empty() ? "/" : spec.cwd,
                   .baton_home = paths_.home,
                   .baton_runtime = paths_.runtime};
  for (const std::string& entry : env) {
    if (entry.starts_with("HOME="))
      site.home = entry.substr(5);
  }
  // A worktree task's folder may be a folder inside it: the whole worktree
  // is its own; its commits go to its repository's object store.
  if (spec.agent && spec.agent->worktree &&
      !spec.agent->worktree->path.empty()) {
    site.also_writable.push_back(spec.agent->worktree->path);
    site.also_writable.push_back(spec.agent->worktree->repo + "/.git");
  }
  // A handful of lstat calls in the task's home, on the loop as the other
  // file work of a start here (its folder, its stdin).
  for (std::string& path : SandboxHiddenCandidates(*spec.sandbox, site)) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0)
      continue;
    bool folder = S_ISDIR(st.st_mode);
    site.hidden.push_back({std::move(path), folder});
  }
  return SandboxArgv(*spec.sandbox, site);
}

}  // namespace baton
