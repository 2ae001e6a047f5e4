#include "baton/cli/task_start.h"

#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/wait_report.h"
#include "baton/util/environment.h"

namespace baton {

template <class R>
Status PlaceTask(R& request, const PlacementFlags& flags) {
  std::string cwd = flags.cwd.empty() ? CurrentDir() : flags.cwd;
  if (cwd[0] != '/')
    cwd = CurrentDir() + "/" + cwd;
  request.cwd = cwd;
  if (!flags.timeout.empty()) {
    auto timeout = ParseDurationFlag("--timeout", flags.timeout);
    if (!timeout)
      return std::unexpected(timeout.error());
    request.timeout = *timeout;
  }
  request.checks = flags.checks;
  request.base_env = ProcessEnvironment();
  return {};
}

template Status PlaceTask(RunRequest&, const PlacementFlags&);
template Status PlaceTask(DelegateRequest&, const PlacementFlags&);

template <class R>
int StartTask(const Context& ctx, const R& request, AfterStart after) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto reply = client->Call(request);
  if (!reply)
    return ReportError(ctx, reply.error());
  const TaskView& task = reply->task;
  std::string id = task.task.id.ToString();
  PrintReply(ctx, *client, *reply, [&](const TaskReply&) {
    std::printf("%s\n", id.c_str());
    std::fflush(stdout);
    return kExitOk;
  });
  if (!ctx.json) {
    if (task.task.status == TaskStatus::kFailed)
      std::fprintf(stderr, "baton: %s\n", TaskSummaryLine(task).c_str());
    // batond ran another adapter than the profile's (doc/agents.md).
    if (task.task.spec.agent && !task.task.spec.agent->note.empty()) {
      std::fprintf(stderr, "baton: %s: %s\n", id.c_str(),
                   task.task.spec.agent->note.c_str());
    }
  }
  if (after == AfterStart::kReturn)
    return kExitOk;
  bool until_end = after == AfterStart::kWaitForEnd;
  return WaitAndReport(
      ctx, *client,
      {.ids = {id}, .all = until_end, .exit_like_task = until_end});
}

template int StartTask(const Context&, const RunRequest&, AfterStart);
template int StartTask(const Context&, const DelegateRequest&, AfterStart);

}  // namespace baton
