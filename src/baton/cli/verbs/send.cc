// `baton send`: a follow-up (after the current turn) or a steer (into it)
// for a running agent worker.
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct SendArgs {
  std::string id;
  std::vector<std::string> words;
  bool steer = false;
};

int DoSend(const Context& ctx, const SendArgs& args) {
  SendRequest request{
      .task = args.id,
      .message = JoinWords(args.words),
      .mode = args.steer ? SendMode::kSteer : SendMode::kFollowup};
  if (auto ok = CheckArgumentText("the message", request.message); !ok)
    return ReportError(ctx, ok.error());
  return CallAndPrint(ctx, request, [](const SendReply& reply) {
    std::printf("%s: %s\n", reply.task.c_str(), reply.delivery.c_str());
    return kExitOk;
  });
}

}  // namespace

void DefineSend(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<SendArgs>();
  command.add_option("id", args->id, "Task id")->required();
  command.add_option("message", args->words, "The message")->required();
  command.add_flag("--steer", args->steer,
                   "Into the running turn (else after it)");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoSend(ctx, *args); };
  });
}

}  // namespace baton
