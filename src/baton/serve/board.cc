#include "baton/serve/board.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <limits>
#include <type_traits>

#include "baton/ipc/codec.h"
#include "baton/ipc/event_text.h"
#include "baton/serve/board_access.h"
#include "baton/serve/board_assets.h"
#include "baton/serve/http_checks.h"
#include "baton/serve/login_code.h"
#include "baton/util/environment.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton::serve {
namespace {

constexpr int64_t kEndedPageSize = 50;
constexpr auto kRetryDelay = std::chrono::seconds(1);

// What the page gets from /board/api/tasks: the header's counts and the
// three groups, the ended ones a page at a time. (Flat: a nested struct of
// this file would not be found by json_fields' encoder.)
struct BoardList {
  int64_t running_count = 0;  // Running or stopping.
  int64_t need_input_count = 0;
  int64_t queued_count = 0;
  int64_t completed_today = 0;
  int64_t failed_today = 0;
  int64_t killed_today = 0;           // Killed or interrupted.
  std::vector<TaskView> needs_input;  // Oldest first.
  std::vector<TaskView> running;      // Running, stopping, queued.
  std::vector<TaskView> ended;        // Most recent end first.
  int64_t ended_total = 0;
  int64_t page = 0;
  int64_t pages = 1;
  std::vector<std::string> labels;  // Of every task, for the filter.
  std::vector<std::string> owners;  // Sessions that own a task, likewise.
  template <class V>
  void Fields(V& v) {
    v("running_count", running_count);
    v("need_input_count", need_input_count);
    v("queued_count", queued_count);
    v("completed_today", completed_today);
    v("failed_today", failed_today);
    v("killed_today", killed_today);
    v("needs_input", needs_input);
    v("running", running);
    v("ended", ended);
    v("ended_total", ended_total);
    v("page", page);
    v("pages", pages);
    v("labels", labels);
    v("owners", owners);
  }
};

}  // namespace

int BoardStatusOf(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidModel:
    case ErrorCode::kNotAgentTask:
    case ErrorCode::kSpawnFailed:
      return 400;
    case ErrorCode::kNotFound:
    case ErrorCode::kResumeNotFound:
      return 404;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kAlreadyExists:
      return 409;
    case ErrorCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

HttpResponse BoardJson(std::string body) {
  HttpResponse response;
  response.headers = {{"Content-Type", "application/json"},
                      {"Cache-Control", "no-store"}};
  response.body = std::move(body);
  return response;
}

namespace {

// Midnight of today in local time, as wall milliseconds: "ended today".
int64_t StartOfTodayMs() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  local.tm_hour = local.tm_min = local.tm_sec = 0;
  return static_cast<int64_t>(std::mktime(&local)) * 1000;
}

// The page's groups from batond's view of them (ListView): the live tasks
// that match, oldest first, split into those that wait on a question and
// the rest; the page of ended ones as batond cut it.
BoardList Group(ListReply reply, int64_t page) {
  BoardList list;
  const ListViewCounts& counts = *reply.counts;
  list.running_count = counts.running;
  list.need_input_count = counts.waiting;
  list.queued_count = counts.queued;
  list.completed_today = counts.completed;
  list.failed_today = counts.failed;
  list.killed_today = counts.killed + counts.interrupted;
  for (auto& task : reply.tasks) {
    if (task.task.status == TaskStatus::kWaiting)
      list.needs_input.push_back(std::move(task));
    else
      list.running.push_back(std::move(task));
  }
  list.ended = std::move(reply.ended);
  list.ended_total = reply.ended_total;
  list.pages = std::max<int64_t>(
      1, (list.ended_total + kEndedPageSize - 1) / kEndedPageSize);
  list.page = page;
  list.labels = std::move(reply.labels);
  list.owners = std::move(reply.owners);
  return list;
}

// Sends `request` to batond and answers `exchange` with batond's reply as
// JSON, or with its error.
template <class R>
void Relay(AsyncDaemonClient* daemon, const R& request,
           const ExchangePtr& exchange) {
  daemon->Call(request, OrBoardError<typename R::Reply>(
                            exchange, [exchange](typename R::Reply reply) {
                              exchange->Respond(BoardJson(EncodeObject(reply)));
                            }));
}

}  // namespace

