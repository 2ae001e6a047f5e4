// `baton land ID... [--onto BRANCH] [--check CMD]`: queues finished
// worktree workers' branches to land on their target branch; `baton lands
// [ID]`: the merge queue, each entry's state, reason and resulting commit
// (doc/land.md). batond does the work; the CLI prints.
#include <fmt/format.h>

#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct LandArgs {
  std::vector<std::string> ids;
  std::string onto;
  std::string check;
};

std::string Short(const std::string& commit) {
  return commit.substr(0, 12);
}

int DoLand(const Context& ctx, const LandArgs& args) {
  return CallAndPrint(
      ctx,
      LandRequest{.tasks = args.ids,
                  .target = {.onto = args.onto, .check = args.check}},
      [](const LandReply& reply) {
        for (const LandEntry& entry : reply.entries) {
          std::printf("%s: queued as entry %lld, %s onto %s in %s\n",
                      entry.task.c_str(), static_cast<long long>(entry.id),
                      entry.branch.c_str(), entry.target.c_str(),
                      entry.repo.c_str());
        }
        return kExitOk;
      });
}

int DoLands(const Context& ctx, const std::string& task) {
  return CallAndPrint(
      ctx, LandsRequest{.task = task}, [](const LandsReply& reply) {
        if (reply.entries.empty()) {
          std::printf(
              "the merge queue is empty (baton land ID queues a "
              "finished worktree worker)\n");
          return kExitOk;
        }
        std::printf("%-4s %-10s %-12s %-8s %-12s %s\n", "ID", "TASK", "TARGET",
                    "STATE", "RESULT", "REASON");
        for (const LandEntry& entry : reply.entries) {
          std::printf("%-4lld %-10s %-12s %-8s %-12s %s\n",
                      static_cast<long long>(entry.id), entry.task.c_str(),
                      entry.target.c_str(),
                      std::string(EnumName(entry.state)).c_str(),
                      Short(entry.result).c_str(), entry.reason.c_str());
        }
        return kExitOk;
      });
}

}  // namespace

void DefineLand(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<LandArgs>();
  command
      .add_option("ids", args->ids,
                  "Ended worktree workers (e.g. agent-3), in the order "
                  "they land")
      ->required();
  command.add_option("--onto", args->onto,
                     "The target branch (default: the branch each worktree "
                     "was made from)");
  command.add_option("--check", args->check,
                     "The land check, a shell line (default: git config "
                     "baton.landCheck of the repository)");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoLand(ctx, *args); };
  });
}

void DefineLands(CLI::App& command, const Context& ctx, Action& action) {
  auto task = std::make_shared<std::string>();
  command.add_option("id", *task, "Only the entries of this task");
  command.callback([&ctx, &action, task] {
    action = [&ctx, task] { return DoLands(ctx, *task); };
  });
}

}  // namespace baton
