// `baton notices`: the tasks of this session that ended (or ask) unseen,
// each told once.
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct NoticeList {
  std::vector<Notice> notices;
  template <class V>
  void Fields(V& v) {
    v("notices", notices);
  }
};

int DoNotices(const Context& ctx) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto reply = client->Call(NoticesRequest{});
  if (!reply)
    return ReportError(ctx, reply.error());
  NoticeList list{client->TakeNotices()};
  if (ctx.json) {
    PrintJsonLine(EncodeObject(list));
  } else {
    for (const Notice& notice : list.notices)
      std::printf("%s\n", notice.text.c_str());
  }
  return kExitOk;
}

}  // namespace

void DefineNotices(CLI::App& command, const Context& ctx, Action& action) {
  command.callback(
      [&ctx, &action] { action = [&ctx] { return DoNotices(ctx); }; });
}

}  // namespace baton
