// `baton worktree ls|clean`: the git worktrees agent workers ran in
// (`delegate --worktree`; doc/agents.md, "Worktrees"). batond lists the
// tasks; the CLI asks git itself what each worktree holds now, and removes
// only what loses nothing: never the worktree of a running task, never
// uncommitted work without --force, and never an unmerged branch.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "baton/cli/verbs.h"
#include "baton/util/environment.h"
#include "baton/util/git.h"

namespace baton {
namespace {

// What a worktree holds now, as git tells.
struct WorktreeState {
  bool exists = false;         // Its folder is there.
  bool branch_exists = false;  // Its branch is there.
  bool merged = false;         // Its branch is in the repository's HEAD.
  int64_t ahead = 0;           // Commits on its branch not in HEAD.
  bool dirty = false;          // Uncommitted changes or new files.
};

WorktreeState Inspect(const Worktree& worktree,
                      const std::vector<std::string>& env) {
  WorktreeState state;
  std::error_code error;
  state.exists = std::filesystem::is_directory(worktree.path, error);
  auto git = [&](const std::string& cwd, std::vector<std::string> args) {
    auto result = RunGit(cwd, args, env);
    return result ? std::move(*result) : GitResult{};
  };
  state.branch_exists = git(worktree.repo, {"rev-parse", "--verify", "--quiet",
                                            "refs/heads/" + worktree.branch})
                            .ok();
  if (state.branch_exists) {
    state.merged = git(worktree.repo,
                       {"merge-base", "--is-ancestor", worktree.branch, "HEAD"})
                       .ok();
    auto count =
        git(worktree.repo, {"rev-list", "--count", "HEAD.." + worktree.branch});
    if (count.ok())
      state.ahead = std::strtoll(count.out.c_str(), nullptr, 10);
  }
  if (state.exists) {
    auto status = git(worktree.path, {"status", "--porcelain"});
    state.dirty = !status.ok() || !status.out.empty();
  }
  return state;
}

// "running", "merged", "2 commits not merged", ... for people.
std::string StateText(const TaskRecord& task, const WorktreeState& state) {
  if (!state.exists)
    return "removed";
  std::string text;
  if (!IsTerminal(task.status)) {
    text = "task " + std::string(TaskStatusName(task.status));
  } else if (!state.branch_exists) {
    text = "branch deleted";
  } else if (state.merged) {
    text = "merged";
  } else {
    text = fmt::format("{} commit{} not merged", state.ahead,
                       state.ahead == 1 ? "" : "s");
  }
  if (state.dirty)
    text += ", uncommitted changes";
  return text;
}

// The session's tasks that have a worktree, in creation order.
Result<std::vector<TaskRecord>> WorktreeTasks(const Context& ctx) {
  auto client = ctx.Connect();
  if (!client)
    return std::unexpected(client.error());
  auto list = client->Call(ListRequest{.all = true});
  if (!list)
    return std::unexpected(list.error());
  PrintNotices(*client);
  std::vector<TaskRecord> tasks;
  for (TaskView& view : list->tasks) {
    if (view.task.spec.agent && view.task.spec.agent->worktree)
      tasks.push_back(std::move(view.task));
  }
  return tasks;
}

int DoWorktreeList(const Context& ctx) {
  auto tasks = WorktreeTasks(ctx);
  if (!tasks)
    return ReportError(ctx, tasks.error());
  std::vector<std::string> env = ProcessEnvironment();
  nlohmann::json documents = nlohmann::json::array();
  if (!ctx.json && tasks->empty())
    std::printf("no worktrees (baton delegate --worktree makes one)\n");
  else if (!ctx.json)
    std::printf("%-10s %-11s %-18s %-30s %s\n", "TASK", "STATUS", "BRANCH",
                "STATE", "PATH");
  for (const TaskRecord& task : *tasks) {
    const Worktree& worktree = *task.spec.agent->worktree;
    WorktreeState state = Inspect(worktree, env);
    std::string text = StateText(task, state);
    if (ctx.json) {
      documents.push_back({{"task", task.id.ToString()},
                           {"status", TaskStatusName(task.status)},
                           {"repo", worktree.repo},
                           {"path", worktree.path},
                           {"branch", worktree.branch},
                           {"base", worktree.base},
                           {"exists", state.exists},
                           {"branch_exists", state.branch_exists},
                           {"merged", state.merged},
                           {"commits_not_merged", state.ahead},
                           {"uncommitted", state.dirty},
                           {"state", text}});
    } else {
      std::printf("%-10s %-11s %-18s %-30s %s\n", task.id.ToString().c_str(),
                  std::string(TaskStatusName(task.status)).c_str(),
                  worktree.branch.c_str(), text.c_str(), worktree.path.c_str());
    }
  }
  if (ctx.json)
    PrintJsonLine(nlohmann::json{{"worktrees", documents}}.dump());
  return kExitOk;
}

struct CleanArgs {
  std::vector<std::string> ids;
  bool force = false;
};

int DoClean(const Context& ctx, const CleanArgs& args) {
  auto tasks = WorktreeTasks(ctx);
  if (!tasks)
    return ReportError(ctx, tasks.error());
  std::vector<std::string> env = ProcessEnvironment();
  int exit_code = kExitOk;
  nlohmann::json removed = nlohmann::json::array();
  nlohmann::json kept = nlohmann::json::array();
  auto keep = [&](const TaskRecord& task, bool named, std::string why) {
    std::string id = task.id.ToString();
    kept.push_back({{"task", id}, {"reason", why}});
    if (!ctx.json)
      std::printf("%s: kept: %s\n", id.c_str(), why.c_str());
    // Asked for by name and not done: the command did not do its job.
    if (named)
      exit_code = kExitFailed;
  };
  for (const std::string& id : args.ids) {
    if (std::none_of(tasks->begin(), tasks->end(), [&](const TaskRecord& t) {
          return t.id.ToString() == id;
        })) {
      return ReportError(
          ctx, Error{ErrorCode::kNotFound,
                     fmt::format("{} has no worktree among this session's "
                                 "tasks (baton worktree ls lists them)",
                                 id)});
    }
  }
  for (const TaskRecord& task : *tasks) {
    std::string id = task.id.ToString();
    bool named =
        std::find(args.ids.begin(), args.ids.end(), id) != args.ids.end();
    if (!args.ids.empty() && !named)
      continue;
    const Worktree& worktree = *task.spec.agent->worktree;
    WorktreeState state = Inspect(worktree, env);
    if (!state.exists) {
      // Removed by hand: git forgets it, and a merged branch goes too.
      (void)RunGit(worktree.repo, {"worktree", "prune"}, env);
      if (state.branch_exists && state.merged && IsTerminal(task.status))
        (void)RunGit(worktree.repo, {"branch", "-d", worktree.branch}, env);
      continue;
    }
    if (!IsTerminal(task.status)) {
      keep(task, named,
           fmt::format("it is {}; its worktree stays until it ends",
                       TaskStatusName(task.status)));
      continue;
    }
    if (state.dirty && !args.force) {
      keep(task, named,
           fmt::format("uncommitted changes in {} (commit them, or clean "
                       "--force to discard them)",
                       worktree.path));
      continue;
    }
    if (state.branch_exists && !state.merged && !named) {
      keep(task, named,
           fmt::format("branch {} has {} commit{} not in HEAD of {} (merge "
                       "it, or name the task: baton worktree clean {})",
                       worktree.branch, state.ahead,
                       state.ahead == 1 ? "" : "s", worktree.repo, id));
      continue;
    }
    std::vector<std::string> remove = {"worktree", "remove"};
    if (args.force)
      remove.push_back("--force");
    remove.push_back(worktree.path);
    auto removing = RunGit(worktree.repo, remove, env);
    if (!removing || !removing->ok()) {
      keep(task, true,
           "git worktree remove failed: " +
               (removing ? removing->Complaint() : removing.error().message));
      continue;
    }
    std::string branch_text;
    if (state.branch_exists && state.merged) {
      auto deleted =
          RunGit(worktree.repo, {"branch", "-d", worktree.branch}, env);
      branch_text =
          deleted && deleted->ok()
              ? fmt::format("; deleted branch {} (merged)", worktree.branch)
              : fmt::format(
                    "; kept branch {} (git branch -d: {})", worktree.branch,
                    deleted ? deleted->Complaint() : deleted.error().message);
    } else if (state.branch_exists) {
      branch_text = fmt::format(
          "; kept branch {} ({} commit{} not merged; git branch -D {} "
          "discards {})",
          worktree.branch, state.ahead, state.ahead == 1 ? "" : "s",
          worktree.branch, state.ahead == 1 ? "it" : "them");
    }
    removed.push_back(id);
    if (!ctx.json)
      std::printf("%s: removed %s%s\n", id.c_str(), worktree.path.c_str(),
                  branch_text.c_str());
  }
  if (ctx.json) {
    PrintJsonLine(nlohmann::json{{"removed", removed}, {"kept", kept}}.dump());
  } else if (removed.empty() && kept.empty()) {
    std::printf("nothing to clean\n");
  }
  return exit_code;
}

}  // namespace

void DefineWorktree(CLI::App& command, const Context& ctx, Action& action) {
  command.require_subcommand(1);
  auto* ls = command.add_subcommand(
      "ls", "List the worktrees of this session's agent tasks");
  ls->callback(
      [&ctx, &action] { action = [&ctx] { return DoWorktreeList(ctx); }; });
  auto args = std::make_shared<CleanArgs>();
  auto* clean = command.add_subcommand(
      "clean",
      "Remove the worktrees of ended tasks whose branches are merged (named "
      "tasks' too, keeping their branches)");
  clean->add_option("ids", args->ids, "Only these tasks (e.g. agent-3)");
  clean->add_flag("--force", args->force,
                  "Also discard uncommitted changes in them");
  clean->callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoClean(ctx, *args); };
  });
}

}  // namespace baton
