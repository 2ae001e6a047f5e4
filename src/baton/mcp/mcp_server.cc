#include "baton/mcp/mcp_server.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "baton/ipc/async_daemon_client.h"
#include "baton/loop/event_loop.h"
#include "baton/mcp/agent_events.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/line_reader.h"
#include "baton/mcp/protocol_version.h"
#include "baton/mcp/server.h"
#include "baton/mcp/task_mapping.h"
#include "baton/mcp/tool.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/detached_process.h"
#include "baton/util/log.h"
#include "baton/util/unique_fd.h"
#include "baton/util/version.h"

namespace baton::mcp {

const char* const kInstructions =
    "baton runs shell commands in the background for you (run), delegates "
    "briefs to coding agents (delegate), and tells you when they finish or "
    "an agent asks a question (answer it with task_answer). Track every task "
    "id you start. You are told when "
    "tasks end and when an agent asks a question, once each (notices come "
    "with every baton tool result, with the question's numbered options), "
    "so never busy-poll task_status/task_output and never sleep to wait. While "
    "tasks "
    "run, do independent work, and do not redo a running task's work "
    "yourself. When you are blocked, wait on all the relevant ids in one "
    "task_output call with wait: true. Collect every task's result before "
    "your final answer. Kill (task_kill) what stopped mattering.";

namespace {

std::string GenerateSession() {
  std::random_device random;
  return fmt::format("mcp-{}-{:08x}", ::getpid(), random());
}

}  // namespace

// ---- Call -------------------------------------------------------------------

const ServerFacts& Call::facts() const {
  return server_->facts();
}

AsyncDaemonClient* Call::daemon(Error* error) {
  return server_->MainConnection(error);
}

void Call::Run(const std::function<void()>& fn) {
  if (done_)
    return;
  try {
    fn();
  } catch (const std::exception& e) {
    BATON_LOG_ERROR("tool call {}: {}", key(), e.what());
    Finish(ToolResult::Error(
        fmt::format("internal error in baton mcp: {}", e.what())));
  }
}

void Call::Post(std::function<void()> fn) {
  server_->loop()->Schedule(std::chrono::steady_clock::now(),
                            [me = self(), fn = std::move(fn)] { me->Run(fn); });
}

void Call::DaemonWait(WaitRequest request, std::string what,
                      ReplyCallback<WaitRequest> done) {
  // Its own connection: closing it is how a cancelled wait is dropped.
  auto connection = server_->OpenConnection();
  if (!connection) {
    return Post([done = std::move(done), error = connection.error()] {
      done(std::unexpected(error));
    });
  }
  wait_connection_ = std::move(*connection);
  waiting_for_ = std::move(what);
  auto me = self();
  wait_connection_->Call(request,
                         [me, done = std::move(done)](Result<WaitReply> reply) {
                           if (me->done_)
                             return;
                           me->EndWait();
                           me->Run([&] { done(std::move(reply)); });
                         });
  if (!progress_token_.is_null()) {
    progress_timer_ = server_->loop()->Schedule(
        std::chrono::steady_clock::now() + server_->progress_interval(),
        [me] { me->SendProgress(); });
  }
}

void Call::SendProgress() {
  progress_timer_ = 0;
  if (done_ || !wait_connection_)
    return;
  ++progress_ticks_;
  auto elapsed = server_->progress_interval() * progress_ticks_;
  double seconds = std::chrono::duration<double>(elapsed).count();
  // `progress` must increase; elapsed seconds do, and tell a person
  // something.
  server_->Send(MakeNotification(
      "notifications/progress",
      {{"progressToken", progress_token_},
       {"progress", seconds},
       {"message", fmt::format("{} ({:.0f}s)", waiting_for_, seconds)}}));
  auto me = self();
  progress_timer_ = server_->loop()->Schedule(
      std::chrono::steady_clock::now() + server_->progress_interval(),
      [me] { me->SendProgress(); });
}

void Call::EndWait() {
  if (progress_timer_) {
    server_->loop()->Cancel(progress_timer_);
    progress_timer_ = 0;
  }
  if (wait_connection_) {
    // Closing drops the daemon's wait if it is still pending.
    wait_connection_->Close();
    server_->Retire(std::move(wait_connection_));
  }
}

bool Call::CancelWait() {
  if (done_ || !wait_connection_)
    return false;
  done_ = true;
  EndWait();
  server_->CallEnded(this);
  return true;
}

void Call::Finish(ToolResult result) {
  if (done_)
    return;
  done_ = true;
  EndWait();
  Json reply;
  if (as_task_ && result.started) {
    // The task is durable before this leaves: batond answered the start
    // after its commit. Notices wait for the next ordinary result.
    reply = ModernResult(McpTask(result.started->task), "task");
  } else {
    reply = CallResult(std::move(result));
    if (meta_.modern)
      reply = ModernResult(std::move(reply));
  }
  server_->Send(MakeResult(id_, std::move(reply)));
  server_->CallEnded(this);
}

Json Call::CallResult(ToolResult result) {
  auto notices = server_->TakeNotices();
  Json notices_json = Json::array();
  std::string text = std::move(result.text);
  if (!notices.empty()) {
    if (!text.empty() && text.back() != '\n')
      text += '\n';
    text +=
        "Notices (tasks of this session that ended unseen, or ask a "
        "question):\n";
    for (const auto& notice : notices) {
      text += "- " + notice.text + "\n";
      const TaskRecord& task = notice.task.task;
      bool asks = task.status == TaskStatus::kWaiting;
      if (asks) {
        text += fmt::format(
            "  answer with task_answer {{\"task_id\": \"{}\", \"answers\": "
            "[\"1\"]}} (one per item: a number, a label or your text)\n",
            task.id.ToString());
      }
      Json entry = {{"task_id", task.id.ToString()},
                    {"status", TaskStatusName(task.status)},
                    {"detail", task.detail},
                    {"text", notice.text}};
      if (task.evidence)
        entry["evidence"] = EvidenceJson(*task.evidence);
      if (asks)
        entry["questions"] = QuestionsJson(notice.task.questions);
      notices_json.push_back(std::move(entry));
    }
  }
  Json call_result = {
      {"content", Json::array({{{"type", "text"}, {"text", text}}})},
      {"isError", result.is_error}};
  if (!result.is_error && result.structured.is_object()) {
    result.structured["notices"] = std::move(notices_json);
    call_result["structuredContent"] = std::move(result.structured);
  }
  return call_result;
}

// ---- Server -----------------------------------------------------------------

Server::Server(const McpServerOptions& options) : options_(options) {
  facts_.session =
      options.session.empty() ? GenerateSession() : options.session;
  facts_.baton_binary =
      options.baton_binary.empty() ? SelfExecutable() : options.baton_binary;
  facts_.baton_home = options.baton_home;
  char buf[4096];
  facts_.cwd = ::getcwd(buf, sizeof buf) ? buf : "/";
  loop_.AddBeforeSleep([this] { retired_.clear(); });
}

Result<std::unique_ptr<AsyncDaemonClient>> Server::OpenConnection() {
  DaemonClient::Options client;
  client.paths = options_.paths;
  client.session = facts_.session;
  client.baton_binary = facts_.baton_binary;
  client.autostart = options_.autostart;
  return AsyncDaemonClient::Open(&loop_, client, [this](Notice notice) {
    notices_.push_back(std::move(notice));
  });
}

AsyncDaemonClient* Server::MainConnection(Error* error) {
  if (main_ && !main_->closed())
    return main_.get();
  if (main_) {
    BATON_LOG_WARN("lost batond; reconnecting");
    Retire(std::move(main_));
  }
  auto connection = OpenConnection();
  if (!connection) {
    BATON_LOG_ERROR("cannot reach batond: {}", connection.error().message);
    if (error)
      *error = connection.error();
    return nullptr;
  }
  main_ = std::move(*connection);
  // Holding this connection attached keeps the session's lease from
  // starting while the client is connected.
  std::string session = facts_.session;
  main_->Call(AttachRequest{}, [session](Result<AttachReply> reply) {
    if (!reply) {
      BATON_LOG_ERROR("attach {}: {}", session, reply.error().message);
    } else {
      BATON_LOG_INFO("session {} attached (lease {} ms)", session,
                     reply->lease_ms);
    }
  });
  return main_.get();
}

void Server::Retire(std::unique_ptr<AsyncDaemonClient> connection) {
  if (connection)
    retired_.push_back(std::move(connection));
}

void Server::Send(const Json& message) {
  if (stdout_broken_)
    return;
  std::string line = SerializeLine(message);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n =
        ::write(options_.out_fd, line.data() + done, line.size() - done);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // A client that set our stdout non-blocking: wait for room.
      pollfd pfd{options_.out_fd, POLLOUT, 0};
      ::poll(&pfd, 1, -1);
      continue;
    }
    BATON_LOG_WARN("stdout closed ({}); stopping", std::strerror(errno));
    stdout_broken_ = true;
    OnEof();
    return;
  }
}

