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
#include "baton/mcp/tool.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/detached_process.h"
#include "baton/util/log.h"
#include "baton/util/unique_fd.h"

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

constexpr std::string_view kServerVersion = "0.1.0";
// A line longer than this is not a message we can serve; it is dropped
// (LineReader) and answered with one parse error.
constexpr size_t kMaxLine = 64 << 20;

std::string GenerateSession() {
  std::random_device random;
  return fmt::format("mcp-{}-{:08x}", ::getpid(), random());
}

class Server;

// One tools/call in flight.
class Call : public ToolCall {
 public:
  Call(Server* server, Json id, Json progress_token, Json arguments)
      : server_(server),
        id_(std::move(id)),
        progress_token_(std::move(progress_token)),
        arguments_(std::move(arguments)) {}

  const Json& arguments() const override { return arguments_; }
  const ServerFacts& facts() const override;
  void DaemonWait(WaitRequest request, std::string what,
                  ReplyCallback<WaitRequest> done) override;
  void Finish(ToolResult result) override;

  // Ends the call without an answer (notifications/cancelled, EOF). Only a
  // call still waiting can be cancelled: past the wait, its reads consume
  // output, and answering is better than losing it (a cancellation that
  // races the response is normal, says the spec).
  bool CancelWait();
  bool done() const { return done_; }
  std::string key() const { return id_.dump(); }

 private:
  std::shared_ptr<Call> self() {
    return std::static_pointer_cast<Call>(shared_from_this());
  }
  AsyncDaemonClient* daemon(Error* error) override;
  // A handler callback's exception (none is expected: replies are typed and
  // arguments checked) becomes an error result, not a dead server.
  void Run(const std::function<void()>& fn) override;
  void Post(std::function<void()> fn) override;
  void EndWait();
  void SendProgress();

  Server* server_;
  Json id_;
  Json progress_token_;  // Null when the client asked for no progress.
  Json arguments_;
  bool done_ = false;
  std::unique_ptr<AsyncDaemonClient> wait_connection_;
  std::string waiting_for_;
  TimerId progress_timer_ = 0;
  int64_t progress_ticks_ = 0;
};

class Server {
 public:
  explicit Server(const McpServerOptions& options);
  int Run();

  // For Call.
  const ServerFacts& facts() const { return facts_; }
  EventLoop* loop() { return &loop_; }
  std::chrono::milliseconds progress_interval() const {
    return options_.progress_interval;
  }
  // The attached connection, reopened (and re-attached) if it was lost.
  AsyncDaemonClient* MainConnection(Error* error);
  Result<std::unique_ptr<AsyncDaemonClient>> OpenConnection();
  // Destroys `connection` outside of its own callbacks.
  void Retire(std::unique_ptr<AsyncDaemonClient> connection);
  void Send(const Json& message);
  void CallEnded(Call* call);
  // The pending notices, each handed out once.
  std::vector<Notice> TakeNotices() { return std::exchange(notices_, {}); }

 private:
  void OnStdin();
  void ReadAllBlocking();
  void Feed(std::string_view data);
  void ServeLine(std::string_view line);
  void OnEof();
  void HandleLine(std::string_view line);
  void HandleRequest(const Message& message);
  void HandleNotification(const Message& message);
  void HandleInitialize(const Message& message);
  void HandleToolsCall(const Message& message);
  Json ToolsListResult() const;

  McpServerOptions options_;
  ServerFacts facts_;
  EventLoop loop_;
  LineReader reader_{kMaxLine};
  bool eof_ = false;
  bool stdout_broken_ = false;
  std::unique_ptr<AsyncDaemonClient> main_;
  std::vector<std::unique_ptr<AsyncDaemonClient>> retired_;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // By id.dump().
  std::vector<Notice> notices_;
};

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
  server_->Send(MakeResult(id_, std::move(call_result)));
  server_->CallEnded(this);
}

// ---- Server -----------------------------------------------------------------

