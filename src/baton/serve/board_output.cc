// A task's output on the board (doc/board.md, "Output"): offset reads of its
// log, a stream per open task page that says how far the log has grown
// (inotify on the log, as `baton output --follow` does: pushed, never
// polled), and the whole log as a download, sent in pieces.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <set>

#include "baton/ipc/codec.h"
#include "baton/serve/board.h"
#include "baton/serve/http_checks.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton::serve {
namespace {

// A download's piece: read and sent once the previous one is written.
constexpr size_t kLogPiece = 64 * 1024;
// The live tasks one sizes stream follows at most (the list's first ones).
constexpr size_t kMaxSizeTasks = 200;

// One read of a task's output: bytes [from, to) of `size`; `from` bytes
// before it are not shown (the page's "earlier" asks for them).
struct BoardOutput {
  std::string task;
  int64_t from = 0;
  int64_t to = 0;
  int64_t size = 0;
  bool at_end = false;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("task", task);
    v("from", from);
    v("to", to);
    v("size", size);
    v("at_end", at_end);
    v("text", text);
  }
};

bool IsContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xc0) == 0x80;
}

// The bytes at the end of `text` that start a UTF-8 character not whole
// in it (0 when the last character is whole).
size_t CutCharacterBytes(std::string_view text) {
  size_t back = 0;
  while (back < text.size() && back < 3 &&
         IsContinuation(text[text.size() - 1 - back])) {
    ++back;
  }
  if (back == text.size())
    return 0;
  auto lead = static_cast<unsigned char>(text[text.size() - 1 - back]);
  size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length > back + 1 ? back + 1 : 0;
}

int64_t FileSize(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return -1;
  return static_cast<int64_t>(info.st_size);
}

// Sends bytes [at, end) of the log open at `fd` to `exchange`, a piece
// each time the one before is written, then ends the body.
void SendLogPiece(std::shared_ptr<UniqueFd> fd, uint64_t at, uint64_t end,
                  ExchangePtr exchange) {
  if (exchange->gone())
    return;
  if (at >= end)
    return exchange->EndEvents();
  std::string piece(std::min<uint64_t>(kLogPiece, end - at), '\0');
  ssize_t n;
  do {
    n = ::pread(fd->get(), piece.data(), piece.size(), static_cast<off_t>(at));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n < 0)
      BATON_LOG_WARN("board: reading a log to download: {}", errno);
    // A failed read ends the body early; the client sees it short.
    return exchange->EndEvents();
  }
  piece.resize(static_cast<size_t>(n));
  exchange->Send(piece);
  at += static_cast<uint64_t>(n);
  exchange->OnDrained(
      [fd, at, end, exchange] { SendLogPiece(fd, at, end, exchange); });
}

}  // namespace

void Board::Output(const HttpRequest& request, const ExchangePtr& exchange) {
  auto before =
      BoardQueryNumber(request, "before", std::numeric_limits<int64_t>::max());
  if (!before)
    return exchange->Respond(
        BoardBadInput("before must be a byte offset from 0"));
  auto after = BoardQueryNumber(request, "after", -1);
  if (!after)
    return exchange->Respond(
        BoardBadInput("after must be a byte offset from 0"));
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  uint64_t chunk = options_.output_chunk;
  // A read in `all` mode consumes nothing; its range says where the output
  // ends now, and the board reads the tail, the chunk before `before`, or
  // the chunk from `after` (a page following the end).
  daemon->Call(ReadRequest{.task = id, .mode = ReadMode::kAll},
               OrBoardError<ReadReply>(
                   exchange, [exchange, before = *before, after = *after,
                              chunk](ReadReply reply) {
                     BoardOutput out;
                     out.task = reply.task.task.id.ToString();
                     out.size = reply.to;
                     out.at_end = reply.at_end;
                     uint64_t size = static_cast<uint64_t>(reply.to);
                     uint64_t end, from;
                     if (after >= 0) {
                       from = std::min(static_cast<uint64_t>(after), size);
                       end = std::min(from + chunk, size);
                     } else {
                       end = static_cast<uint64_t>(std::min(before, reply.to));
                       from = end > chunk ? end - chunk : 0;
                     }
                     // The board shows output whole, page by page: no model's
                     // cut.
                     auto read = ReadFileRange(reply.path, from, end);
                     if (!read)
                       return exchange->Respond(BoardError(500, read.error()));
                     std::string& text = *read;
                     // Start on a character: the bytes of a cut one belong to
                     // the earlier read. A read forward ends on one instead,
                     // unless the log ends there for good.
                     size_t skip = 0;
                     if (after < 0 && from > 0) {
                       while (skip < text.size() && skip < 3 &&
                              IsContinuation(text[skip]))
                         ++skip;
                       text.erase(0, skip);
                     }
                     if (after >= 0 && !(reply.at_end && end == size))
                       text.resize(text.size() - CutCharacterBytes(text));
                     out.from = static_cast<int64_t>(from + skip);
                     out.to = out.from + static_cast<int64_t>(text.size());
                     out.text = std::move(text);
                     exchange->Respond(BoardJson(EncodeObject(out)));
                   }));
}

