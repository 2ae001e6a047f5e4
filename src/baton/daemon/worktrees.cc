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

// git in `cwd`, its result, or a failed one when git could not run.
GitResult Git(const std::string& cwd, const std::vector<std::string>& args,
              const std::vector<std::string>& env) {
  auto result = RunGit(cwd, args, env);
  return result ? std::move(*result) : GitResult{};
}

// The lock reason batond gives git for a task's worktree: how a later
// reader (UnlockWorktree, a person's `git worktree list`) tells whose it is.
std::string LockReason(const TaskRecord& task) {
  return fmt::format("baton: task {} runs in it", task.id.ToString());
}

// batond's own lock (LockReason), whichever task's.
bool IsBatonLock(const std::string& reason) {
  return reason.starts_with("baton: task ");
}

// Why the worktree at `path` is locked, nullopt when it is not: git keeps
// the reason in the file `locked` of the worktree's own git folder.
std::optional<std::string> LockOf(const std::string& path,
                                  const std::vector<std::string>& env) {
  auto dir = Git(path, {"rev-parse", "--absolute-git-dir"}, env);
  if (!dir.ok())
    return std::nullopt;
  auto reason = ReadFile(dir.out.substr(0, dir.out.find('\n')) + "/locked");
  if (!reason)
    return std::nullopt;
  while (!reason->empty() && reason->back() == '\n')
    reason->pop_back();
  return *reason;
}

// A resume goes on in the worktree of the task it resumes: locked again, for
// it. A person's lock stays as it is (it holds the worktree as well).
Status TakeOverWorktree(const std::vector<std::string>& env,
                        const TaskRecord& task) {
  const Worktree& worktree = *task.spec.agent->worktree;
  std::error_code error;
  if (!std::filesystem::is_directory(worktree.path, error)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("worktree: {} is gone (cleaned); delegate "
                                 "the work anew with --worktree",
                                 worktree.path));
  }
  if (auto lock = LockOf(worktree.path, env); lock && !IsBatonLock(*lock))
    return {};
  (void)RunGit(worktree.repo, {"worktree", "unlock", worktree.path}, env);
  auto locked = RunGit(
      worktree.repo,
      {"worktree", "lock", "--reason", LockReason(task), worktree.path}, env);
  if (!locked)
    return std::unexpected(locked.error());
  if (!locked->ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("worktree: git worktree lock {} failed: {}",
                                 worktree.path, locked->Complaint()));
  }
  return {};
}

}  // namespace

