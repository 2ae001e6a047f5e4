// `baton status`: one task in detail (consumes nothing).
#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"

namespace baton {

void DefineStatus(CLI::App& command, const Context& ctx, Action& action) {
  auto id = std::make_shared<std::string>();
  command.add_option("id", *id, "Task id")->required();
  command.callback([&ctx, &action, id] {
    action = [&ctx, id] {
      return CallAndPrint(ctx, GetRequest{.task = *id},
                          [](const TaskReply& reply) {
                            std::fputs(TaskDetails(reply.task).c_str(), stdout);
                            return kExitOk;
                          });
    };
  });
}

}  // namespace baton