void Board::OutputEvents(const HttpRequest& request,
                         const ExchangePtr& exchange) {
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  // batond says where the task's log is: the page names a task, never a
  // file.
  daemon->Call(
      GetRequest{.task = id},
      OrBoardError<TaskReply>(exchange, [this, exchange, id](TaskReply reply) {
        if (exchange->gone())
          return;
        FollowLog(reply.task.task.output_path, id, exchange);
      }));
}

void Board::OutputSizes(const HttpRequest& request,
                        const ExchangePtr& exchange) {
  std::set<std::string> ids;
  std::string text = QueryValue(request.target, "tasks").value_or("");
  for (size_t at = 0; at <= text.size();) {
    size_t comma = std::min(text.find(',', at), text.size());
    if (comma > at)
      ids.emplace(text.substr(at, comma - at));
    at = comma + 1;
  }
  if (ids.empty() || ids.size() > kMaxSizeTasks) {
    return exchange->Respond(BoardBadInput(fmt::format(
        "give 1 to {} task ids: ?tasks=shell-1,agent-2", kMaxSizeTasks)));
  }
  AsyncDaemonClient* daemon = DaemonFor(exchange);
  if (!daemon)
    return;
  // One `list` says where the live tasks' logs are (the page names tasks,
  // never files); ids that are not live ones are left out.
  ListView view;
  view.ended_limit = 1;
  daemon->Call(
      ListRequest{.view = true, .filter = view},
      OrBoardError<ListReply>(
          exchange, [this, exchange, ids = std::move(ids)](ListReply reply) {
            if (exchange->gone() || !WatchingLogs(exchange))
              return;
            exchange->StartEvents({{"Cache-Control", "no-store"}});
            std::vector<int> watched;
            for (const TaskView& task : reply.tasks) {
              std::string id = task.task.id.ToString();
              if (!ids.contains(id))
                continue;
              int wd = WatchLog(task.task.output_path, id, exchange);
              if (wd < 0)
                continue;  // Not started yet: the page asks again then.
              watched.push_back(wd);
              exchange->SendEvent(
                  SizeEvent(log_watches_[wd], FileSize(task.task.output_path)));
            }
            exchange->OnGone([this, watched, gone = exchange.get()] {
              for (int wd : watched)
                Unwatch(wd, gone);
            });
          }));
}

bool Board::WatchingLogs(const ExchangePtr& stream) {
  if (inotify_)
    return true;
  inotify_ = UniqueFd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!inotify_ || !loop_->AddFd(inotify_.get(), EPOLLIN,
                                 [this](uint32_t) { OnLogsChanged(); })) {
    inotify_.reset();
    stream->Respond(BoardError(
        500, ErrnoError("board: cannot watch task logs (inotify)", errno)));
    return false;
  }
  return true;
}

int Board::WatchLog(const std::string& path, const std::string& task,
                    const ExchangePtr& stream) {
  int wd = ::inotify_add_watch(inotify_.get(), path.c_str(), IN_MODIFY);
  if (wd < 0)
    return -1;
  LogWatch& watch = log_watches_[wd];
  watch.path = path;
  watch.task = task;
  watch.streams.push_back(stream);
  return wd;
}

void Board::Unwatch(int wd, const HttpExchange* stream) {
  auto found = log_watches_.find(wd);
  if (found == log_watches_.end())
    return;
  std::erase_if(found->second.streams, [stream](const ExchangePtr& open) {
    return open.get() == stream;
  });
  if (found->second.streams.empty()) {
    ::inotify_rm_watch(inotify_.get(), wd);
    log_watches_.erase(found);
  }
}

std::string Board::SizeEvent(const LogWatch& watch, int64_t size) const {
  return fmt::format(
      "{{\"task\":{},\"size\":{}}}",
      nlohmann::json(watch.task)
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      size);
}

