// `baton output`: a task's output, whole, new since this session's last
// read, from an offset, or followed until the task ends.
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <set>
#include <utility>

#include "baton/cli/reconnect.h"
#include "baton/cli/verbs.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

struct OutputArgs {
  std::string id;
  bool follow = false;
  bool new_only = false;
  std::optional<uint64_t> offset;
};

// A piece of output as a JSON document (--json).
struct OutputChunk {
  std::string id;
  int64_t from = 0;
  int64_t to = 0;
  std::string data;
  template <class V>
  void Fields(V& v) {
    v("id", id);
    v("from", from);
    v("to", to);
    v("data", data);
  }
};

// Writes [from, to) of the log to stdout (or as JSON). Returns bytes done.
Result<uint64_t> EmitRange(const Context& ctx, const std::string& id,
                           const std::string& path, uint64_t from,
                           uint64_t to) {
  if (to <= from)
    return 0;
  if (!ctx.json) {
    std::fflush(stdout);
    return CopyFileRange(path, from, to, 1);
  }
  auto text = ReadFile(path);
  if (!text)
    return std::unexpected(text.error());
  uint64_t end = std::min<uint64_t>(to, text->size());
  OutputChunk chunk{id, static_cast<int64_t>(from), static_cast<int64_t>(end),
                    from < end ? text->substr(from, end - from) : ""};
  PrintJsonLine(EncodeObject(chunk));
  return end - from;
}

// Streams the log as it grows until the task ends: inotify says when it
// grows, a wait on batond says when the task ends. No polling. Returns the
// position reached. Each growth asks batond how far the log may be shown
// (a read at our own position, on a connection of its own: secrets are
// masked first and a capped log ends at its cap, doc/redaction.md), so a
// restart of batond (both reconnect) neither repeats nor drops any byte.
Result<uint64_t> Follow(const Context& ctx, DaemonClient& client,
                        const std::string& id, const std::string& path,
                        uint64_t pos) {
  auto reader = ctx.Connect();
  if (!reader && ConnectionLost(reader.error()))
    reader = Reconnect(ctx, reader.error());
  if (!reader)
    return std::unexpected(reader.error());
  UniqueFd inotify(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  // A task that has not started has no log yet (the spawn makes it, and
  // maybe its folder): the nearest folder above it that exists is watched
  // for what is made in it, again at each event, until the log is there.
  bool watching_log = false;
  std::set<int> folder_watches;
  auto watch_log = [&] {
    if (!inotify || watching_log)
      return;
    std::string dir = path;
    for (size_t slash;
         (slash = dir.rfind('/')) != std::string::npos && slash > 0;) {
      dir.resize(slash);
      int folder = ::inotify_add_watch(inotify.get(), dir.c_str(),
                                       IN_CREATE | IN_MOVED_TO);
      if (folder >= 0) {
        folder_watches.insert(folder);
        break;
      }
    }
    // After the folder's watch: a log made meanwhile is not missed.
    watching_log =
        ::inotify_add_watch(inotify.get(), path.c_str(), IN_MODIFY) >= 0;
    if (watching_log) {
      // Other tasks' files made there are no news of this one.
      for (int folder : std::exchange(folder_watches, {}))
        ::inotify_rm_watch(inotify.get(), folder);
    }
  };
  watch_log();
  ReconnectingWait wait(ctx, client, WaitRequest{.tasks = {id}});
  if (auto sent = wait.Send(); !sent)
    return std::unexpected(sent.error());
  for (;;) {
    pollfd fds[2] = {{wait.fd(), POLLIN, 0}, {inotify.get(), POLLIN, 0}};
    int ready = ::poll(fds, inotify ? 2 : 1, -1);
    if (ready < 0 && errno == EINTR)
      continue;
    if (fds[1].revents & POLLIN) {
      char events[4096];
      while (::read(inotify.get(), events, sizeof events) > 0) {
      }
      watch_log();
      auto range =
          CallReconnecting(ctx, *reader,
                           ReadRequest{.task = id,
                                       .mode = ReadMode::kOffset,
                                       .offset = static_cast<int64_t>(pos)});
      if (!range)
        return std::unexpected(range.error());
      auto more =
          EmitRange(ctx, id, path, pos, static_cast<uint64_t>(range->to));
      if (!more)
        return std::unexpected(more.error());
      pos += *more;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      // A hang-up reconnects and sends the wait again; then back to poll.
      auto reply = wait.Read(std::chrono::milliseconds(0));
      if (!reply && reply.error().code == ErrorCode::kTimeout)
        continue;
      if (!reply)
        return std::unexpected(reply.error());
      return pos;  // The task ended.
    }
  }
}

// [from, to) of `request`'s range, then, with `follow`, what the log gets
// until the task ends.
Status EmitAndFollow(const Context& ctx, DaemonClient& client,
                     const std::string& id, ReadRequest request, bool follow) {
  auto range = client.Call(request);
  if (!range)
    return std::unexpected(range.error());
  auto copied =
      EmitRange(ctx, id, range->path, static_cast<uint64_t>(range->from),
                static_cast<uint64_t>(range->to));
  if (!copied)
    return std::unexpected(copied.error());
  uint64_t pos = static_cast<uint64_t>(range->from) + *copied;
  if (!follow || range->at_end)
    return {};
  auto followed = Follow(ctx, client, id, range->path, pos);
  if (!followed)
    return std::unexpected(followed.error());
  pos = *followed;
  // A consuming follow also moves this session's cursor to the end.
  if (request.mode != ReadMode::kNew)
    request.mode = ReadMode::kAll;
  auto last = CallReconnecting(ctx, client, request);
  if (!last)
    return std::unexpected(last.error());
  auto rest =
      EmitRange(ctx, id, range->path, pos, static_cast<uint64_t>(last->to));
  if (!rest)
    return std::unexpected(rest.error());
  return {};
}

int DoOutput(const Context& ctx, const OutputArgs& args) {
  if (args.new_only && args.offset) {
    return ReportError(ctx, {ErrorCode::kInvalidArgument,
                             "--new and --offset do not go together; use one"});
  }
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  ReadRequest request{.task = args.id,
                      .mode = args.new_only ? ReadMode::kNew
                              : args.offset ? ReadMode::kOffset
                                            : ReadMode::kAll};
  if (args.offset) {
    if (*args.offset > static_cast<uint64_t>(INT64_MAX)) {
      return ReportError(ctx, {ErrorCode::kInvalidArgument,
                               "--offset is beyond any file's size"});
    }
    request.offset = static_cast<int64_t>(*args.offset);
  }
  if (auto done = EmitAndFollow(ctx, *client, args.id, request, args.follow);
      !done) {
    return ReportError(ctx, done.error());
  }
  PrintNotices(*client);
  return kExitOk;
}

}  // namespace

Status StreamOutput(const Context& ctx, DaemonClient& client,
                    const std::string& id) {
  return EmitAndFollow(ctx, client, id, ReadRequest{.task = id},
                       /*follow=*/true);
}

void DefineOutput(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<OutputArgs>();
  command.add_option("id", args->id, "Task id")->required();
  command.add_flag("--follow,-f", args->follow, "Stream until the task ends");
  command.add_flag("--new", args->new_only,
                   "Only what came since this session's last --new read");
  command.add_option("--offset", args->offset, "Start at this byte offset");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoOutput(ctx, *args); };
  });
}

}  // namespace baton
