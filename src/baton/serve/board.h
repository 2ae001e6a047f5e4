// The board of `baton serve` (doc/board.md): a live web page where a person
// sees the tasks and steers them. Serves the page's files (built into the
// binary, board_assets.h), the login that turns a one-time code into the
// cookie, a JSON API under /board/api/ that calls batond with ipc's
// typed requests (the same rules and errors as the CLI and MCP), and an
// event stream that tells the page to look again whenever batond's state
// changes (a `watch` request held at batond: pushed, never polled), and a
// task's output: offset reads, a stream per open task page that says how
// far its log has grown (inotify), and the whole log as a download.
// The access checks run before any of this, in the gate (serve.cc,
// board_access.h: CheckBoardAccess).
#ifndef BATON_SERVE_BOARD_H_
#define BATON_SERVE_BOARD_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/ipc/async_daemon_client.h"
#include "baton/loop/event_loop.h"
#include "baton/serve/http_server.h"
#include "baton/util/state_paths.h"
#include "baton/util/unique_fd.h"

namespace baton::serve {

struct BoardOptions {
  StatePaths paths;
  std::string token;        // What the login cookie carries.
  std::string cookie_name;  // BoardCookieName(port).
  bool autostart = true;    // Start batond when none runs.
  // Output a page gets per read: the tail first, then this much more for
  // each "earlier".
  uint64_t output_chunk = 64 * 1024;
};

// A JSON error for the page: {"error": {"code", "message"}}.
HttpResponse BoardError(int status, const Error& error);
// 400 with an invalid_argument error saying `message`.
HttpResponse BoardBadInput(std::string message);
// The HTTP status for one of batond's errors.
int BoardStatusOf(const Error& error);
// A callback for batond's reply of type Reply: its error is the page's
// answer (BoardError); a reply goes on to `then`.
template <class Reply, class Then>
auto OrBoardError(ExchangePtr exchange, Then then) {
  return [exchange = std::move(exchange),
          then = std::move(then)](Result<Reply> reply) mutable {
    if (!reply) {
      return exchange->Respond(
          BoardError(BoardStatusOf(reply.error()), reply.error()));
    }
    then(std::move(*reply));
  };
}
// A JSON answer (200, not cached).
HttpResponse BoardJson(std::string body);
// A number from the query, or `fallback` when absent; nullopt when it is
// there but no number from 0.
std::optional<int64_t> BoardQueryNumber(const HttpRequest& request,
                                        std::string_view name,
                                        int64_t fallback);

// A log that open pages follow (a task's page, or the list's sizes), and
// their event streams.
struct LogWatch {
  std::string path;
  std::string task;  // Its task's id, said in each event.
  std::vector<ExchangePtr> streams;
  int64_t told = -1;  // The size last told them.
};

class Board {
 public:
  Board(EventLoop* loop, BoardOptions options);
  ~Board();
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;

  // Adds the board's routes: /, its files, /board/api/...
  void AddRoutes(HttpServer* http);
  size_t streams() const { return streams_.size(); }

 private:
  void Page(const HttpRequest& request, const ExchangePtr& exchange);
  void Tasks(const HttpRequest& request, const ExchangePtr& exchange);
  // Answers with page `page` of `view`'s ended tasks, or with the last page
  // when there are fewer.
  void ListPage(ListView view, int64_t page, const ExchangePtr& exchange);
  void Task(const HttpRequest& request, const ExchangePtr& exchange);
  // A task's records in the audit trail (doc/audit.md).
  void Audit(const HttpRequest& request, const ExchangePtr& exchange);
  // A live worker's overlaps with the others in its repository, as the
  // conflict radar last saw them (doc/conflicts.md).
  void Conflicts(const HttpRequest& request, const ExchangePtr& exchange);
  // An agent's queued follow-ups: GET lists them, POST withdraws or
  // replaces one (an Action).
  void Queued(const HttpRequest& request, const ExchangePtr& exchange);
  // An agent task's transcript: its events, each with the line the task's
  // output.log has for it (doc/board.md, "Transcript").
  void Transcript(const HttpRequest& request, const ExchangePtr& exchange);
  // board_output.cc: a task's output, read, followed and downloaded.
  void Output(const HttpRequest& request, const ExchangePtr& exchange);
  void OutputEvents(const HttpRequest& request, const ExchangePtr& exchange);
  // The list's stream: the sizes of several live tasks' logs, each told at
  // once and at each growth ({"task", "size"}).
  void OutputSizes(const HttpRequest& request, const ExchangePtr& exchange);
  void Log(const HttpRequest& request, const ExchangePtr& exchange);
  // The diff a task in a git folder left (Evidence::diff_path), as text.
  void Diff(const HttpRequest& request, const ExchangePtr& exchange);
  void Events(const HttpRequest& request, const ExchangePtr& exchange);
  // What the page's forms start from: the folder this server runs in and
  // the agent profiles (batond's `agents`, with this server's environment).
  void Defaults(const HttpRequest& request, const ExchangePtr& exchange);
  // POST: the body is the ipc request R itself, checked field by field as
  // batond would; batond's reply (or error) is the answer.
  template <class R>
  void Action(const HttpRequest& request, const ExchangePtr& exchange);

  // The connection to batond, opened (and batond started) when needed;
  // nullptr with `error` set when it cannot be reached.
  AsyncDaemonClient* Daemon(Error* error);
  // The same for a request: nullptr once `exchange` was answered 503.
  AsyncDaemonClient* DaemonFor(const ExchangePtr& exchange);
  // The request's `?task=ID` and batond to ask about it: nullopt once
  // `exchange` was answered (400 without an id, 503 without batond).
  struct TaskCall {
    std::string id;
    AsyncDaemonClient* daemon;
  };
  std::optional<TaskCall> ForTask(const HttpRequest& request,
                                  const ExchangePtr& exchange);
  // Drops a connection that failed (destroyed later, out of its callback).
  void Lost();
  // Holds a `watch` at batond while a page listens.
  void Watch();
  void Tell();
  // Follows the log at `path` for `stream` (inotify): tells it the size
  // now and at each growth.
  void FollowLog(const std::string& path, const std::string& task,
                 const ExchangePtr& stream);
  // Opens the inotify descriptor once; false (and `stream` answered 500)
  // when it cannot be.
  bool WatchingLogs(const ExchangePtr& stream);
  // Adds `stream` to the watch of the log at `path`: its watch descriptor,
  // or -1 (errno set) when the log cannot be watched.
  int WatchLog(const std::string& path, const std::string& task,
               const ExchangePtr& stream);
  // Takes `stream` off watch `wd`; the last one removes the watch.
  void Unwatch(int wd, const HttpExchange* stream);
  std::string SizeEvent(const LogWatch& watch, int64_t size) const;
  void OnLogsChanged();
  void TellSize(LogWatch& watch);

  EventLoop* loop_;
  BoardOptions options_;
  std::unique_ptr<AsyncDaemonClient> daemon_;
  std::vector<std::unique_ptr<AsyncDaemonClient>> retired_;
  std::vector<ExchangePtr> streams_;
  bool watching_ = false;
  int64_t changes_ = -1;  // The last count batond told; -1: none yet.
  int64_t daemon_pid_ = 0;
  TimerId retry_timer_ = 0;
  uint64_t event_serial_ = 0;
  // The logs open task pages follow, by inotify watch descriptor.
  UniqueFd inotify_;
  std::map<int, LogWatch> log_watches_;
};

}  // namespace baton::serve

#endif  // BATON_SERVE_BOARD_H_
