// The session part of the MCP server (server.h): calls in flight, the
// daemon connections, and the dispatch of one message. No transport here.
#include "baton/mcp/server.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "baton/ipc/async_daemon_client.h"
#include "baton/mcp/agent_events.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/task_mapping.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/clock.h"
#include "baton/util/detached_process.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton::mcp {
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
  using std::chrono::steady_clock;
  waiting_for_ = std::move(what);
  wait_done_ = std::move(done);
  wait_deadline_ = request.timeout ? steady_clock::now() + *request.timeout
                                   : steady_clock::time_point::max();
  wait_first_sent_ms_ = WallMillis();
  wait_request_ = std::move(request);
  // Its own connection: closing it is how a cancelled wait is dropped.
  auto connection = server_->OpenConnection();
  if (!connection) {
    auto me = self();
    return Post([me, error = connection.error()] {
      me->DeliverWait(std::unexpected(error));
    });
  }
  SendWait(std::move(*connection));
  if (!progress_token_.is_null()) {
    auto me = self();
    progress_timer_ = server_->loop()->Schedule(
        steady_clock::now() + server_->progress_interval(),
        [me] { me->SendProgress(); });
  }
}

void Call::SendWait(std::unique_ptr<AsyncDaemonClient> connection) {
  wait_connection_ = std::move(connection);
  if (wait_request_.timeout) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        wait_deadline_ - std::chrono::steady_clock::now());
    wait_request_.timeout = std::max(std::chrono::milliseconds(0), left);
  }
  auto me = self();
  wait_connection_->Call(wait_request_, [me](Result<WaitReply> reply) {
    if (me->done_)
      return;
    // kUnavailable: the connection closed, batond went away. The tasks
    // live on under the supervisor; so does the wait.
    if (!reply && reply.error().code == ErrorCode::kUnavailable)
      return me->OnWaitLost(reply.error());
    me->DeliverWait(std::move(reply));
  });
}

void Call::DeliverWait(Result<WaitReply> reply) {
  auto done = std::move(wait_done_);
  EndWait();
  if (done)
    Run([&] { done(std::move(reply)); });
}

void Call::OnWaitLost(const Error& lost) {
  BATON_LOG_WARN("call {}: lost batond mid-wait ({}); reconnecting", key(),
                 lost.message);
  wait_lost_ = lost;
  reconnect_until_ = std::chrono::steady_clock::now() + kReconnectWindow;
  // The wait answers to what its first send was told: an end the lost
  // batond told this session, whose answer never came, is news again.
  wait_request_.news_since_ms = wait_first_sent_ms_;
  ReconnectWait(lost);
}

void Call::ReconnectWait(const Error& last) {
  using std::chrono::milliseconds;
  reconnect_timer_ = 0;
  if (done_)
    return;
  // Still inside its callback: retired, freed before the loop sleeps.
  if (wait_connection_)
    server_->Retire(std::move(wait_connection_));
  auto now = std::chrono::steady_clock::now();
  auto left = std::chrono::duration_cast<milliseconds>(reconnect_until_ - now);
  if (left.count() <= 0) {
    return DeliverWait(std::unexpected(CouldNotReconnect(wait_lost_, last)));
  }
  // Blocks the loop while a new batond starts, as any first use does.
  auto connection = server_->OpenConnection(left);
  if (!connection) {
    auto me = self();
    reconnect_timer_ = server_->loop()->Schedule(
        now + std::min(milliseconds(100), left),
        [me, error = connection.error()] { me->ReconnectWait(error); });
    return;
  }
  BATON_LOG_INFO("call {}: batond is back; waiting again", key());
  SendWait(std::move(*connection));
}

void Call::SendProgress() {
  progress_timer_ = 0;
  if (done_ || (!wait_connection_ && !reconnect_timer_))
    return;
  ++progress_ticks_;
  auto elapsed = server_->progress_interval() * progress_ticks_;
  double seconds = std::chrono::duration<double>(elapsed).count();
  // `progress` must increase; elapsed seconds do, and tell a person
  // something.
  server_->Send(
      MakeNotification(
          "notifications/progress",
          {{"progressToken", progress_token_},
           {"progress", seconds},
           {"message", fmt::format("{} ({:.0f}s)", waiting_for_, seconds)}}),
      exchange_);
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
  if (reconnect_timer_) {
    server_->loop()->Cancel(reconnect_timer_);
    reconnect_timer_ = 0;
  }
  if (wait_connection_) {
    // Closing drops the daemon's wait if it is still pending.
    wait_connection_->Close();
    server_->Retire(std::move(wait_connection_));
  }
  // The tool's callback often holds this call (its gathered reads do): a
  // member that kept it past the wait would never be freed.
  wait_done_ = nullptr;
}

bool Call::CancelWait() {
  if (done_ || (!wait_connection_ && !reconnect_timer_))
    return false;
  done_ = true;
  EndWait();
  server_->CallEnded(this);
  return true;
}

void Call::Abandon() {
  // Callbacks still queued (Post, replies) see done_ and do nothing.
  done_ = true;
  EndWait();
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
  server_->Send(MakeResult(id_, std::move(reply)), exchange_);
  server_->CallEnded(this);
}

bool Call::CanAskPerson() const {
  return meta_.modern ? meta_.ElicitationForm() : server_->legacy_elicitation();
}

void Call::WatchPersonQuestions(const std::string& task) {
  if (!meta_.modern)
    server_->WatchPersonQuestions(task);
}

