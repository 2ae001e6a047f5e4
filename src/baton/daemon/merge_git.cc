#include "baton/daemon/merge_git.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <set>

#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/git.h"
#include "baton/util/run_to_end.h"

namespace baton {
namespace {

// At most this much of a check's output, or of a conflict's hunks, is kept.
constexpr size_t kKeptBytes = 4000;

std::string TopLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::vector<std::string> TextLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    if (end > start)
      lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The end of `text`, from a line's start, at most kKeptBytes.
std::string EndOf(const std::string& text) {
  if (text.size() <= kKeptBytes)
    return text;
  size_t start = text.size() - kKeptBytes;
  size_t newline = text.find('\n', start);
  if (newline != std::string::npos && newline + 1 < text.size())
    start = newline + 1;
  return "…\n" + text.substr(start);
}

// The start of `text`, to a line's end, at most kKeptBytes.
std::string StartOf(const std::string& text) {
  if (text.size() <= kKeptBytes)
    return text;
  size_t end = text.rfind('\n', kKeptBytes);
  return text.substr(0, end == std::string::npos ? kKeptBytes : end + 1) +
         "…\n";
}

Result<GitResult> Run(const std::string& cwd, std::vector<std::string> args,
                      const LandGit& git) {
  args.insert(args.begin(), {"-c", "gc.auto=0", "-c", "core.quotePath=false"});
  return RunGit(cwd, args, git.env, git.git_timeout);
}

Error Failed(std::string_view what, const std::string& where,
             const GitResult& result) {
  return Error{ErrorCode::kIo,
               fmt::format("{} in {}: {}{}", what, where, result.Complaint(),
                           result.timed_out ? " (timed out)" : "")};
}

// A git that must work: its output, or an error naming what it did.
Result<std::string> Must(const std::string& cwd, std::vector<std::string> args,
                         const LandGit& git) {
  std::string what = "git " + args.front();
  auto result = Run(cwd, std::move(args), git);
  if (!result)
    return std::unexpected(result.error());
  if (!result->ok())
    return std::unexpected(Failed(what, cwd, *result));
  return std::move(result->out);
}

// A scratch worktree detached at a commit, removed (with git's record of
// it) when it goes.
class Scratch {
 public:
  Scratch(const std::string& repo, const LandGit& git)
      : repo_(repo), git_(git) {
    static std::atomic<int64_t> next{1};
    path_ = fmt::format("{}/land-{}-{}", git.scratch, ::getpid(), next++);
  }
  ~Scratch() {
    if (!made_)
      return;
    (void)Run(repo_, {"worktree", "remove", "--force", path_}, git_);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    (void)Run(repo_, {"worktree", "prune"}, git_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  Status Make(const std::string& at) {
    if (auto made = MakeDir(git_.scratch); !made)
      return made;
    auto added = Must(
        repo_, {"worktree", "add", "--quiet", "--detach", path_, at}, git_);
    if (!added)
      return std::unexpected(added.error());
    made_ = true;
    return {};
  }
  const std::string& path() const { return path_; }

 private:
  std::string repo_;
  const LandGit& git_;
  std::string path_;
  bool made_ = false;
};

// Brings `branch` onto HEAD of the scratch worktree: true when it went on
// cleanly, false at a conflict (then `trial` has its files and hunks, and
// the scratch worktree is back where it was).
Result<bool> BringOn(const Scratch& scratch, const TrialBranch& branch,
                     const LandSettings& settings, const LandGit& git,
                     Trial& trial) {
  auto head = Must(scratch.path(), {"rev-parse", "HEAD"}, git);
  if (!head)
    return std::unexpected(head.error());
  std::vector<std::string> args =
      settings.merge ? std::vector<std::string>{"merge",
                                                "--no-ff",
                                                "--no-edit",
                                                "-m",
                                                "Land " + branch.name,
                                                branch.head}
                     : std::vector<std::string>{"rebase", "--quiet",
                                                TopLine(*head), branch.head};
  auto brought = Run(scratch.path(), args, git);
  if (!brought)
    return std::unexpected(brought.error());
  if (brought->ok())
    return true;
  auto unmerged =
      Run(scratch.path(), {"diff", "--name-only", "--diff-filter=U"}, git);
  if (!unmerged || !unmerged->ok() || unmerged->out.empty()) {
    // Not a conflict: git failed (no identity, a lock, a deadline).
    (void)Run(scratch.path(), {settings.merge ? "merge" : "rebase", "--abort"},
              git);
    return std::unexpected(Failed(settings.merge ? "git merge" : "git rebase",
                                  scratch.path(), *brought));
  }
  trial.conflict_files = TextLines(unmerged->out);
  auto hunks = Run(scratch.path(), {"diff"}, git);
  if (hunks && hunks->ok())
    trial.conflict_hunks = StartOf(hunks->out);
  (void)Run(scratch.path(), {settings.merge ? "merge" : "rebase", "--abort"},
            git);
  return false;
}

}  // namespace

std::vector<std::string> LandGitEnvironment(std::vector<std::string> base) {
  std::erase_if(base, [](const std::string& entry) {
    return entry.starts_with("GIT_") && !entry.starts_with("GIT_AUTHOR_") &&
           !entry.starts_with("GIT_COMMITTER_");
  });
  return SetEnvironmentEntries(base,
                               {"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true"});
}

Result<LandSettings> ReadLandSettings(const std::string& repo,
                                      const LandGit& git) {
  LandSettings settings;
  auto strategy = Run(repo, {"config", "--get", "baton.landStrategy"}, git);
  if (!strategy)
    return std::unexpected(strategy.error());
  std::string name = TopLine(strategy->out);
  if (strategy->ok() && name != "rebase" && name != "merge") {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("baton.landStrategy is '{}' in {}; it is "
                                 "rebase or merge (git config "
                                 "baton.landStrategy rebase)",
                                 name, repo));
  }
  settings.merge = strategy->ok() && name == "merge";
  auto check = Run(repo, {"config", "--get", "baton.landCheck"}, git);
  if (!check)
    return std::unexpected(check.error());
  if (check->ok())
    settings.check = TopLine(check->out);
  return settings;
}

Result<std::string> BranchTip(const std::string& repo,
                              const std::string& branch, const LandGit& git) {
  auto tip = Run(repo,
                 {"rev-parse", "--verify", "--quiet",
                  "refs/heads/" + branch + "^{commit}"},
                 git);
  if (!tip)
    return std::unexpected(tip.error());
  if (!tip->ok()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("{} has no branch {}", repo, branch));
  }
  return TopLine(tip->out);
}

Result<std::string> CheckedOutBranch(const std::string& repo,
                                     const LandGit& git) {
  auto name = Run(repo, {"symbolic-ref", "--quiet", "--short", "HEAD"}, git);
  if (!name)
    return std::unexpected(name.error());
  return name->ok() ? TopLine(name->out) : "";
}

Result<int64_t> CommitsAhead(const std::string& repo, const std::string& head,
                             const std::string& target, const LandGit& git) {
  auto count = Must(repo, {"rev-list", "--count", target + ".." + head}, git);
  if (!count)
    return std::unexpected(count.error());
  return std::strtoll(count->c_str(), nullptr, 10);
}

Result<std::optional<Checkout>> FindCheckout(const std::string& repo,
                                             const std::string& branch,
                                             const LandGit& git) {
  auto list = Must(repo, {"worktree", "list", "--porcelain"}, git);
  if (!list)
    return std::unexpected(list.error());
  std::string path;
  for (const std::string& line : TextLines(*list)) {
    if (line.starts_with("worktree ")) {
      path = line.substr(9);
    } else if (line == "branch refs/heads/" + branch) {
      auto status = Must(path, {"status", "--porcelain", "-uall"}, git);
      if (!status)
        return std::unexpected(status.error());
      return Checkout{.path = path, .dirty = !status->empty()};
    }
  }
  return std::nullopt;
}

Result<Trial> TryBatch(const std::string& repo, const std::string& onto,
                       const std::vector<TrialBranch>& batch,
                       const LandSettings& settings, const LandGit& git) {
  Scratch scratch(repo, git);
  if (auto made = scratch.Make(onto); !made)
    return std::unexpected(made.error());
  Trial trial;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto clean = BringOn(scratch, batch[i], settings, git, trial);
    if (!clean)
      return std::unexpected(clean.error());
    if (!*clean) {
      trial.conflict_at = i;
      break;
    }
    auto head = Must(scratch.path(), {"rev-parse", "HEAD"}, git);
    if (!head)
      return std::unexpected(head.error());
    trial.results.push_back(TopLine(*head));
  }
  if (trial.results.empty())
    return trial;
  if (settings.check.empty()) {
    trial.green = true;  // A clean rebase or merge is the whole test.
    return trial;
  }
  auto ran = RunToEnd("/bin/sh", {"sh", "-c", settings.check}, git.env,
                      scratch.path(), git.check_timeout);
  if (!ran)
    return std::unexpected(ran.error());
  trial.checked = true;
  trial.green = ran->ok();
  if (!trial.green) {
    std::string said = ran->out + ran->err;
    trial.output =
        EndOf(said) + (ran->timed_out
                           ? fmt::format("\n(killed at its deadline, {} s)",
                                         git.check_timeout.count() / 1000)
                           : fmt::format("\n(exit code {})", ran->exit_code));
  }
  return trial;
}

Result<bool> MoveTarget(const std::string& repo, const std::string& target,
                        const std::string& old_tip, const std::string& new_tip,
                        const LandGit& git) {
  auto checkout = FindCheckout(repo, target, git);
  if (!checkout)
    return std::unexpected(checkout.error());
  if (*checkout) {
    if ((*checkout)->dirty)
      return false;
    auto tip = BranchTip(repo, target, git);
    if (!tip)
      return std::unexpected(tip.error());
    if (*tip != old_tip)
      return false;
    // Moves the branch and its files together; refuses (moving nothing)
    // when new_tip does not descend from where the branch is now.
    auto merged =
        Run((*checkout)->path, {"merge", "--ff-only", "--quiet", new_tip}, git);
    if (!merged)
      return std::unexpected(merged.error());
    return merged->ok();
  }
  auto moved = Run(repo,
                   {"update-ref", "-m", "baton land", "refs/heads/" + target,
                    new_tip, old_tip},
                   git);
  if (!moved)
    return std::unexpected(moved.error());
  return moved->ok();
}

}  // namespace baton
