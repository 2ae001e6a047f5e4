#include "baton/daemon/conflict_git.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/git.h"

namespace baton {
namespace {

// The NUL-separated fields of `text` (git's -z output), without empty ones.
std::vector<std::string> Fields(const std::string& text) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos)
      end = text.size();
    if (end > start)
      fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return fields;
}

std::string FirstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// A git that ran and failed, as an error naming what it was doing.
Error GitFailed(std::string_view what, const Worktree& worktree,
                const GitResult& result) {
  return Error{
      ErrorCode::kIo,
      fmt::format("{} in {}: {}{}", what, worktree.path, result.Complaint(),
                  result.timed_out ? " (timed out)" : "")};
}

}  // namespace

std::vector<std::string> RadarGitEnvironment(std::vector<std::string> base) {
  std::erase_if(
      base, [](const std::string& entry) { return entry.starts_with("GIT_"); });
  // Objects only: no auto-gc (it could run for minutes in a big
  // repository), and the snapshot's author, committer and dates fixed, so
  // one state is one commit.
  return SetEnvironmentEntries(
      base,
      {"GIT_AUTHOR_NAME=baton radar", "GIT_AUTHOR_EMAIL=radar@baton.invalid",
       "GIT_AUTHOR_DATE=@0 +0000", "GIT_COMMITTER_NAME=baton radar",
       "GIT_COMMITTER_EMAIL=radar@baton.invalid", "GIT_COMMITTER_DATE=@0 +0000",
       "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"});
}

Result<WorktreeSnapshot> SnapshotWorktree(const Worktree& worktree,
                                          const std::vector<std::string>& env,
                                          const std::string& scratch,
                                          std::chrono::milliseconds timeout,
                                          const WorktreeSnapshot* last) {
  auto git = [&](const std::vector<std::string>& args,
                 const std::vector<std::string>& with_env) {
    std::vector<std::string> all = {"-c", "gc.auto=0", "-c",
                                    "core.quotePath=false"};
    all.insert(all.end(), args.begin(), args.end());
    return RunGit(worktree.path, all, with_env, timeout);
  };
  auto where = git({"rev-parse", "HEAD", "--git-path", "index"}, env);
  if (!where)
    return std::unexpected(where.error());
  if (!where->ok())
    return std::unexpected(GitFailed("git rev-parse", worktree, *where));
  size_t newline = where->out.find('\n');
  std::string head = where->out.substr(0, newline);
  std::string index = newline == std::string::npos
                          ? ""
                          : FirstLine(where->out.substr(newline + 1));
  if (head.empty() || index.empty()) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("git rev-parse in {} named no HEAD or index",
                                 worktree.path));
  }
  if (index.front() != '/')
    index = worktree.path + "/" + index;
  if (auto made = MakeDir(scratch); !made)
    return std::unexpected(made.error());
  // Named after the worktree's folder: one round snapshots a worktree once.
  std::string copy = scratch + "/index-" +
                     std::filesystem::path(worktree.path).filename().string();
  std::error_code error;
  std::filesystem::remove(copy, error);
  // A worktree without an index yet: the copy starts empty, and git add
  // hashes every file.
  std::filesystem::copy_file(index, copy, error);
  // With the index's own mtime: git trusts an entry's stat data only when
  // the file is older than the index (else it is "racily clean" and its
  // content is compared). A copy made now would hide a file rewritten in
  // place, same size, in the second its index was written.
  if (!error) {
    auto written = std::filesystem::last_write_time(index, error);
    if (!error)
      std::filesystem::last_write_time(copy, written, error);
  }
  struct RemoveCopy {
    std::string path;
    ~RemoveCopy() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
      std::filesystem::remove(path + ".lock", ignored);
    }
  } remove_copy{copy};
  auto with_copy = SetEnvironmentEntries(env, {"GIT_INDEX_FILE=" + copy});
  auto added = git({"add", "-A"}, with_copy);
  if (!added)
    return std::unexpected(added.error());
  if (!added->ok())
    return std::unexpected(GitFailed("git add -A", worktree, *added));
  auto tree = git({"write-tree"}, with_copy);
  if (!tree)
    return std::unexpected(tree.error());
  if (!tree->ok())
    return std::unexpected(GitFailed("git write-tree", worktree, *tree));
  WorktreeSnapshot snapshot{.head = head, .tree = FirstLine(tree->out)};
  // Unchanged since the last round: the same commit and files.
  if (last && last->head == snapshot.head && last->tree == snapshot.tree &&
      !last->commit.empty()) {
    return *last;
  }
  auto commit = git(
      {"commit-tree", snapshot.tree, "-p", head, "-m", "baton radar snapshot"},
      env);
  if (!commit)
    return std::unexpected(commit.error());
  if (!commit->ok())
    return std::unexpected(GitFailed("git commit-tree", worktree, *commit));
  snapshot.commit = FirstLine(commit->out);
  auto diff = git({"diff-tree", "-r", "-z", "--no-renames", "--name-only",
                   worktree.base, snapshot.commit},
                  env);
  if (!diff)
    return std::unexpected(diff.error());
  if (!diff->ok())
    return std::unexpected(GitFailed("git diff-tree", worktree, *diff));
  snapshot.files = Fields(diff->out);
  std::sort(snapshot.files.begin(), snapshot.files.end());
  return snapshot;
}

Result<TrialMerge> TrialMergeCommits(const std::string& repo,
                                     const std::string& first,
                                     const std::string& second,
                                     const std::vector<std::string>& env,
                                     std::chrono::milliseconds timeout) {
  auto merged = RunGit(repo,
                       {"-c", "gc.auto=0", "merge-tree", "--write-tree",
                        "--name-only", "--no-messages", "-z", first, second},
                       env, timeout);
  if (!merged)
    return std::unexpected(merged.error());
  // 0: clean; 1: conflicts; anything else: git could not merge (too old
  // for --write-tree, unrelated histories, a deadline).
  if (merged->exit_code != 0 && merged->exit_code != 1) {
    return MakeError(
        ErrorCode::kIo,
        fmt::format("git merge-tree in {}: {}{}", repo, merged->Complaint(),
                    merged->timed_out ? " (timed out)" : ""));
  }
  TrialMerge trial{.conflict = merged->exit_code == 1};
  if (trial.conflict) {
    // The merged tree's id, then the conflicted files (each once with
    // --name-only; a set all the same).
    auto fields = Fields(merged->out);
    std::set<std::string> files;
    for (size_t i = 1; i < fields.size(); ++i)
      files.insert(fields[i]);
    trial.conflict_files.assign(files.begin(), files.end());
  }
  return trial;
}

}  // namespace baton
