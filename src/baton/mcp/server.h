// The MCP server of baton, whatever carries its messages: the Server (one
// owner session of batond: its daemon connections, dispatch), one Call per
// tools/call in flight, and one Subscription per open subscriptions/listen.
// A transport feeds it messages and takes its output through Transport:
// stdio (`baton mcp`, mcp_server.cc) or Streamable HTTP (`baton serve`,
// serve/), which runs one Server per legacy session. Split over server.cc
// (the session, calls), server_methods.cc (the methods of both eras),
// server_tasks.cc (the tasks extension and subscriptions) and
// person_questions.cc (forms for the person). Everything runs on the loop
// thread.
#ifndef BATON_MCP_SERVER_H_
#define BATON_MCP_SERVER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "baton/ipc/async_daemon_client.h"
#include "baton/loop/event_loop.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/mcp_server.h"
#include "baton/mcp/modern.h"
#include "baton/mcp/tool.h"

namespace baton::mcp {

class Server;

// Where a Server's messages go. `exchange` names the request a message
// answers or belongs to (Message::exchange: a response, a call's progress,
// a subscription's notifications); "" for a message about no request.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void Send(const Json& message, const std::string& exchange) = 0;
  // The last call in flight ended (a transport waiting to end can now).
  virtual void Idle() {}
};

// One tools/call in flight.
class Call : public ToolCall {
 public:
  Call(Server* server, Json id, std::string exchange, Json progress_token,
       Json arguments, RequestMeta meta, bool as_task)
      : server_(server),
        id_(std::move(id)),
        exchange_(std::move(exchange)),
        progress_token_(std::move(progress_token)),
        arguments_(std::move(arguments)),
        meta_(std::move(meta)),
        as_task_(as_task) {}

  const Json& arguments() const override { return arguments_; }
  const ServerFacts& facts() const override;
  const RequestMeta& meta() const override { return meta_; }
  const Json& input_responses() const override { return input_responses_; }
  const std::string& request_state() const override { return request_state_; }
  void set_input_responses(Json responses, std::string request_state) {
    input_responses_ = std::move(responses);
    request_state_ = std::move(request_state);
  }
  bool CanAskPerson() const override;
  void WatchPersonQuestions(const std::string& task) override;
  void InputRequired(Json input_requests, std::string request_state) override;
  void DaemonWait(WaitRequest request, std::string what,
                  ReplyCallback<WaitRequest> done) override;
  void Finish(ToolResult result) override;

  // Ends the call without an answer (notifications/cancelled, EOF). Only a
  // call still waiting can be cancelled: past the wait, its reads consume
  // output, and answering is better than losing it (a cancellation that
  // races the response is normal, says the spec).
  bool CancelWait();
  // Ends the call whatever it is doing, without an answer: its server is
  // going away (nothing it started runs on after this).
  void Abandon();
  bool done() const { return done_; }
  const std::string& key() const { return exchange_; }

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
  // Sends wait_request_ on `connection`, with the time left until its
  // deadline.
  void SendWait(std::unique_ptr<AsyncDaemonClient> connection);
  // batond went away mid-wait (`lost`): bring it back and send the wait
  // again, for up to kReconnectWindow (doc/mcp.md).
  void OnWaitLost(const Error& lost);
  // Ends the wait (EndWait, which drops the callback) and gives its answer
  // to the tool's callback.
  void DeliverWait(Result<WaitReply> reply);
  // One attempt to reconnect; `last` is the previous attempt's error.
  void ReconnectWait(const Error& last);
  void SendProgress();
  Json CallResult(ToolResult result);

  Server* server_;
  Json id_;
  std::string exchange_;
  Json progress_token_;  // Null when the client asked for no progress.
  Json arguments_;
  RequestMeta meta_;
  // The client declared the tasks extension and the tool starts a task:
  // the answer is a CreateTaskResult.
  bool as_task_ = false;
  Json input_responses_;  // A retry's inputResponses (modern era), or null.
  std::string request_state_;
  bool done_ = false;
  std::unique_ptr<AsyncDaemonClient> wait_connection_;
  // The wait, kept to send it again after batond came back.
  WaitRequest wait_request_;
  ReplyCallback<WaitRequest> wait_done_;
  std::chrono::steady_clock::time_point wait_deadline_;
  int64_t wait_first_sent_ms_ = 0;  // Wall time: news_since_ms of a resend.
  Error wait_lost_;
  std::chrono::steady_clock::time_point reconnect_until_;
  TimerId reconnect_timer_ = 0;  // The next attempt, while batond is away.
  std::string waiting_for_;
  TimerId progress_timer_ = 0;
  int64_t progress_ticks_ = 0;
};

