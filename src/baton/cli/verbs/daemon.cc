// `baton daemon start|stop|upgrade|status`: manage batond itself
// (install-service: verbs/daemon_service.cc).
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"
#include "baton/util/detached_process.h"
#include "baton/util/file_util.h"
#include "baton/util/state_paths.h"
#include "baton/util/version.h"

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
  std::string version = status->version.empty() ? "older" : status->version;
  std::printf("  baton:  %s%s%s\n", version.c_str(),
              status->executable.empty()
                  ? ""
                  : (" (" + status->executable + ")").c_str(),
              version == kBatonVersion
                  ? ""
                  : fmt::format("; this CLI is {}: baton daemon upgrade "
                                "replaces it, tasks keep running",
                                kBatonVersion)
                        .c_str());
  return kExitOk;
}

// Asks batond to stop and waits until its process is gone. The daemon
// closes the connection as it exits; then a pidfd (it works for a process
// that is not our child) says when the process itself is gone, so a start
// right after the stop finds no old daemon.
Result<ShutdownReply> StopAndWait(DaemonClient& client, bool kill_tasks) {
  auto result = client.Call(ShutdownRequest{.kill_tasks = kill_tasks});
  if (!result)
    return result;
  int64_t daemon_pid = result->daemon_pid;
  UniqueFd pidfd(daemon_pid > 0 ? static_cast<int>(
                                      ::syscall(SYS_pidfd_open, daemon_pid, 0))
                                : -1);
  while (client.ReadReply(milliseconds(10'000))) {
  }
  if (pidfd) {
    pollfd pfd{pidfd.get(), POLLIN, 0};
    ::poll(&pfd, 1, 10'000);
  }
  return result;
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
  auto result = StopAndWait(*client, kill_tasks);
  if (!result)
    return ReportError(ctx, result.error());
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

// "pid 4242 (baton 0.9.0-12-gabc, /usr/bin/baton)"; an older batond names
// neither its version nor its file.
std::string DaemonText(const DaemonStatusReply& status) {
  return fmt::format(
      "pid {} ({}{})", status.daemon_pid,
      status.version.empty() ? "an older baton" : "baton " + status.version,
      status.executable.empty() ? "" : ", " + status.executable);
}

// How long the new batond may take to find the supervisor the old one
// left: it connects at start, before it takes requests, so this is only a
// bound for a slow machine.
constexpr milliseconds kHandoverWait{10'000};

// Replaces a running batond with this baton's (doc/install.md, "Upgrades"):
// the old one stops without touching its tasks, this binary starts the
// new one, which takes over the supervisor and with it every task; clients
// waiting on the old one reconnect. Checks the handover.
int DoUpgrade(const Context& ctx) {
  auto client = ctx.Connect(/*autostart=*/false);
  if (!client) {
    if (ctx.json) {
      PrintJsonLine(R"({"upgraded":false,"running":false})");
    } else {
      std::printf(
          "batond is not running; the next command starts this baton's "
          "(baton %s)\n",
          kBatonVersion);
    }
    return kExitOk;
  }
  auto before = client->Call(DaemonStatusRequest{});
  if (!before)
    return ReportError(ctx, before.error());
  // Whoever starts the next batond (a waiting client that reconnects may
  // come first) starts this file; the new batond removes the note.
  auto paths = StatePaths::FromEnvironment("");
  if (!paths)
    return ReportError(ctx, paths.error());
  std::string next = paths->next_daemon();
  if (auto noted = WriteFileAtomic(next, SelfExecutable()); !noted)
    return ReportError(ctx, noted.error());
  auto stopped = StopAndWait(*client, /*kill_tasks=*/false);
  if (!stopped) {
    ::unlink(next.c_str());
    return ReportError(ctx, stopped.error());
  }
  auto fresh = ctx.Connect(/*autostart=*/true);
  ::unlink(next.c_str());  // Gone already, unless the start failed.
  if (!fresh) {
    return ReportError(
        ctx,
        {ErrorCode::kUnavailable,
         fmt::format("batond {} stopped, but the new one did not start: {}; "
                     "its tasks keep running under the supervisor, and the "
                     "next batond that starts picks them up",
                     DaemonText(*before), fresh.error().message)});
  }
  auto after = fresh->Call(DaemonStatusRequest{});
  auto deadline = std::chrono::steady_clock::now() + kHandoverWait;
  while (after && before->supervisor_pid != 0 &&
         after->supervisor_pid != before->supervisor_pid &&
         std::chrono::steady_clock::now() < deadline) {
    ::usleep(20'000);
    after = fresh->Call(DaemonStatusRequest{});
  }
  if (!after)
    return ReportError(ctx, after.error());
  if (before->supervisor_pid != 0 &&
      after->supervisor_pid != before->supervisor_pid) {
    return ReportError(
        ctx, {ErrorCode::kInternal,
              fmt::format("the new batond {} did not take over supervisor "
                          "pid {} (it has {}); its tasks still run under "
                          "it: see {}/batond.log",
                          DaemonText(*after), before->supervisor_pid,
                          after->supervisor_pid
                              ? fmt::format("pid {}", after->supervisor_pid)
                              : std::string("none"),
                          after->home)});
  }
  if (ctx.json) {
    PrintJsonLine(fmt::format(R"({{"upgraded":true,"before":{},"after":{}}})",
                              EncodeObject(*before), EncodeObject(*after)));
    return kExitOk;
  }
  std::printf("batond upgraded: %s -> %s\n", DaemonText(*before).c_str(),
              DaemonText(*after).c_str());
  if (before->supervisor_pid != 0) {
    std::printf("supervisor pid %lld kept, with %lld live tasks\n",
                static_cast<long long>(after->supervisor_pid),
                static_cast<long long>(after->live_tasks));
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
  command
      .add_subcommand("upgrade",
                      "Replace a running batond with this baton's; tasks "
                      "keep running")
      ->callback(
          [&ctx, &action] { action = [&ctx] { return DoUpgrade(ctx); }; });
  command.add_subcommand("status", "Is batond running?")
      ->callback(
          [&ctx, &action] { action = [&ctx] { return DoStatus(ctx); }; });
  DefineDaemonService(command, ctx, action);
}

}  // namespace baton