void Board::FollowLog(const std::string& path, const std::string& task,
                      const ExchangePtr& stream) {
  if (!WatchingLogs(stream))
    return;
  int wd = WatchLog(path, task, stream);
  if (wd < 0) {
    return stream->Respond(
        BoardError(404, ErrnoError("cannot follow the log " + path +
                                       " (the task may not have started yet)",
                                   errno)));
  }
  stream->StartEvents({{"Cache-Control", "no-store"}});
  stream->OnGone([this, wd, gone = stream.get()] { Unwatch(wd, gone); });
  // The size now, to this page only (the others know it).
  stream->SendEvent(SizeEvent(log_watches_[wd], FileSize(path)));
}

void Board::OnLogsChanged() {
  alignas(inotify_event) char buffer[4096];
  std::set<int> grown;
  std::set<int> dropped;
  ssize_t n;
  while ((n = ::read(inotify_.get(), buffer, sizeof buffer)) > 0) {
    for (char* at = buffer; at < buffer + n;) {
      auto* event = reinterpret_cast<inotify_event*>(at);
      (event->mask & IN_IGNORED ? dropped : grown).insert(event->wd);
      at += sizeof(inotify_event) + event->len;
    }
  }
  // A burst of writes is one event per log: its size once.
  for (int wd : grown) {
    if (auto found = log_watches_.find(wd); found != log_watches_.end())
      TellSize(found->second);
  }
  // The log is gone (deleted): its pages hear no more of it.
  for (int wd : dropped) {
    auto found = log_watches_.find(wd);
    if (found == log_watches_.end())
      continue;
    auto streams = std::move(found->second.streams);
    log_watches_.erase(found);
    for (auto& stream : streams) {
      stream->OnGone(nullptr);
      stream->EndEvents();
    }
  }
}

void Board::TellSize(LogWatch& watch) {
  int64_t size = FileSize(watch.path);
  if (size == watch.told)
    return;
  watch.told = size;
  auto streams = watch.streams;  // A write may find a client gone.
  std::string event = SizeEvent(watch, size);
  for (auto& stream : streams)
    stream->SendEvent(event);
}

void Board::Log(const HttpRequest& request, const ExchangePtr& exchange) {
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  daemon->Call(ReadRequest{.task = id, .mode = ReadMode::kAll},
               OrBoardError<ReadReply>(exchange, [exchange](ReadReply reply) {
                 auto fd = std::make_shared<UniqueFd>(
                     ::open(reply.path.c_str(), O_RDONLY | O_CLOEXEC));
                 if (!*fd) {
                   return exchange->Respond(BoardError(
                       500, ErrnoError("open " + reply.path, errno)));
                 }
                 std::string name = reply.task.task.id.ToString();
                 exchange->StartBody(
                     {{"Content-Type", "text/plain; charset=utf-8"},
                      {"Content-Disposition",
                       fmt::format("attachment; filename=\"{}.log\"", name)},
                      {"Cache-Control", "no-store"},
                      {"X-Content-Type-Options", "nosniff"}});
                 // Only what batond says may be read: of a live task, up to
                 // where the redactor has decided (a token still being
                 // printed lies past it, unmasked yet).
                 SendLogPiece(fd, static_cast<uint64_t>(reply.from),
                              static_cast<uint64_t>(reply.to), exchange);
               }));
}

void Board::Diff(const HttpRequest& request, const ExchangePtr& exchange) {
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  daemon->Call(
      GetRequest{.task = id},
      OrBoardError<TaskReply>(exchange, [exchange](TaskReply reply) {
        const auto& evidence = reply.task.task.evidence;
        if (!evidence || evidence->diff_path.empty()) {
          return exchange->Respond(BoardError(
              404, Error{ErrorCode::kNotFound,
                         fmt::format("{} kept no diff: it had no checks, its "
                                     "folder is not a git repository, or it "
                                     "changed nothing there",
                                     reply.task.task.id.ToString())}));
        }
        // At most 1 MiB (batond cuts it): read whole.
        auto diff = ReadFile(evidence->diff_path);
        if (!diff)
          return exchange->Respond(BoardError(500, diff.error()));
        HttpResponse response;
        response.headers = {{"Content-Type", "text/plain; charset=utf-8"},
                            {"Cache-Control", "no-store"},
                            {"X-Content-Type-Options", "nosniff"}};
        response.body = std::move(*diff);
        exchange->Respond(std::move(response));
      }));
}

}  // namespace baton::serve