void Server::CallEnded(Call* call) {
  auto it = calls_.find(call->key());
  if (it != calls_.end() && it->second.get() == call)
    calls_.erase(it);
  if (eof_ && calls_.empty())
    loop_.Stop();
}

int Server::Run() {
  if (!loop_.ok()) {
    BATON_LOG_ERROR("cannot create the event loop");
    return 1;
  }
  BATON_LOG_INFO("serving MCP on stdio as session {}", facts_.session);
  // Attach at once: the session is held from the start, not from the
  // first tool call. A daemon that cannot start is reported by each call.
  Error error;
  (void)MainConnection(&error);
  auto watched = loop_.AddFd(options_.in_fd, EPOLLIN | EPOLLRDHUP,
                             [this](uint32_t) { OnStdin(); });
  if (!watched) {
    // A regular file or /dev/null cannot be polled: it is all there, read
    // it now and serve it, then end as at EOF.
    ReadAllBlocking();
  }
  if (!eof_ || !calls_.empty()) {
    if (auto ran = loop_.Run(); !ran) {
      BATON_LOG_ERROR("event loop: {}", ran.error().message);
      return 1;
    }
  }
  BATON_LOG_INFO(
      "stdin closed; session {} detaches (its tasks live "
      "on under the lease)",
      facts_.session);
  return 0;
}

