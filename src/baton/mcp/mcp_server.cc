#include "baton/mcp/mcp_server.h"

#include <fcntl.h>
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

#include "baton/loop/event_loop.h"
#include "baton/mcp/daemon_connection.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/protocol_version.h"
#include "baton/mcp/tool.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/clock.h"
#include "baton/util/detached_process.h"
#include "baton/util/log.h"
#include "baton/util/unique_fd.h"

namespace baton::mcp {

const char* const kInstructions =
    "baton runs shell commands in the background for you (run), delegates "
    "briefs to coding agents (delegate), and tells you when they finish or "
    "an agent asks a question (answer it with task_answer). Track every task "
    "id you start. You are told when "
    "tasks end (notices come with every baton tool result), so never "
    "busy-poll task_status/task_output and never sleep to wait. While tasks "
    "run, do independent work, and do not redo a running task's work "
    "yourself. When you are blocked, wait on all the relevant ids in one "
    "task_output call with wait: true. Collect every task's result before "
    "your final answer. Kill (task_kill) what stopped mattering.";

namespace {

constexpr std::string_view kServerVersion = "0.1.0";
// A line longer than this is not a message we can serve; drop it.
constexpr size_t kMaxLine = 64 << 20;

// Logs go to stderr (the client shows or keeps them) and to
// <home>/mcp.log, which outlives the client's view.
int g_log_file = -1;

template <class... Args>
void McpLog(LogLevel level, fmt::format_string<Args...> format,
            Args&&... args) {
  std::string message = fmt::format(format, std::forward<Args>(args)...);
  LogLine(level, message);
  if (g_log_file >= 0) {
    std::string line =
        fmt::format("{} baton-mcp[{}] {}\n", FormatIsoTime(WallMillis()),
                    ::getpid(), message);
    ssize_t ignored = ::write(g_log_file, line.data(), line.size());
    (void)ignored;
  }
}

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
  void Daemon(std::string_view op, Json args, ReplyCallback done) override;
  void DaemonWait(Json args, std::string what, ReplyCallback done) override;
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
  // Runs a handler callback; a JSON exception (a broken daemon reply)
  // becomes an error result instead of a call that never ends.
  void Invoke(const ReplyCallback& done, Result<Json> reply);
  void EndWait();
  void SendProgress();

  Server* server_;
  Json id_;
  Json progress_token_;  // Null when the client asked for no progress.
  Json arguments_;
  bool done_ = false;
  std::unique_ptr<DaemonConnection> wait_connection_;
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
  DaemonConnection* MainConnection(Error* error);
  Result<std::unique_ptr<DaemonConnection>> OpenConnection();
  // Destroys `connection` outside of its own callbacks.
  void Retire(std::unique_ptr<DaemonConnection> connection);
  void Send(const Json& message);
  void CallEnded(Call* call);
  // The pending notices, each handed out once.
  std::vector<Json> TakeNotices() { return std::exchange(notices_, {}); }

