// `baton rm` and `baton clear`: ended tasks removed with their output
// (doc/tasks.md, "Removing ended tasks").
#include <fmt/format.h>

#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

int PrintRemoved(const RemoveReply& reply) {
  if (!reply.removed.empty()) {
    std::printf("removed %s, with %s output\n",
                fmt::format("{}", fmt::join(reply.removed, ", ")).c_str(),
                reply.removed.size() == 1 ? "its" : "their");
  }
  for (const RemoveSkip& kept : reply.kept)
    std::printf("kept %s: %s\n", kept.task.c_str(), kept.why.c_str());
  if (reply.removed.empty() && reply.kept.empty())
    std::printf("no ended task to remove\n");
  return kExitOk;
}

}  // namespace

void DefineRemove(CLI::App& command, const Context& ctx, Action& action) {
  auto ids = std::make_shared<std::vector<std::string>>();
  command.add_option("ids", *ids, "Ended task ids")->required();
  command.callback([&ctx, &action, ids] {
    action = [&ctx, ids] {
      return CallAndPrint(ctx, RemoveRequest{.tasks = *ids}, PrintRemoved);
    };
  });
}

void DefineClear(CLI::App& command, const Context& ctx, Action& action) {
  command.callback([&ctx, &action] {
    action = [&ctx] {
      return CallAndPrint(ctx, RemoveRequest{.ended = true}, PrintRemoved);
    };
  });
}

}  // namespace baton
