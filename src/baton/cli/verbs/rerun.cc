// `baton rerun`: an ended task again, as a new task (doc/tasks.md, "Run
// again"), with this shell's environment.
#include "baton/cli/task_start.h"
#include "baton/cli/verbs.h"
#include "baton/util/environment.h"

namespace baton {

void DefineRerun(CLI::App& command, const Context& ctx, Action& action) {
  auto id = std::make_shared<std::string>();
  auto wait = std::make_shared<bool>(false);
  command.add_option("id", *id, "The ended task's id")->required();
  command.add_flag("--wait", *wait,
                   "Wait for the new task and exit with its exit code");
  command.callback([&ctx, &action, id, wait] {
    action = [&ctx, id, wait] {
      RerunRequest request{.task = *id, .base_env = ProcessEnvironment()};
      return StartTask(ctx, request,
                       *wait ? AfterStart::kWaitForEnd : AfterStart::kReturn);
    };
  });
}

}  // namespace baton