Json NoticesSchema() {
  return {{"type", "array"},
          {"description",
           "Tasks of this session that ended and whose end you had not seen, "
           "and agent tasks that ask a question you were not told of; each "
           "is told once"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"task_id", {{"type", "string"}}},
              {"status", {{"type", "string"}}},
              {"detail", {{"type", "string"}}},
              {"text", {{"type", "string"}}},
              {"evidence", EvidenceSchema()},
              {"questions", PendingQuestionsSchema()}}},
            {"required", {"task_id", "text"}}}}};
}

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

void Server::HandleRequest(const Message& message) {
  const std::string& method = message.method;
  if (method == "initialize")
    return HandleInitialize(message);
  if (method == "ping")
    return Send(MakeResult(message.id, Json::object()));
  if (method == "tools/list")
    return Send(MakeResult(message.id, ToolsListResult()));
  if (method == "tools/call")
    return HandleToolsCall(message);
  // server/discover (the 2026-07-28 probe) among them: answering at once
  // makes clients fall back to initialize without waiting for a timeout.
  Send(MakeErrorResponse(message.id, kMethodNotFound,
                         fmt::format("Method not found: {}", method)));
}

void Server::HandleInitialize(const Message& message) {
  Json requested;
  if (const Json* asked = Member(message.params, "protocolVersion"))
    requested = *asked;
  std::string_view version = NegotiateProtocolVersion(requested);
  BATON_LOG_INFO("initialize: client asked {}, we speak {}", requested.dump(),
                 version);
  Send(MakeResult(message.id,
                  {{"protocolVersion", version},
                   {"capabilities", {{"tools", {{"listChanged", false}}}}},
                   {"serverInfo",
                    {{"name", "baton"},
                     {"title", "baton: background tasks"},
                     {"version", kServerVersion}}},
                   {"instructions", kInstructions}}));
}

Json Server::ToolsListResult() const {
  Json tools = Json::array();
  for (const auto& tool : AllTools()) {
    Json output = tool.output_schema;
    output["properties"]["notices"] = NoticesSchema();
    output["required"].push_back("notices");
    tools.push_back({{"name", tool.name},
                     {"title", tool.title},
                     {"description", tool.description},
                     {"inputSchema", tool.input_schema},
                     {"outputSchema", std::move(output)},
                     {"annotations", tool.annotations}});
  }
  return {{"tools", std::move(tools)}};
}

void Server::HandleToolsCall(const Message& message) {
  const Json* name_json = Member(message.params, "name");
  const auto* name =
      name_json ? name_json->get_ptr<const std::string*>() : nullptr;
  if (!name) {
    return Send(MakeErrorResponse(message.id, kInvalidParams,
                                  "Invalid params: tools/call needs a 'name'"));
  }
  const ToolDefinition* tool = nullptr;
  for (const auto& candidate : AllTools()) {
    if (candidate.name == *name)
      tool = &candidate;
  }
  if (!tool) {
    std::string names;
    for (const auto& candidate : AllTools())
      names += (names.empty() ? "" : ", ") + candidate.name;
    return Send(MakeErrorResponse(
        message.id, kInvalidParams,
        fmt::format("Unknown tool: {} (tools: {})", *name, names)));
  }
  Json arguments = Json::object();
  if (const Json* given = Member(message.params, "arguments");
      given && !given->is_null()) {
    if (!given->is_object()) {
      return Send(
          MakeErrorResponse(message.id, kInvalidParams,
                            "Invalid params: 'arguments' must be an object"));
    }
    arguments = *given;
  }
  Json token;
  if (const Json* meta = Member(message.params, "_meta")) {
    const Json* given = Member(*meta, "progressToken");
    if (given && (given->is_string() || given->is_number_integer()))
      token = *given;  // Echoed with its own JSON type.
  }
  auto call = std::make_shared<Call>(this, message.id, std::move(token),
                                     std::move(arguments));
  calls_[call->key()] = call;
  try {
    tool->handler(call);
  } catch (const std::exception& e) {
    BATON_LOG_ERROR("tool {}: {}", *name, e.what());
    call->Finish(ToolResult::Error(
        fmt::format("internal error in baton mcp: {}", e.what())));
  }
}

}  // namespace

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