void Server::ReadAllBlocking() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(options_.in_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    Feed(std::string_view(buf, static_cast<size_t>(n)));
  }
  reader_.Finish([this](std::string_view line) { ServeLine(line); });
  OnEof();
}

void Server::OnStdin() {
  char buf[65536];
  // One read per wake-up: the fd is blocking (it is the client's pipe; we
  // leave its flags alone) and readable, so this does not block.
  ssize_t n = ::read(options_.in_fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    // A last line without its newline is served too.
    reader_.Finish([this](std::string_view line) { ServeLine(line); });
    OnEof();
    return;
  }
  Feed(std::string_view(buf, static_cast<size_t>(n)));
}

void Server::Feed(std::string_view data) {
  reader_.Feed(
      data, [this](std::string_view line) { ServeLine(line); },
      [this] {
        // One answer per line, however many reads it spans.
        BATON_LOG_ERROR("dropping a line over {} bytes", kMaxLine);
        Send(MakeErrorResponse(
            nullptr, kParseError,
            fmt::format("Parse error: message too long (a line holds at "
                        "most {} bytes)",
                        kMaxLine)));
      });
}

void Server::ServeLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  if (line.find_first_not_of(" \t") != std::string_view::npos)
    HandleLine(line);
}

void Server::OnEof() {
  if (eof_)
    return;
  eof_ = true;
  loop_.RemoveFd(options_.in_fd);
  // Nobody is left to answer a wait; calls past it finish (they are short).
  std::vector<std::shared_ptr<Call>> calls;
  for (auto& [key, call] : calls_)
    calls.push_back(call);
  for (auto& call : calls)
    call->CancelWait();
  for (auto& [key, subscription] : subscriptions_)
    subscription->Close();
  subscriptions_.clear();
  if (calls_.empty())
    loop_.Stop();
}

