// `baton daemon start|stop|status`: manage batond itself (install-service:
// verbs/daemon_service.cc).
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

int DoStart(const Context& ctx) {
  return CallAndPrint(ctx, DaemonStatusRequest{},
                      [](const DaemonStatusReply& status) {
                        std::printf("batond running (pid %lld) on %s\n",
                                    static_cast<long long>(status.daemon_pid),
                                    status.socket.c_str());
                        return kExitOk;
                      });
}

int DoStatus(const Context& ctx) {
  auto client = ctx.Connect(/*autostart=*/false);
  if (!client) {
    if (ctx.json) {
      PrintJsonLine(R"({"running":false})");
    } else {
      std::printf("batond is not running\n");
    }
    return kExitFailed;
  }
  auto status = client->Call(DaemonStatusRequest{});
  if (!status)
    return ReportError(ctx, status.error());
  if (ctx.json) {
    std::string doc = EncodeObject(*status);
    doc.insert(1, R"("running":true,)");
    PrintJsonLine(doc);
    return kExitOk;
  }
  std::string supervisor =
      status->supervisor_pid
          ? fmt::format("supervisor pid {}", status->supervisor_pid)
          : "no supervisor connected";
  std::printf(
      "batond running (pid %lld), %s, %lld live tasks, up %s\n  home:   "
      "%s\n  socket: %s\n",
      static_cast<long long>(status->daemon_pid), supervisor.c_str(),
      static_cast<long long>(status->live_tasks),
      ShortSpan(status->uptime_ms).c_str(), status->home.c_str(),
      status->socket.c_str());
  return kExitOk;
}

int DoStop(const Context& ctx, bool kill_tasks) {
  auto client = ctx.Connect(/*autostart=*/false);
  if (!client) {
    if (ctx.json)
      PrintJsonLine(R"({"stopped":false,"running":false})");
    else
      std::printf("batond is not running\n");
    return kExitOk;
  }
  auto result = client->Call(ShutdownRequest{.kill_tasks = kill_tasks});
  if (!result)
    return ReportError(ctx, result.error());
  // The daemon closes the connection as it exits; then wait for the
  // process itself to be gone (a pidfd works for a process that is not our
  // child), so a start right after the stop finds no old daemon.
  int64_t daemon_pid = result->daemon_pid;
  UniqueFd pidfd(daemon_pid > 0 ? static_cast<int>(
                                      ::syscall(SYS_pidfd_open, daemon_pid, 0))
                                : -1);
  while (client->ReadReply(milliseconds(10'000))) {
  }
  if (pidfd) {
    pollfd pfd{pidfd.get(), POLLIN, 0};
    ::poll(&pfd, 1, 10'000);
  }
  if (ctx.json) {
    PrintJsonLine(fmt::format(R"({{"stopped":true,"live_tasks":{}}})",
                              result->live_tasks));
  } else if (result->live_tasks) {
    std::printf(
        "batond stopped; %lld tasks keep running under the supervisor and "
        "are picked up by the next batond\n",
        static_cast<long long>(result->live_tasks));
  } else {
    std::printf("batond stopped\n");
  }
  return kExitOk;
}

}  // namespace

void DefineDaemon(CLI::App& command, const Context& ctx, Action& action) {
  command.require_subcommand(1);
  command.add_subcommand("start", "Start batond if it is not running")
      ->callback([&ctx, &action] { action = [&ctx] { return DoStart(ctx); }; });
  auto kill_tasks = std::make_shared<bool>(false);
  auto* stop = command.add_subcommand(
      "stop", "Stop batond (tasks keep running unless --kill-tasks)");
  stop->add_flag("--kill-tasks", *kill_tasks, "Kill every live task first");
  stop->callback([&ctx, &action, kill_tasks] {
    action = [&ctx, kill_tasks] { return DoStop(ctx, *kill_tasks); };
  });
  command.add_subcommand("status", "Is batond running?")
      ->callback(
          [&ctx, &action] { action = [&ctx] { return DoStatus(ctx); }; });
  DefineDaemonService(command, ctx, action);
}

}  // namespace baton
