// `baton send`: a follow-up (after the current turn) or a steer (into it)
// for a running agent worker; with --list, --replace or --withdraw, the
// follow-ups still queued, listed or changed before their delivery.
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct SendArgs {
  std::string id;
  std::vector<std::string> words;
  bool steer = false;
  bool list = false;
  std::string replace;
  std::string withdraw;
};

Status CheckQueueArgs(const SendArgs& args) {
  int actions = (args.list ? 1 : 0) + (args.replace.empty() ? 0 : 1) +
                (args.withdraw.empty() ? 0 : 1);
  if (actions > 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "give one of --list, --replace and --withdraw");
  }
  if (args.steer) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--steer sends a new message; it does not go with "
                     "--list, --replace or --withdraw");
  }
  if (!args.replace.empty() && args.words.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--replace " + args.replace +
                         " needs the new text: baton send ID --replace " +
                         args.replace + " TEXT");
  }
  if (args.replace.empty() && !args.words.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--list and --withdraw take no message");
  }
  return {};
}

int DoQueued(const Context& ctx, const SendArgs& args) {
  if (auto ok = CheckQueueArgs(args); !ok)
    return ReportError(ctx, ok.error(), kExitUsage);
  QueuedRequest request{.task = args.id,
                        .replace = args.replace,
                        .withdraw = args.withdraw,
                        .message = JoinWords(args.words)};
  if (auto ok = CheckArgumentText("the message", request.message); !ok)
    return ReportError(ctx, ok.error());
  return CallAndPrint(ctx, request, [&](const QueuedReply& reply) {
    if (!args.replace.empty())
      std::printf("%s: %s replaced\n", reply.task.c_str(),
                  reply.changed.c_str());
    if (!args.withdraw.empty()) {
      std::printf("%s: %s withdrawn\n", reply.task.c_str(),
                  reply.changed.c_str());
    }
    if (reply.queued.empty())
      std::printf("%s: no message is queued\n", reply.task.c_str());
    else
      std::printf("%s: queued, next first:\n", reply.task.c_str());
    for (const QueuedMessage& message : reply.queued)
      std::printf("  %s %s\n", message.id.c_str(), message.text.c_str());
    return kExitOk;
  });
}

int DoSend(const Context& ctx, const SendArgs& args) {
  if (args.list || !args.replace.empty() || !args.withdraw.empty())
    return DoQueued(ctx, args);
  if (args.words.empty()) {
    return ReportError(ctx,
                       Error{ErrorCode::kInvalidArgument,
                             "give the message: baton send ID MESSAGE..."},
                       kExitUsage);
  }
  SendRequest request{
      .task = args.id,
      .message = JoinWords(args.words),
      .mode = args.steer ? SendMode::kSteer : SendMode::kFollowup};
  if (auto ok = CheckArgumentText("the message", request.message); !ok)
    return ReportError(ctx, ok.error());
  return CallAndPrint(ctx, request, [](const SendReply& reply) {
    std::printf("%s: %s %s\n", reply.task.c_str(), reply.id.c_str(),
                reply.delivery.c_str());
    return kExitOk;
  });
}

}  // namespace

void DefineSend(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<SendArgs>();
  command.add_option("id", args->id, "Task id")->required();
  command.add_option("message", args->words, "The message");
  command.add_flag("--steer", args->steer,
                   "Into the running turn (else after it)");
  command.add_flag("--list", args->list,
                   "List the queued follow-ups (not yet delivered)");
  command.add_option("--replace", args->replace,
                     "Replace the queued follow-up with this id (m-3) by "
                     "MESSAGE");
  command.add_option("--withdraw", args->withdraw,
                     "Withdraw the queued follow-up with this id (m-3)");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoSend(ctx, *args); };
  });
}

}  // namespace baton