void Server::HandleLine(std::string_view line) {
  Message message = ParseMessage(line);
  try {
    switch (message.kind) {
      case Message::Kind::kInvalid:
        BATON_LOG_WARN("bad message: {}", message.error_message);
        Send(MakeErrorResponse(message.id, message.error_code,
                               message.error_message));
        return;
      case Message::Kind::kResponse:
        return;  // We send no requests; nothing to match.
      case Message::Kind::kNotification:
        return HandleNotification(message);
      case Message::Kind::kRequest:
        return HandleRequest(message);
    }
  } catch (const std::exception& e) {
    BATON_LOG_ERROR("handling {}: {}", message.method, e.what());
    if (message.kind == Message::Kind::kRequest) {
      Send(MakeErrorResponse(message.id, kInternalError,
                             fmt::format("Internal error: {}", e.what())));
    }
  }
}

void Server::HandleNotification(const Message& message) {
  if (message.method != "notifications/cancelled")
    return;  // initialized, roots/list_changed, ...: nothing to do.
  // Only a request id (a string or an integer) can name a call; anything
  // else is ignored, as the spec asks for cancellations it cannot match.
  const Json* given = Member(message.params, "requestId");
  std::optional<Json> request_id = given ? RequestId(*given) : std::nullopt;
  if (!request_id)
    return;
  if (auto sub = subscriptions_.find(request_id->dump());
      sub != subscriptions_.end()) {
    // A subscription ends without an answer when its client cancels it.
    sub->second->Close();
    subscriptions_.erase(sub);
    return;
  }
  auto it = calls_.find(request_id->dump());
  if (it == calls_.end())
    return;  // Already answered: the race the spec allows.
  auto call = it->second;
  if (call->CancelWait()) {
    const Json* reason = Member(message.params, "reason");
    const auto* text = reason ? reason->get_ptr<const std::string*>() : nullptr;
    BATON_LOG_INFO("call {} cancelled: {}", request_id->dump(),
                   text ? *text : "");
  }
}

int RunMcpServer(const McpServerOptions& options) {
  // A client that goes away mid-write must not kill us with SIGPIPE; the
  // write fails and we stop cleanly. (batond ignores it too; the
  // supervisor resets signals for tasks.)
  ::signal(SIGPIPE, SIG_IGN);
  // Logs go to stderr (the client shows or keeps them) and to
  // <home>/mcp.log, which outlives the client's view.
  std::vector<LogSink> sinks;
  sinks.push_back(LogSink::Stderr());
  if (options.paths.Prepare()) {
    if (auto file = LogSink::File(options.paths.home + "/mcp.log",
                                  LogFormat::kUtcNoLevel)) {
      sinks.push_back(std::move(*file));
    }
  }
  SetLogSinks("baton-mcp", std::move(sinks));
  Server server(options);
  int code = server.Run();
  std::vector<LogSink> stderr_only;
  stderr_only.push_back(LogSink::Stderr());
  SetLogSinks("baton-mcp", std::move(stderr_only));  // Closes mcp.log.
  return code;
}

int RunMcpServerFromEnvironment() {
  auto paths = StatePaths::FromEnvironment("");
  if (!paths) {
    std::fprintf(stderr, "baton mcp: error: %s\n",
                 paths.error().message.c_str());
    return 2;
  }
  McpServerOptions options;
  options.paths = *paths;
  if (const char* session = std::getenv("BATON_SESSION"))
    options.session = session;
  if (const char* home = std::getenv("BATON_HOME"))
    options.baton_home = home;
  return RunMcpServer(options);
}

}  // namespace baton::mcp