// One subscriptions/listen: tells its client of every status change of the
// tasks it named (notifications/tasks), from batond's waits, never by
// polling. Working tasks are waited on, on a connection of the
// subscription's own; a task that asks is told and then left out of the
// wait until it works again (an answer through this server says so).
class Subscription : public std::enable_shared_from_this<Subscription> {
 public:
  Subscription(Server* server, Json id, std::string exchange)
      : server_(server), id_(std::move(id)), exchange_(std::move(exchange)) {}
  const Json& id() const { return id_; }
  bool Watches(const std::string& task) const { return told_.count(task) > 0; }
  // Starts watching `tasks` (already checked) and acknowledges.
  void Start(const std::vector<TaskView>& tasks, Json honored);
  // `view` may have changed: tells the client when it did, and waits on
  // it again if it works.
  void Tell(const TaskView& view);
  // Ends it without an answer (cancelled, or the client went away).
  void Close();

 private:
  void Arm();
  void OnWait(Result<WaitReply> reply);

  Server* server_;
  Json id_;
  std::string exchange_;
  std::map<std::string, std::string> told_;  // Task id -> what was told.
  std::set<std::string> working_;            // Waited on.
  // Told ended: a later look that still finds it working (read before the
  // end) is not news.
  std::set<std::string> ended_;
  std::unique_ptr<AsyncDaemonClient> wait_;
  bool answering_ = false;  // In OnWait: it arms the next wait itself.
  bool closed_ = false;
};

// The questions of the session's `ask: "person"` agent tasks, put to the
// client's user as elicitation/create requests (the legacy eras; the modern
// era asks through input_required, tools/task_output.cc). A batond wait on
// the watched tasks that work, on a connection of its own, tells when one
// asks: nothing polls. One question of a task is out at a time, its
// oldest (batond answers in order), and the answer names the question it
// answers, so a form filled in late answers nothing else. A task whose form
// failed, or that ended, is watched no more; its questions stay open for
// the director, as they are for every task (the first answer wins).
class PersonQuestions : public std::enable_shared_from_this<PersonQuestions> {
 public:
  explicit PersonQuestions(Server* server) : server_(server) {}
  void Watch(const std::string& task);
  // `response` answers a request of ours: true when it was one.
  bool OnResponse(const Message& response);
  void Close();

 private:
  struct Asked {
    std::string task;
    OpenQuestion question;
  };
  void Arm();
  void OnWait(Result<WaitReply> reply);
  void Ask(const TaskView& view);
  void Answer(const Asked& asked, const Json& result);

  Server* server_;
  std::set<std::string> working_;       // Waited on.
  std::map<std::string, Asked> asked_;  // By our request's id.
  std::unique_ptr<AsyncDaemonClient> wait_;
  uint64_t serial_ = 0;
  bool closed_ = false;
};

class Server {
 public:
  // `loop` and `transport` outlive the server.
  Server(EventLoop* loop, const McpServerOptions& options,
         Transport* transport);
  // Abandons what is in flight (Shutdown).
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // For the transport.
  // Attaches the session (held from the start, not from the first call). A
  // batond that cannot start is reported by each call.
  void Start();
  // Serves one message; its replies and notifications go to the transport
  // under `message.exchange` (id.dump() when the transport left it empty).
  void Serve(Message message);
  // Parses `line` (one JSON-RPC message) and serves it; a malformed one is
  // answered with its error under "".
  void ServeLine(std::string_view line);
  // The client of `exchange` went away: a call still waiting is dropped
  // (nothing else: a call past its wait answers into the void), a
  // subscription ends.
  void CancelExchange(const std::string& exchange);
  // The client is gone: drops pending waits and subscriptions; calls past
  // their wait finish (they are short).
  void Shutdown();
  bool idle() const { return calls_.empty(); }
  // Destroys the connections retired since the last call. The owner of the
  // loop calls it before the loop sleeps (never from a server callback).
  void ReleaseRetired() { retired_.clear(); }

