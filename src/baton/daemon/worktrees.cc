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

namespace {

// git in `cwd`, its result, or a failed one when git could not run.
GitResult Git(const std::string& cwd, const std::vector<std::string>& args,
              const std::vector<std::string>& env) {
  auto result = RunGit(cwd, args, env);
  return result ? std::move(*result) : GitResult{};
}

// "merged", "2 commits not merged", "task running", ... for people.
std::string StateText(const TaskRecord& task, const WorktreeInfo& info) {
  if (!info.exists)
    return "removed";
  std::string text;
  if (!IsTerminal(task.status)) {
    text = "task " + std::string(TaskStatusName(task.status));
  } else if (!info.branch_exists) {
    text = "branch deleted";
  } else if (info.merged) {
    text = "merged";
  } else {
    text = fmt::format("{} commit{} not merged", info.commits_not_merged,
                       info.commits_not_merged == 1 ? "" : "s");
  }
  if (info.uncommitted)
    text += ", uncommitted changes";
  return text;
}

}  // namespace

WorktreeInfo InspectWorktree(const TaskRecord& task,
                             const std::vector<std::string>& env) {
  const Worktree& worktree = *task.spec.agent->worktree;
  WorktreeInfo info{.task = task.id.ToString(),
                    .status = std::string(TaskStatusName(task.status)),
                    .repo = worktree.repo,
                    .path = worktree.path,
                    .branch = worktree.branch,
                    .base = worktree.base};
  std::error_code error;
  info.exists = std::filesystem::is_directory(worktree.path, error);
  info.branch_exists =
      Git(worktree.repo,
          {"rev-parse", "--verify", "--quiet", "refs/heads/" + worktree.branch},
          env)
          .ok();
  if (info.branch_exists) {
    info.merged =
        Git(worktree.repo,
            {"merge-base", "--is-ancestor", worktree.branch, "HEAD"}, env)
            .ok();
    auto count = Git(worktree.repo,
                     {"rev-list", "--count", "HEAD.." + worktree.branch}, env);
    if (count.ok())
      info.commits_not_merged = std::strtoll(count.out.c_str(), nullptr, 10);
  }
  if (info.exists) {
    auto status = Git(worktree.path, {"status", "--porcelain"}, env);
    info.uncommitted = !status.ok() || !status.out.empty();
  }
  info.state = StateText(task, info);
  return info;
}

void CleanWorktree(const TaskRecord& task, bool named, bool force,
                   const std::vector<std::string>& env, WorktreeInfo& info) {
  const Worktree& worktree = *task.spec.agent->worktree;
  auto keep = [&info](std::string why) {
    info.outcome = "kept";
    info.note = std::move(why);
  };
  if (!info.exists) {
    // Removed by hand: git forgets it, and a merged branch goes too.
    (void)RunGit(worktree.repo, {"worktree", "prune"}, env);
    if (info.branch_exists && info.merged && IsTerminal(task.status))
      (void)RunGit(worktree.repo, {"branch", "-d", worktree.branch}, env);
    return;
  }
  if (!IsTerminal(task.status)) {
    return keep(fmt::format("it is {}; its worktree stays until it ends",
                            TaskStatusName(task.status)));
  }
  if (info.uncommitted && !force) {
    return keep(fmt::format(
        "uncommitted changes in {} (commit them, or clean --force to discard "
        "them)",
        worktree.path));
  }
  int64_t ahead = info.commits_not_merged;
  if (info.branch_exists && !info.merged && !named) {
    return keep(fmt::format(
        "branch {} has {} commit{} not in HEAD of {} (merge it, or name the "
        "task: baton worktree clean {})",
        worktree.branch, ahead, ahead == 1 ? "" : "s", worktree.repo,
        info.task));
  }
  std::vector<std::string> remove = {"worktree", "remove"};
  if (force)
    remove.push_back("--force");
  remove.push_back(worktree.path);
  auto removing = RunGit(worktree.repo, remove, env);
  if (!removing || !removing->ok()) {
    return keep("git worktree remove failed: " +
                (removing ? removing->Complaint() : removing.error().message));
  }
  info.outcome = "removed";
  info.exists = false;
  info.state = "removed";
  if (info.branch_exists && info.merged) {
    auto deleted =
        RunGit(worktree.repo, {"branch", "-d", worktree.branch}, env);
    info.note =
        deleted && deleted->ok()
            ? fmt::format("deleted branch {} (merged)", worktree.branch)
            : fmt::format(
                  "kept branch {} (git branch -d: {})", worktree.branch,
                  deleted ? deleted->Complaint() : deleted.error().message);
  } else if (info.branch_exists) {
    info.note = fmt::format(
        "kept branch {} ({} commit{} not merged; git branch -D {} discards "
        "{})",
        worktree.branch, ahead, ahead == 1 ? "" : "s", worktree.branch,
        ahead == 1 ? "it" : "them");
  }
}

}  // namespace baton