void Call::InputRequired(Json input_requests, std::string request_state) {
  if (done_)
    return;
  done_ = true;
  EndWait();
  Json result = {{"inputRequests", std::move(input_requests)}};
  if (!request_state.empty())
    result["requestState"] = std::move(request_state);
  server_->Send(
      MakeResult(id_, ModernResult(std::move(result), "input_required")),
      exchange_);
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
        "Notices (tasks of this session that ended unseen, ask a "
        "question, or changed the same files as another worker):\n";
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
      if (notice.overlap) {
        if (auto overlap = ParseJson(EncodeObject(*notice.overlap)))
          entry["overlap"] = std::move(overlap->value);
      }
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

Server::Server(EventLoop* loop, const McpServerOptions& options,
               Transport* transport)
    : loop_(loop), options_(options), transport_(transport) {
  facts_.session =
      options.session.empty() ? GenerateSession() : options.session;
  facts_.baton_binary =
      options.baton_binary.empty() ? SelfExecutable() : options.baton_binary;
  facts_.baton_home = options.baton_home;
  char buf[4096];
  facts_.cwd = ::getcwd(buf, sizeof buf) ? buf : "/";
}

Server::~Server() {
  Shutdown();
  for (auto& [key, call] : calls_)
    call->Abandon();
  calls_.clear();
  if (main_)
    main_->Close();
}

void Server::Start() {
  Error error;
  (void)MainConnection(&error);
}

Result<std::unique_ptr<AsyncDaemonClient>> Server::OpenConnection(
    std::chrono::milliseconds start_timeout) {
  DaemonClient::Options client;
  client.start_timeout = start_timeout;
  client.paths = options_.paths;
  client.session = facts_.session;
  client.baton_binary = facts_.baton_binary;
  client.autostart = options_.autostart;
  return AsyncDaemonClient::Open(loop_, client, [this](Notice notice) {
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

void Server::Rewait(std::unique_ptr<AsyncDaemonClient>* slot,
                    const std::set<std::string>& tasks, const std::string& who,
                    std::function<void(Result<WaitReply>)> done) {
  if (*slot) {
    (*slot)->Close();
    Retire(std::move(*slot));
  }
  if (tasks.empty())
    return;
  auto connection = OpenConnection();
  if (!connection) {
    BATON_LOG_ERROR("{}: cannot reach batond: {}", who,
                    connection.error().message);
    return;
  }
  *slot = std::move(*connection);
  WaitRequest request;
  request.tasks.assign(tasks.begin(), tasks.end());
  request.still_running = StillRunningForm::kNone;
  (*slot)->Call(request, std::move(done));
}

void Server::RewaitLater(std::unique_ptr<AsyncDaemonClient>* slot,
                         const std::string& who, const Error& error,
                         std::function<void()> again) {
  BATON_LOG_WARN("{}: wait failed: {}", who, error.message);
  if (*slot) {
    (*slot)->Close();
    Retire(std::move(*slot));
  }
  loop_->Schedule(std::chrono::steady_clock::now() + std::chrono::seconds(1),
                  std::move(again));
}

void Server::CallEnded(Call* call) {
  auto it = calls_.find(call->key());
  if (it != calls_.end() && it->second.get() == call)
    calls_.erase(it);
  if (calls_.empty())
    transport_->Idle();
}

void Server::Shutdown() {
  // Nobody is left to answer a wait; calls past it finish (they are short).
  std::vector<std::shared_ptr<Call>> calls;
  for (auto& [key, call] : calls_)
    calls.push_back(call);
  for (auto& call : calls)
    call->CancelWait();
  for (auto& [key, subscription] : subscriptions_)
    subscription->Close();
  subscriptions_.clear();
  if (person_questions_)
    person_questions_->Close();
  person_questions_.reset();
}

void Server::WatchPersonQuestions(const std::string& task) {
  if (!person_questions_)
    person_questions_ = std::make_shared<PersonQuestions>(this);
  person_questions_->Watch(task);
}

void Server::CancelExchange(const std::string& exchange) {
  if (auto sub = subscriptions_.find(exchange); sub != subscriptions_.end()) {
    // A subscription ends without an answer when its client cancels it.
    sub->second->Close();
    subscriptions_.erase(sub);
    return;
  }
  auto it = calls_.find(exchange);
  if (it == calls_.end())
    return;  // Already answered: the race the spec allows.
  auto call = it->second;
  if (call->CancelWait())
    BATON_LOG_INFO("call {} cancelled", exchange);
}

void Server::ServeLine(std::string_view line) {
  Serve(ParseMessage(line));
}

void Server::Serve(Message message) {
  if (message.exchange.empty())
    message.exchange = message.id.dump();
  try {
    switch (message.kind) {
      case Message::Kind::kInvalid:
        BATON_LOG_WARN("bad message: {}", message.error_message);
        Send(MakeErrorResponse(message.id, message.error_code,
                               message.error_message),
             "");
        return;
      case Message::Kind::kResponse:
        // Our only requests are the person's forms.
        if (!person_questions_ || !person_questions_->OnResponse(message))
          BATON_LOG_WARN("a response to no request of ours: {}",
                         message.id.dump());
        return;
      case Message::Kind::kNotification:
        return HandleNotification(message);
      case Message::Kind::kRequest:
        return HandleRequest(message);
    }
  } catch (const std::exception& e) {
    BATON_LOG_ERROR("handling {}: {}", message.method, e.what());
    if (message.kind == Message::Kind::kRequest) {
      Send(MakeErrorResponse(message.id, kInternalError,
                             fmt::format("Internal error: {}", e.what())),
           message.exchange);
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
  const Json* reason = Member(message.params, "reason");
  const auto* text = reason ? reason->get_ptr<const std::string*>() : nullptr;
  BATON_LOG_INFO("client cancels {}: {}", request_id->dump(),
                 text ? *text : "");
  // A cancellation names the client's id: on stdio and in one HTTP session
  // that is the exchange.
  CancelExchange(request_id->dump());
}

}  // namespace baton::mcp
