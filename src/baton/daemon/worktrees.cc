#include "baton/daemon/worktrees.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "baton/util/file_util.h"
#include "baton/util/git.h"

namespace baton {
namespace {

// The lines of `text`, without empty ones.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      nl = text.size();
    if (nl > start)
      lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

}  // namespace

Status MakeWorktree(const std::string& root,
                    const std::vector<std::string>& env, TaskRecord& task) {
  const std::string& cwd = task.spec.cwd;
  auto where =
      RunGit(cwd, {"rev-parse", "--show-toplevel", "--show-prefix"}, env);
  if (!where)
    return MakeError(where.error().code, "worktree: " + where.error().message);
  if (!where->ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("worktree: {} is not in a git repository "
                                 "({}); start it without a worktree, or in a "
                                 "repository",
                                 cwd, where->Complaint()));
  }
  // --show-prefix prints an empty line at the top: keep empty lines here.
  std::string top = where->out.substr(0, where->out.find('\n'));
  std::string prefix = where->out.substr(top.size() + 1);
  while (!prefix.empty() && (prefix.back() == '\n' || prefix.back() == '/'))
    prefix.pop_back();
  auto head =
      RunGit(top, {"rev-parse", "--verify", "--quiet", "HEAD^{commit}"}, env);
  if (!head)
    return std::unexpected(head.error());
  std::string base = head->out.substr(0, head->out.find('\n'));
  if (!head->ok() || base.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("worktree: the repository at {} has no "
                                 "commit yet; commit something first (a "
                                 "worktree starts from HEAD)",
                                 top));
  }
  if (auto made = MakeDir(root); !made)
    return made;
  std::string id = task.id.ToString();
  Worktree worktree{.repo = top,
                    .path = root + "/" + id,
                    .branch = "baton/" + id,
                    .base = base};
  auto added = RunGit(top,
                      {"worktree", "add", "--quiet", "-b", worktree.branch,
                       worktree.path, base},
                      env);
  if (!added)
    return std::unexpected(added.error());
  if (!added->ok()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("worktree: git worktree add {} in {} failed: {}",
                    worktree.branch, top, added->Complaint()));
  }
  // The same folder inside the worktree; made when HEAD does not have it
  // (an untracked folder), so that the agent starts where it was asked.
  task.spec.cwd = worktree.path + (prefix.empty() ? "" : "/" + prefix);
  std::error_code error;
  std::filesystem::create_directories(task.spec.cwd, error);
  task.spec.agent->worktree = std::move(worktree);
  return {};
}

std::optional<WorktreeFindings> ReadWorktree(
    const Worktree& worktree, const std::vector<std::string>& env) {
  std::error_code error;
  if (!std::filesystem::is_directory(worktree.path, error))
    return std::nullopt;
  auto run = [&](std::vector<std::string> args) -> std::optional<GitResult> {
    // Paths as they are, not quoted when they hold unusual bytes.
    args.insert(args.begin(), {"-c", "core.quotePath=false"});
    auto result = RunGit(worktree.path, args, env);
    if (!result || !result->ok())
      return std::nullopt;
    return std::move(*result);
  };
  auto log =
      run({"log", "--reverse", "--format=%h %s", worktree.base + "..HEAD"});
  auto stat = run({"diff", "--stat", worktree.base});
  auto names = run({"diff", "--name-only", worktree.base});
  auto status = run({"status", "--porcelain=v1", "-uall"});
  auto untracked = run({"ls-files", "--others", "--exclude-standard"});
  if (!log || !stat || !names || !status || !untracked)
    return std::nullopt;
  WorktreeFindings findings;
  std::set<std::string> changed;
  for (auto& name : Lines(names->out))
    changed.insert(std::move(name));
  for (auto& name : Lines(untracked->out))
    changed.insert(std::move(name));
  findings.changed_files.assign(changed.begin(), changed.end());
  findings.branch.branch = worktree.branch;
  findings.branch.base = worktree.base;
  findings.branch.commits = Lines(log->out);
  findings.branch.diff_stat = stat->out;
  findings.branch.uncommitted = !status->out.empty();
  return findings;
}

}  // namespace baton