 private:
  void OnStdin();
  void ReadAllBlocking();
  void ServeBuffer();
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
  std::string in_;
  bool eof_ = false;
  bool stdout_broken_ = false;
  std::unique_ptr<DaemonConnection> main_;
  std::vector<std::unique_ptr<DaemonConnection>> retired_;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // By id.dump().
  std::vector<Json> notices_;
};

// ---- Call -------------------------------------------------------------------

const ServerFacts& Call::facts() const {
  return server_->facts();
}

void Call::Invoke(const ReplyCallback& done, Result<Json> reply) {
  try {
    done(std::move(reply));
  } catch (const std::exception& e) {
    McpLog(LogLevel::kError, "tool call {}: unexpected reply: {}", key(),
           e.what());
    Finish(ToolResult::Error(
        fmt::format("internal error in baton mcp: {}", e.what())));
  }
}

void Call::Daemon(std::string_view op, Json args, ReplyCallback done) {
  Error error;
  DaemonConnection* connection = server_->MainConnection(&error);
  auto me = self();
  if (!connection) {
    server_->loop()->Schedule(std::chrono::steady_clock::now(),
                              [me, done, error] {
                                if (!me->done_)
                                  me->Invoke(done, std::unexpected(error));
                              });
    return;
  }
  connection->Call(op, std::move(args), [me, done](Result<Json> reply) {
    if (!me->done_)
      me->Invoke(done, std::move(reply));
  });
}

void Call::DaemonWait(Json args, std::string what, ReplyCallback done) {
  auto me = self();
  // Its own connection: closing it is how a cancelled wait is dropped.
  auto connection = server_->OpenConnection();
  if (!connection) {
    server_->loop()->Schedule(std::chrono::steady_clock::now(),
                              [me, done, error = connection.error()] {
                                if (!me->done_)
                                  me->Invoke(done, std::unexpected(error));
                              });
    return;
  }
  wait_connection_ = std::move(*connection);
  waiting_for_ = std::move(what);
  wait_connection_->Call("wait", std::move(args),
                         [me, done](Result<Json> reply) {
                           if (me->done_)
                             return;
                           me->EndWait();
                           me->Invoke(done, std::move(reply));
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
    text += "Notices (tasks of this session that ended unseen):\n";
    for (const auto& notice : notices) {
      std::string line = StringField(notice, "text");
      text += "- " + line + "\n";
      Json task = notice.is_object() ? notice.value("task", Json::object())
                                     : Json::object();
      notices_json.push_back({{"task_id", StringField(task, "id")},
                              {"status", StringField(task, "status")},
                              {"detail", StringField(task, "detail")},
                              {"text", line}});
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
           "Tasks of this session that ended and whose end you had not seen; "
           "each is told once"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"task_id", {{"type", "string"}}},
              {"status", {{"type", "string"}}},
              {"detail", {{"type", "string"}}},
              {"text", {{"type", "string"}}}}},
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

Result<std::unique_ptr<DaemonConnection>> Server::OpenConnection() {
  DaemonClient::Options client;
  client.paths = options_.paths;
  client.session = facts_.session;
  client.baton_binary = facts_.baton_binary;
  client.autostart = options_.autostart;
  return DaemonConnection::Open(&loop_, client, [this](const Json& notice) {
    notices_.push_back(notice);
  });
}

DaemonConnection* Server::MainConnection(Error* error) {
  if (main_ && !main_->closed())
    return main_.get();
  if (main_) {
    McpLog(LogLevel::kWarning, "lost batond; reconnecting");
    Retire(std::move(main_));
  }
  auto connection = OpenConnection();
  if (!connection) {
    McpLog(LogLevel::kError, "cannot reach batond: {}",
           connection.error().message);
    if (error)
      *error = connection.error();
    return nullptr;
  }
  main_ = std::move(*connection);
  // Holding this connection attached keeps the session's lease from
  // starting while the client is connected.
  std::string session = facts_.session;
  main_->Call("attach", Json::object(), [session](Result<Json> reply) {
    if (!reply) {
      McpLog(LogLevel::kError, "attach {}: {}", session, reply.error().message);
    } else {
      McpLog(LogLevel::kInfo, "session {} attached (lease {} ms)", session,
             IntField(*reply, "lease_ms"));
    }
  });
  return main_.get();
}

void Server::Retire(std::unique_ptr<DaemonConnection> connection) {
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
    McpLog(LogLevel::kWarning, "stdout closed ({}); stopping",
           std::strerror(errno));
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
    McpLog(LogLevel::kError, "cannot create the event loop");
    return 1;
  }
  McpLog(LogLevel::kInfo, "serving MCP on stdio as session {}", facts_.session);
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
      McpLog(LogLevel::kError, "event loop: {}", ran.error().message);
      return 1;
    }
  }
  McpLog(LogLevel::kInfo,
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
    in_.append(buf, static_cast<size_t>(n));
    ServeBuffer();
  }
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
    if (!in_.empty()) {
      in_.push_back('\n');  // A last line without its newline.
      ServeBuffer();
    }
    OnEof();
    return;
  }
  in_.append(buf, static_cast<size_t>(n));
  ServeBuffer();
}

