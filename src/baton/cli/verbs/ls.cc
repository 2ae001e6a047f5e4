// `baton ls`: the session's live tasks and the recent ended ones.
#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"

namespace baton {

void DefineList(CLI::App& command, const Context& ctx, Action& action) {
  auto all = std::make_shared<bool>(false);
  command.add_flag("--all,-a", *all, "Include all ended tasks");
  command.callback([&ctx, &action, all] {
    action = [&ctx, all] {
      return CallAndPrint(
          ctx, ListRequest{.all = *all}, [&](const ListReply& list) {
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
