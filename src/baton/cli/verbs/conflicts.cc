// `baton conflicts [ID]`: the conflict radar's current overlaps between
// live agent workers in worktrees of one repository (doc/conflicts.md):
// which two tasks changed the same files, and whether their changes would
// conflict. batond answers from its last rounds; the CLI prints them.
#include <cstdio>

#include "baton/cli/verbs.h"
#include "baton/ipc/task_text.h"

namespace baton {
namespace {

int DoConflicts(const Context& ctx, const std::string& task) {
  return CallAndPrint(
      ctx, ConflictsRequest{.task = task}, [](const ConflictsReply& reply) {
        if (reply.overlaps.empty()) {
          std::printf(
              "no overlaps (%lld live worktree task%s watched; the radar "
              "watches repositories with two or more)\n",
              static_cast<long long>(reply.watched),
              reply.watched == 1 ? "" : "s");
          return kExitOk;
        }
        for (const OverlapInfo& overlap : reply.overlaps)
          std::printf("%s\n", OverlapText(overlap).c_str());
        return kExitOk;
      });
}

}  // namespace

void DefineConflicts(CLI::App& command, const Context& ctx, Action& action) {
  auto task = std::make_shared<std::string>();
  command.add_option("id", *task, "Only the overlaps of this task");
  command.callback([&ctx, &action, task] {
    action = [&ctx, task] { return DoConflicts(ctx, *task); };
  });
}

}  // namespace baton