void Server::ServeBuffer() {
  size_t start = 0;
  for (size_t nl; (nl = in_.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    std::string_view line(in_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos)
      HandleLine(line);
  }
  in_.erase(0, start);
  if (in_.size() > kMaxLine) {
    McpLog(LogLevel::kError, "dropping a line over {} bytes", kMaxLine);
    in_.clear();
    Send(MakeErrorResponse(nullptr, kParseError,
                           "Parse error: message too long"));
  }
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
        McpLog(LogLevel::kWarning, "bad message: {}", message.error_message);
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
    McpLog(LogLevel::kError, "handling {}: {}", message.method, e.what());
    if (message.kind == Message::Kind::kRequest) {
      Send(MakeErrorResponse(message.id, kInternalError,
                             fmt::format("Internal error: {}", e.what())));
    }
  }
}

void Server::HandleNotification(const Message& message) {
  if (message.method != "notifications/cancelled")
    return;  // initialized, roots/list_changed, ...: nothing to do.
  if (!message.params.is_object())
    return;
  auto request_id = message.params.find("requestId");
  if (request_id == message.params.end())
    return;
  auto it = calls_.find(request_id->dump());
  if (it == calls_.end())
    return;  // Already answered: the race the spec allows.
  auto call = it->second;
  if (call->CancelWait()) {
    McpLog(LogLevel::kInfo, "call {} cancelled: {}", request_id->dump(),
           message.params.value("reason", ""));
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
  if (message.params.is_object()) {
    if (auto it = message.params.find("protocolVersion");
        it != message.params.end()) {
      requested = *it;
    }
  }
  std::string_view version = NegotiateProtocolVersion(requested);
  McpLog(LogLevel::kInfo, "initialize: client asked {}, we speak {}",
         requested.dump(), version);
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
  const Json& params = message.params;
  if (!params.is_object() || !params.contains("name") ||
      !params["name"].is_string()) {
    return Send(MakeErrorResponse(message.id, kInvalidParams,
                                  "Invalid params: tools/call needs a 'name'"));
  }
  std::string name = params["name"].get<std::string>();
  const ToolDefinition* tool = nullptr;
  for (const auto& candidate : AllTools()) {
    if (candidate.name == name)
      tool = &candidate;
  }
  if (!tool) {
    return Send(MakeErrorResponse(
        message.id, kInvalidParams,
        fmt::format("Unknown tool: {} (tools: run, task_output, "
                    "task_status, task_list, task_kill)",
                    name)));
  }
  Json arguments = Json::object();
  if (auto it = params.find("arguments");
      it != params.end() && !it->is_null()) {
    if (!it->is_object()) {
      return Send(
          MakeErrorResponse(message.id, kInvalidParams,
                            "Invalid params: 'arguments' must be an object"));
    }
    arguments = *it;
  }
  Json token;
  if (auto meta = params.find("_meta");
      meta != params.end() && meta->is_object()) {
    if (auto it = meta->find("progressToken");
        it != meta->end() && (it->is_string() || it->is_number_integer())) {
      token = *it;  // Echoed with its own JSON type.
    }
  }
  auto call = std::make_shared<Call>(this, message.id, std::move(token),
                                     std::move(arguments));
  calls_[call->key()] = call;
  try {
    tool->handler(call);
  } catch (const std::exception& e) {
    McpLog(LogLevel::kError, "tool {}: {}", name, e.what());
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
  SetLogTarget(2, "baton-mcp");
  if (options.paths.Prepare()) {
    g_log_file = ::open((options.paths.home + "/mcp.log").c_str(),
                        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  }
  Server server(options);
  int code = server.Run();
  if (g_log_file >= 0) {
    ::close(g_log_file);
    g_log_file = -1;
  }
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