Status PrepareWorktree(const std::string& root,
                       const std::vector<std::string>& env, TaskRecord& task) {
  if (!task.spec.agent->worktree->path.empty())
    return TakeOverWorktree(env, task);
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
  auto from = Git(top, {"symbolic-ref", "--quiet", "--short", "HEAD"}, env);
  std::string id = task.id.ToString();
  Worktree worktree{
      .repo = top,
      .path = root + "/" + id,
      .branch = "baton/" + id,
      .base = base,
      .from = from.ok() ? from.out.substr(0, from.out.find('\n')) : ""};
  auto added =
      RunGit(top,
             {"worktree", "add", "--quiet", "--lock", "--reason",
              LockReason(task), "-b", worktree.branch, worktree.path, base},
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

void UnlockWorktree(const TaskRecord& task,
                    const std::vector<std::string>& env) {
  const Worktree& worktree = *task.spec.agent->worktree;
  if (LockOf(worktree.path, env) == LockReason(task))
    (void)RunGit(worktree.repo, {"worktree", "unlock", worktree.path}, env);
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
  if (info.commits_on_no_branch > 0)
    text += fmt::format(", {} on no branch", info.commits_on_no_branch);
  if (!info.locked.empty() && IsTerminal(task.status))
    text += ", locked";
  return text;
}

// Commits what `worktree` holds uncommitted on the branch its HEAD is on, so
// that removing the folder loses nothing; "" or why it could not.
std::string SaveUncommitted(const TaskRecord& task, const Worktree& worktree,
                            const std::vector<std::string>& env,
                            std::string& saved) {
  if (!Git(worktree.path, {"symbolic-ref", "-q", "HEAD"}, env).ok()) {
    return fmt::format(
        "uncommitted changes on a detached HEAD in {} (commit them on a "
        "branch first)",
        worktree.path);
  }
  auto added = Git(worktree.path, {"add", "-A"}, env);
  auto committed =
      added.ok()
          ? Git(worktree.path,
                {"-c", "user.name=baton", "-c", "user.email=baton@localhost",
                 "commit", "--quiet", "--no-verify", "-m",
                 fmt::format("baton: uncommitted work of {}, saved by "
                             "worktree clean --force",
                             task.id.ToString())},
                env)
          : added;
  if (!committed.ok())
    return "committing its uncommitted changes failed: " +
           committed.Complaint();
  auto head = Git(worktree.path, {"rev-parse", "--short", "HEAD"}, env);
  saved = head.out.substr(0, head.out.find('\n'));
  return "";
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
    auto loose = Git(
        worktree.path,
        {"rev-list", "--count", "HEAD", "--not", "--branches", "--tags"}, env);
    // Unknown counts as some: a worktree git cannot read is not removed.
    info.commits_on_no_branch =
        loose.ok() ? std::strtoll(loose.out.c_str(), nullptr, 10) : 1;
    info.locked = LockOf(worktree.path, env).value_or("");
  }
  info.state = StateText(task, info);
  return info;
}

void CleanWorktree(const TaskRecord& task, bool named, bool force,
                   const std::string& used_by,
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
  if (!used_by.empty()) {
    return keep(
        fmt::format("{} goes on in it; it stays until that ends", used_by));
  }
  if (info.commits_on_no_branch > 0) {
    return keep(fmt::format(
        "its HEAD holds {} commit{} on no branch (keep them: git -C {} "
        "branch NAME; then clean again)",
        info.commits_on_no_branch, info.commits_on_no_branch == 1 ? "" : "s",
        worktree.path));
  }
  if (!info.locked.empty() && !IsBatonLock(info.locked)) {
    return keep(
        fmt::format("locked: {} (git worktree unlock {} lets baton "
                    "clean it)",
                    info.locked, worktree.path));
  }
  if (info.uncommitted && !force) {
    return keep(fmt::format(
        "uncommitted changes in {} (commit them, or clean --force {} to "
        "commit them on its branch and remove the folder)",
        worktree.path, info.task));
  }
  // Saved uncommitted work makes the branch unmerged: named tasks only.
  int64_t ahead = info.commits_not_merged + (info.uncommitted ? 1 : 0);
  bool unmerged = info.branch_exists && (!info.merged || info.uncommitted);
  if (unmerged && !named) {
    return keep(fmt::format(
        "branch {} has {} commit{} not in HEAD of {} (merge it, or name the "
        "task: baton worktree clean {}{})",
        worktree.branch, ahead, ahead == 1 ? "" : "s", worktree.repo,
        info.uncommitted ? "--force " : "", info.task));
  }
  // batond's lock left over (a task that never spawned): it is no one's.
  if (!info.locked.empty())
    (void)RunGit(worktree.repo, {"worktree", "unlock", worktree.path}, env);
  std::string saved;
  if (info.uncommitted) {
    if (std::string why = SaveUncommitted(task, worktree, env, saved);
        !why.empty()) {
      return keep(why);
    }
  }
  auto removing =
      RunGit(worktree.repo, {"worktree", "remove", worktree.path}, env);
  if (!removing || !removing->ok()) {
    return keep("git worktree remove failed: " +
                (removing ? removing->Complaint() : removing.error().message));
  }
  info.outcome = "removed";
  info.exists = false;
  info.state = "removed";
  if (info.branch_exists && !unmerged) {
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
  if (!saved.empty()) {
    info.note = fmt::format("committed its uncommitted work on {} as {}; {}",
                            worktree.branch, saved, info.note);
  }
}

}  // namespace baton