std::optional<int64_t> BoardQueryNumber(const HttpRequest& request,
                                        std::string_view name,
                                        int64_t fallback) {
  auto text = QueryValue(request.target, name);
  if (!text)
    return fallback;
  int64_t value = 0;
  auto [end, error] =
      std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || error != std::errc() ||
      end != text->data() + text->size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

HttpResponse BoardBadInput(std::string message) {
  return BoardError(400,
                    Error{ErrorCode::kInvalidArgument, std::move(message)});
}

HttpResponse BoardError(int status, const Error& error) {
  HttpResponse response =
      BoardJson(fmt::format("{{\"error\":{}}}", EncodeObject(ToWire(error))));
  response.status = status;
  return response;
}

Board::Board(EventLoop* loop, BoardOptions options)
    : loop_(loop), options_(std::move(options)) {}

Board::~Board() {
  if (retry_timer_)
    loop_->Cancel(retry_timer_);
  for (auto& stream : streams_)
    stream->OnGone(nullptr);
  for (auto& [wd, watch] : log_watches_) {
    for (auto& stream : watch.streams)
      stream->OnGone(nullptr);
  }
  if (inotify_)
    loop_->RemoveFd(inotify_.get());
}

void Board::AddRoutes(HttpServer* http) {
  auto route = [this, http](std::string path, auto method) {
    http->Route(std::move(path), [this, method](const HttpRequest& request,
                                                const ExchangePtr& exchange) {
      (this->*method)(request, exchange);
    });
  };
  route("/", &Board::Page);
  for (const BoardAsset& asset : BoardAssets()) {
    if (asset.name == "/index.html")
      continue;  // Served at "/".
    http->Route(std::string(asset.name), [&asset](const HttpRequest&,
                                                  const ExchangePtr& exchange) {
      HttpResponse response;
      response.headers = {{"Content-Type", std::string(asset.content_type)},
                          {"Cache-Control", "no-cache"},
                          {"X-Content-Type-Options", "nosniff"}};
      response.body = std::string(asset.body);
      exchange->Respond(std::move(response));
    });
  }
  route("/board/api/tasks", &Board::Tasks);
  route("/board/api/task", &Board::Task);
  route("/board/api/audit", &Board::Audit);
  route("/board/api/conflicts", &Board::Conflicts);
  route("/board/api/queued", &Board::Queued);
  route("/board/api/transcript", &Board::Transcript);
  route("/board/api/output", &Board::Output);
  route("/board/api/output/events", &Board::OutputEvents);
  route("/board/api/output/sizes", &Board::OutputSizes);
  route("/board/api/log", &Board::Log);
  route("/board/api/diff", &Board::Diff);
  route("/board/api/events", &Board::Events);
  route("/board/api/defaults", &Board::Defaults);
  route("/board/api/kill", &Board::Action<KillRequest>);
  route("/board/api/answer", &Board::Action<AnswerRequest>);
  route("/board/api/send", &Board::Action<SendRequest>);
  route("/board/api/run", &Board::Action<RunRequest>);
  route("/board/api/delegate", &Board::Action<DelegateRequest>);
  route("/board/api/rerun", &Board::Action<RerunRequest>);
  route("/board/api/remove", &Board::Action<RemoveRequest>);
}

void Board::Page(const HttpRequest& request, const ExchangePtr& exchange) {
  if (auto code = BoardLoginCode(request)) {
    // The code leaves the address bar at once, claimed or not; from now on
    // the cookie, which the page's scripts cannot read, carries the token.
    HttpResponse response;
    response.status = 303;
    response.headers = {{"Location", "/"},
                        {"Cache-Control", "no-store"},
                        {"Referrer-Policy", "no-referrer"}};
    if (ClaimLoginCode(options_.paths.home, *code)) {
      response.headers.emplace_back(
          "Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                    options_.cookie_name, options_.token));
    } else if (!HasBoardCookie(request, options_.token, options_.cookie_name)) {
      BATON_LOG_INFO(
          "board: a login code was refused (used, expired or "
          "unknown)");
      return exchange->Respond(BoardSignInPage(
          "This login URL was used already or is more than 2 minutes old; "
          "run baton board for a new one."));
    }
    return exchange->Respond(std::move(response));
  }
  for (const BoardAsset& asset : BoardAssets()) {
    if (asset.name != "/index.html")
      continue;
    HttpResponse response;
    response.headers = {
        {"Content-Type", std::string(asset.content_type)},
        {"Cache-Control", "no-store"},
        {"X-Content-Type-Options", "nosniff"},
        {"Referrer-Policy", "no-referrer"},
        // Only the board's own files run, and nothing is loaded from
        // elsewhere: output that slipped into the page as markup could
        // still not run.
        {"Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; "
         "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
         "form-action 'none'; frame-ancestors 'none'"}};
    response.body = std::string(asset.body);
    return exchange->Respond(std::move(response));
  }
  exchange->Respond(BoardError(
      500, Error{ErrorCode::kInternal, "the board's page is not built in"}));
}

AsyncDaemonClient* Board::Daemon(Error* error) {
  if (daemon_ && !daemon_->closed())
    return daemon_.get();
  if (daemon_)
    Lost();
  DaemonClient::Options client;
  client.paths = options_.paths;
  client.autostart = options_.autostart;
  // A person's session (core/sessions.h): the board sees every session's
  // tasks, and what it looks at stays news to their owners.
  client.session = std::string(kPersonSession);
  auto opened = AsyncDaemonClient::Open(loop_, client, [](Notice) {});
  if (!opened) {
    *error = opened.error();
    return nullptr;
  }
  daemon_ = std::move(*opened);
  return daemon_.get();
}

void Board::Lost() {
  if (daemon_)
    retired_.push_back(std::move(daemon_));
  watching_ = false;
  changes_ = -1;  // A new batond counts from 0 again.
}

void Board::Tasks(const HttpRequest& request, const ExchangePtr& exchange) {
  auto page = BoardQueryNumber(request, "page", 0);
  if (!page)
    return exchange->Respond(BoardBadInput("page must be a number from 0"));
  // batond checks the filters, with the same words as for any client.
  ListView view;
  view.owner = QueryValue(request.target, "owner").value_or("");
  view.unowned = QueryValue(request.target, "unowned").value_or("") == "1";
  view.kind = QueryValue(request.target, "kind").value_or("");
  view.status = QueryValue(request.target, "status").value_or("");
  view.label = QueryValue(request.target, "label").value_or("");
  view.search = QueryValue(request.target, "q").value_or("");
  view.ended_limit = kEndedPageSize;
  view.ended_since_ms = StartOfTodayMs();
  // Past the last page is the last page (ListPage); no offset overflows.
  ListPage(std::move(view),
           std::min<int64_t>(
               *page, std::numeric_limits<int64_t>::max() / kEndedPageSize),
           exchange);
}

void Board::ListPage(ListView view, int64_t page, const ExchangePtr& exchange) {
  AsyncDaemonClient* daemon = DaemonFor(exchange);
  if (!daemon)
    return;
  view.ended_offset = page * kEndedPageSize;
  ListRequest request{.view = true, .filter = view};
  daemon->Call(
      request, OrBoardError<ListReply>(exchange, [this, exchange, page,
                                                  view = std::move(view)](
                                                     ListReply reply) mutable {
        if (!reply.counts) {
          return exchange->Respond(BoardError(
              500, Error{ErrorCode::kIncompatible,
                         "batond answered without the view; restart it "
                         "(baton daemon stop) so that it is this version"}));
        }
        // A page past the end (the history got shorter, or a page number
        // typed by hand): the last one instead.
        int64_t total = reply.ended_total;
        int64_t last = std::max<int64_t>(0, (total - 1) / kEndedPageSize);
        if (page > last)
          return ListPage(std::move(view), last, exchange);
        exchange->Respond(
            BoardJson(EncodeObject(Group(std::move(reply), page))));
      }));
}

AsyncDaemonClient* Board::DaemonFor(const ExchangePtr& exchange) {
  Error error;
  AsyncDaemonClient* daemon = Daemon(&error);
  if (!daemon)
    exchange->Respond(BoardError(503, error));
  return daemon;
}

std::optional<Board::TaskCall> Board::ForTask(const HttpRequest& request,
                                              const ExchangePtr& exchange) {
  auto id = QueryValue(request.target, "task");
  if (!id || id->empty()) {
    exchange->Respond(BoardBadInput("give the task's id: ?task=shell-1"));
    return std::nullopt;
  }
  AsyncDaemonClient* daemon = DaemonFor(exchange);
  if (!daemon)
    return std::nullopt;
  return TaskCall{std::move(*id), daemon};
}

void Board::Task(const HttpRequest& request, const ExchangePtr& exchange) {
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  Relay(daemon, GetRequest{.task = id}, exchange);
}

void Board::Conflicts(const HttpRequest& request, const ExchangePtr& exchange) {
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  Relay(daemon, ConflictsRequest{.task = id}, exchange);
}

void Board::Audit(const HttpRequest& request, const ExchangePtr& exchange) {
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  // The task must be one the board sees: batond's `get` says so, with
  // its own error, before the trail is read.
  daemon->Call(
      GetRequest{.task = id},
      OrBoardError<TaskReply>(exchange, [this, exchange, id](TaskReply) {
        if (AsyncDaemonClient* daemon = DaemonFor(exchange))
          Relay(daemon, AuditRequest{.task = id}, exchange);
      }));
}

void Board::Transcript(const HttpRequest& request,
                       const ExchangePtr& exchange) {
  // The page reads the events once, then only those after the last it has.
  auto after = BoardQueryNumber(request, "after", 0);
  if (!after)
    return exchange->Respond(
        BoardBadInput("after must be an event seq from 0"));
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  daemon->Call(
      EventsRequest{.task = id, .after = *after},
      OrBoardError<EventsReply>(exchange, [exchange](EventsReply reply) {
        // The line is the one renderer's (ipc/event_text.h), so the page reads
        // as the log and `baton events` do; the page adds what the events say
        // together (a follow-up's delivery).
        nlohmann::json events = nlohmann::json::array();
        for (nlohmann::json event : reply.events) {
          std::string line = TranscriptText(event);
          while (!line.empty() && line.back() == '\n')
            line.pop_back();
          event["line"] = std::move(line);
          events.push_back(std::move(event));
        }
        nlohmann::json body = {{"task", reply.task.task.id.ToString()},
                               {"events", std::move(events)}};
        exchange->Respond(BoardJson(body.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace)));
      }));
}

void Board::Queued(const HttpRequest& request, const ExchangePtr& exchange) {
  if (request.method == "POST")
    return Action<QueuedRequest>(request, exchange);
  auto task = ForTask(request, exchange);
  if (!task)
    return;
  auto& [id, daemon] = *task;
  Relay(daemon, QueuedRequest{.task = id}, exchange);
}

void Board::Defaults(const HttpRequest&, const ExchangePtr& exchange) {
  AsyncDaemonClient* daemon = DaemonFor(exchange);
  if (!daemon)
    return;
  char buffer[4096];
  std::string cwd = ::getcwd(buffer, sizeof buffer) ? buffer : "";
  // The profiles of this server's config, as `baton agents` lists them for
  // the person who started it (its environment names the config file).
  daemon->Call(
      AgentsRequest{.base_env = ProcessEnvironment()},
      [exchange, cwd = std::move(cwd)](Result<AgentsReply> reply) {
        auto text = [](const std::string& value) {
          return nlohmann::json(value).dump(
              -1, ' ', false, nlohmann::json::error_handler_t::replace);
        };
        exchange->Respond(BoardJson(
            reply ? fmt::format("{{\"cwd\":{},\"agents\":{}}}", text(cwd),
                                EncodeObject(*reply))
                  : fmt::format("{{\"cwd\":{},\"agents_error\":{}}}", text(cwd),
                                text(reply.error().message))));
      });
}

void Board::Events(const HttpRequest&, const ExchangePtr& exchange) {
  exchange->StartEvents({{"Cache-Control", "no-store"}});
  streams_.push_back(exchange);
  exchange->OnGone([this, stream = exchange.get()] {
    std::erase_if(streams_, [stream](const ExchangePtr& open) {
      return open.get() == stream;
    });
  });
  // The page learns that it is live; it reads the list once this comes.
  exchange->SendEvent(fmt::format("{{\"changes\":{}}}", changes_),
                      std::to_string(++event_serial_));
  Watch();
}

void Board::Tell() {
  std::string data = fmt::format("{{\"changes\":{}}}", changes_);
  std::string id = std::to_string(++event_serial_);
  auto streams = streams_;  // A write may find a client gone.
  for (auto& stream : streams)
    stream->SendEvent(data, id);
}

void Board::Watch() {
  if (watching_ || streams_.empty() || retry_timer_)
    return;
  retired_.clear();
  Error error;
  AsyncDaemonClient* daemon = Daemon(&error);
  if (!daemon) {
    // batond cannot be reached: try again while a page listens.
    BATON_LOG_WARN("board: cannot reach batond: {}", error.message);
    retry_timer_ =
        loop_->Schedule(std::chrono::steady_clock::now() + kRetryDelay, [this] {
          retry_timer_ = 0;
          Watch();
        });
    return;
  }
  watching_ = true;
  daemon->Call(WatchRequest{.after = changes_},
               [this](Result<WatchReply> reply) {
                 watching_ = false;
                 if (!reply) {
                   Lost();
                   Tell();  // Whatever the page shows may be old now.
                   retry_timer_ = loop_->Schedule(
                       std::chrono::steady_clock::now() + kRetryDelay, [this] {
                         retry_timer_ = 0;
                         Watch();
                       });
                   return;
                 }
                 daemon_pid_ = reply->daemon_pid;
                 changes_ = reply->changes;
                 Tell();
                 Watch();
               });
}

template <class R>
void Board::Action(const HttpRequest& request, const ExchangePtr& exchange) {
  if (request.method != "POST") {
    return exchange->Respond(
        BoardBadInput(fmt::format("{} takes POST", request.path())));
  }
  if (!request.HasJsonBody())
    return exchange->Respond(
        BoardBadInput("send JSON (Content-Type: application/json)"));
  auto parsed = ParseJson(request.body);
  if (!parsed)
    return exchange->Respond(BoardError(400, parsed.error()));
  auto typed = DecodeObject<R>(parsed->value, R::kOp, true);
  if (!typed)
    return exchange->Respond(BoardError(400, typed.error()));
  if constexpr (std::is_same_v<R, DelegateRequest> ||
                std::is_same_v<R, RerunRequest>) {
    // An agent needs an environment (its CLI's config, credentials, PATH):
    // the page has none, so it is this server's, that of the person who
    // started `baton serve` (doc/board.md).
    if (!typed->base_env)
      typed->base_env = ProcessEnvironment();
  }
  AsyncDaemonClient* daemon = DaemonFor(exchange);
  if (!daemon)
    return;
  Relay(daemon, *typed, exchange);
}

}  // namespace baton::serve
