// `baton attach`: holds the session attached, like an MCP connection; its
// lease starts when this command ends.
#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"

namespace baton {
namespace {

int DoAttach(const Context& ctx) {
  if (ctx.session.empty()) {
    return ReportError(ctx, {ErrorCode::kInvalidArgument,
                             "attach needs a session: --session NAME or "
                             "BATON_SESSION"});
  }
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto reply = client->Call(AttachRequest{});
  if (!reply)
    return ReportError(ctx, reply.error());
  if (!ctx.json) {
    std::fprintf(stderr,
                 "session %s attached; its tasks are stopped %s after this "
                 "command ends (ctrl-c to detach)\n",
                 ctx.session.c_str(), ShortSpan(reply->lease_ms).c_str());
  }
  // Hold the connection until the daemon goes away or we are interrupted.
  while (client->ReadReply()) {
  }
  return kExitOk;
}

}  // namespace

void DefineAttach(CLI::App& command, const Context& ctx, Action& action) {
  command.callback(
      [&ctx, &action] { action = [&ctx] { return DoAttach(ctx); }; });
}

}  // namespace baton
