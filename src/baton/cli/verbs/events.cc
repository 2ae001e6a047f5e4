// `baton events`: an agent worker's normalized events (doc/agents.md),
// followed until it ends with --follow.
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "baton/cli/reconnect.h"
#include "baton/cli/verbs.h"
#include "baton/ipc/event_text.h"
#include "baton/util/json_fields.h"

namespace baton {
namespace {

// Waits until the task's folder changes (events.jsonl grows or appears) or
// the task ends. A wait would answer at once while a question is open, so
// none is sent then: the answer's event wakes us instead.
class EventWatch {
 public:
  Status Watch(const Context& ctx, const TaskView& task) {
    if (!inotify_) {
      const std::string& path = task.task.output_path;
      std::string dir = path.substr(0, path.rfind('/'));
      inotify_.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
      if (!inotify_ || ::inotify_add_watch(inotify_.get(), dir.c_str(),
                                           IN_MODIFY | IN_CREATE) < 0) {
        return std::unexpected(ErrnoError("inotify " + dir, errno));
      }
    }
    if (!wait_pending_ && task.task.status != TaskStatus::kWaiting) {
      // Waits go on a connection of their own, so that the events calls
      // never read (and drop) a wait's answer.
      if (!waiter_) {
        auto connected = ctx.Connect();
        if (!connected && ConnectionLost(connected.error()))
          connected = Reconnect(ctx, connected.error());
        if (!connected)
          return std::unexpected(connected.error());
        waiter_.emplace(std::move(*connected));
      }
      wait_.emplace(ctx, *waiter_,
                    WaitRequest{.tasks = {task.task.id.ToString()}});
      if (auto sent = wait_->Send(); !sent)
        return std::unexpected(sent.error());
      wait_pending_ = true;
    }
    pollfd fds[2] = {{inotify_.get(), POLLIN, 0},
                     {wait_pending_ ? wait_->fd() : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR)
      return std::unexpected(ErrnoError("poll", errno));
    if (fds[0].revents & POLLIN) {
      char buf[4096];
      while (::read(inotify_.get(), buf, sizeof buf) > 0) {
      }
    }
    if (wait_pending_ && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      // A hang-up reconnects and sends the wait again (kTimeout: not yet).
      auto reply = wait_->Read(std::chrono::milliseconds(0));
      if (!reply && reply.error().code != ErrorCode::kTimeout)
        return std::unexpected(reply.error());
      if (reply)
        wait_pending_ = false;
    }
    return {};
  }

 private:
  UniqueFd inotify_;
  std::optional<DaemonClient> waiter_;
  std::optional<ReconnectingWait> wait_;  // On waiter_.
  bool wait_pending_ = false;
};

int DoEvents(const Context& ctx, const std::string& id, bool follow) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  int64_t after = 0;
  EventWatch watch;
  for (;;) {
    // Sent again after a restart of batond: from the last event printed.
    auto reply = CallReconnecting(ctx, *client,
                                  EventsRequest{.task = id, .after = after});
    if (!reply)
      return ReportError(ctx, reply.error());
    for (const Json& event : reply->events) {
      after = std::max(after, IntAt(event, "seq"));
      if (ctx.json) {
        std::string line;
        EncodeValue(line, event);
        PrintJsonLine(line);
      } else {
        std::printf("%s\n", EventLine(event).c_str());
      }
    }
    std::fflush(stdout);
    if (!follow || IsTerminal(reply->task.task.status))
      break;
    if (auto ok = watch.Watch(ctx, reply->task); !ok)
      return ReportError(ctx, ok.error());
  }
  PrintNotices(*client);
  return kExitOk;
}

}  // namespace

void DefineEvents(CLI::App& command, const Context& ctx, Action& action) {
  auto id = std::make_shared<std::string>();
  auto follow = std::make_shared<bool>(false);
  command.add_option("id", *id, "Task id")->required();
  command.add_flag("--follow,-f", *follow, "Until it ends");
  command.callback([&ctx, &action, id, follow] {
    action = [&ctx, id, follow] { return DoEvents(ctx, *id, *follow); };
  });
}

}  // namespace baton