  // For Call and Subscription.
  const ServerFacts& facts() const { return facts_; }
  EventLoop* loop() { return loop_; }
  std::chrono::milliseconds progress_interval() const {
    return options_.progress_interval;
  }
  // The attached connection, reopened (and re-attached) if it was lost.
  AsyncDaemonClient* MainConnection(Error* error);
  // MainConnection, or nullptr once `message` is answered with the error.
  AsyncDaemonClient* DaemonOrReply(const Message& message);
  Result<std::unique_ptr<AsyncDaemonClient>> OpenConnection(
      std::chrono::milliseconds start_timeout = kDaemonStartTimeout);
  // Destroys `connection` outside of its own callbacks.
  void Retire(std::unique_ptr<AsyncDaemonClient> connection);
  // The standing waits of subscriptions and questions for the person:
  // closes and retires `*slot`'s wait, then, unless `tasks` is empty, sends
  // a new wait on them (each to end or ask) on a connection of its own,
  // kept in `*slot`, with `done` for batond's answer. `who` names the
  // waiter in the log.
  void Rewait(std::unique_ptr<AsyncDaemonClient>* slot,
              const std::set<std::string>& tasks, const std::string& who,
              std::function<void(Result<WaitReply>)> done);
  // The standing wait in `*slot` failed (batond went away, a restart: its
  // tasks run on): retires it and runs `again` a second later.
  void RewaitLater(std::unique_ptr<AsyncDaemonClient>* slot,
                   const std::string& who, const Error& error,
                   std::function<void()> again);
  void Send(const Json& message, const std::string& exchange) {
    transport_->Send(message, exchange);
  }
  void CallEnded(Call* call);
  // The pending notices, each handed out once.
  std::vector<Notice> TakeNotices() { return std::exchange(notices_, {}); }
  // The DetailedTask of `view` (reads an ended task's output tail).
  Json DetailedTaskOf(const TaskView& view) const;
  // Every subscription watching `view`'s task hears of it.
  void TaskChanged(const TaskView& view);
  // The legacy client declared elicitation forms at initialize.
  bool legacy_elicitation() const { return legacy_elicitation_; }
  // Puts `task`'s questions to the client's user (legacy eras).
  void WatchPersonQuestions(const std::string& task);
  // Watches the session's live ask: "person" tasks again: a new `baton mcp`
  // (a restarted client) picks up what the last one watched.
  void WatchPersonQuestionsAgain();

 private:
  void HandleNotification(const Message& message);

  // server_methods.cc
  void HandleRequest(const Message& message);
  void Reply(const Message& message, const RequestMeta& meta, Json result);
  void ReplyError(const Message& message, const RpcError& error);
  void HandleInitialize(const Message& message);
  void HandleDiscover(const Message& message, const RequestMeta& meta);
  void HandleToolsCall(const Message& message, const RequestMeta& meta);
  Json ToolsListResult(bool modern) const;

  // server_tasks.cc
  void HandleTasksMethod(const Message& message, const RequestMeta& meta);
  void HandleListen(const Message& message, const RequestMeta& meta);
  void TasksGet(const Message& message, const RequestMeta& meta,
                const std::string& task);
  void TasksUpdate(const Message& message, const RequestMeta& meta,
                   const std::string& task);
  void TasksCancel(const Message& message, const RequestMeta& meta,
                   const std::string& task);
  // Looks `task` up again and tells the subscriptions.
  void Refresh(const std::string& task);

  EventLoop* loop_;
  McpServerOptions options_;
  Transport* transport_;
  ServerFacts facts_;
  std::unique_ptr<AsyncDaemonClient> main_;
  std::vector<std::unique_ptr<AsyncDaemonClient>> retired_;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // By exchange.
  // By exchange.
  std::map<std::string, std::shared_ptr<Subscription>> subscriptions_;
  std::vector<Notice> notices_;
  bool legacy_elicitation_ = false;
  std::shared_ptr<PersonQuestions> person_questions_;  // Made on first use.
};

}  // namespace baton::mcp

#endif  // BATON_MCP_SERVER_H_
