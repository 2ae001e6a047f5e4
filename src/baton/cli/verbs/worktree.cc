// `baton worktree ls|clean`: the git worktrees agent workers ran in
// (`delegate --worktree`; doc/agents.md, "Worktrees"). batond inspects and
// removes them (the `worktrees` request, for every front end alike): never
// the worktree of a running task, never uncommitted work (--force commits
// it on the branch first), never an unmerged branch. The CLI prints what it
// answers.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "baton/cli/verbs.h"
#include "baton/util/environment.h"

namespace baton {
namespace {

// git runs in batond with this CLI's environment, as it would here.
WorktreesRequest Request(std::vector<std::string> ids, bool clean, bool force) {
  return {.tasks = std::move(ids),
          .clean = clean,
          .force = force,
          .base_env = ProcessEnvironment()};
}

int DoWorktreeList(const Context& ctx) {
  return CallAndPrint(
      ctx, Request({}, false, false), [](const WorktreesReply& reply) {
        if (reply.worktrees.empty()) {
          std::printf("no worktrees (baton delegate --worktree makes one)\n");
          return kExitOk;
        }
        std::printf("%-10s %-11s %-18s %-30s %s\n", "TASK", "STATUS", "BRANCH",
                    "STATE", "PATH");
        for (const WorktreeInfo& info : reply.worktrees) {
          std::printf("%-10s %-11s %-18s %-30s %s\n", info.task.c_str(),
                      info.status.c_str(), info.branch.c_str(),
                      info.state.c_str(), info.path.c_str());
        }
        return kExitOk;
      });
}

struct CleanArgs {
  std::vector<std::string> ids;
  bool force = false;
};

int DoClean(const Context& ctx, const CleanArgs& args) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto reply = client->Call(Request(args.ids, true, args.force));
  if (!reply)
    return ReportError(ctx, reply.error());
  int exit_code = kExitOk;
  nlohmann::json removed = nlohmann::json::array();
  nlohmann::json kept = nlohmann::json::array();
  for (const WorktreeInfo& info : reply->worktrees) {
    bool named = std::find(args.ids.begin(), args.ids.end(), info.task) !=
                 args.ids.end();
    if (info.outcome == "kept") {
      kept.push_back({{"task", info.task}, {"reason", info.note}});
      if (!ctx.json)
        std::printf("%s: kept: %s\n", info.task.c_str(), info.note.c_str());
      // Asked for by name and not done: the command did not do its job.
      if (named)
        exit_code = kExitFailed;
    } else if (info.outcome == "removed") {
      removed.push_back(info.task);
      if (!ctx.json) {
        std::printf("%s: removed %s%s\n", info.task.c_str(), info.path.c_str(),
                    info.note.empty() ? "" : ("; " + info.note).c_str());
      }
    }
  }
  if (ctx.json) {
    PrintJsonLine(nlohmann::json{{"removed", removed}, {"kept", kept}}.dump());
  } else if (removed.empty() && kept.empty()) {
    std::printf("nothing to clean\n");
  }
  PrintNotices(*client);
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
                  "Also named tasks' worktrees with uncommitted changes, "
                  "committing them on their branches first");
  clean->callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoClean(ctx, *args); };
  });
}

}  // namespace baton
