// `baton ls`: the session's live tasks and the recent ended ones.
#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"

namespace baton {

void DefineList(CLI::App& command, const Context& ctx, Action& action) {
  auto all = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  command.add_flag("--all,-a", *all, "Include all ended tasks");
  command.add_flag("--quiet,-q", *quiet,
                   "Only the ids, one a line (what shell completion reads)");
  command.callback([&ctx, &action, all, quiet] {
    action = [&ctx, all, quiet] {
      return CallAndPrint(
          ctx, ListRequest{.all = *all}, [&](const ListReply& list) {
            if (*quiet) {
              for (const TaskView& view : list.tasks)
                std::printf("%s\n", view.task.id.ToString().c_str());
              return kExitOk;
            }
            if (list.tasks.empty()) {
              std::printf("no tasks%s\n",
                          *all ? "" : " (baton ls --all shows ended ones)");
            } else {
              std::fputs(TaskTable(list.tasks).c_str(), stdout);
            }
            if (list.hidden) {
              std::printf(
                  "... and %lld older ended tasks (baton ls "
                  "--all)\n",
                  static_cast<long long>(list.hidden));
            }
            return kExitOk;
          });
    };
  });
}

}  // namespace baton
