// What one MCP tool is (name, schemas, annotations, handler) and what its
// handler may use while it runs (ToolCall: typed requests to batond, a
// cancellable wait, the result). The tools themselves live in tools/, one file
// each; tools/tools.h lists them. Their arguments: arguments.h.
#ifndef BATON_MCP_TOOL_H_
#define BATON_MCP_TOOL_H_

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/async_daemon_client.h"
#include "baton/ipc/messages.h"
#include "baton/mcp/arguments.h"
#include "baton/mcp/modern.h"
#include "baton/util/result.h"

namespace baton::mcp {

using Json = nlohmann::json;

// What a tool answers. `structured` must match the tool's outputSchema
// (without "notices", which the server adds); the server also puts it, as
// JSON, after `text`. Errors carry only text, for the model to act on.
struct ToolResult {
  std::string text;
  Json structured;
  bool is_error = false;
  // The task a tool started (run, delegate): a client of the tasks
  // extension is answered with it as a CreateTaskResult instead.
  std::optional<TaskView> started;

  static ToolResult Error(std::string message) {
    return {std::move(message), nullptr, true, std::nullopt};
  }
};

// Facts about the server a tool may need.
struct ServerFacts {
  std::string session;
  std::string baton_binary;  // Absolute path of this executable.
  std::string baton_home;    // $BATON_HOME, or "" when unset.
  std::string cwd;           // The server's working directory.
};

// One running tools/call. Implemented by the server. Callbacks given to it
// run on the loop thread, never re-entrantly, and never after the call was
// finished or cancelled, so handlers need no "still alive?" checks.
class ToolCall : public std::enable_shared_from_this<ToolCall> {
 public:
  template <class R>
  using ReplyCallback = std::function<void(Result<typename R::Reply>)>;

  virtual ~ToolCall() = default;

  virtual const Json& arguments() const = 0;
  virtual const ServerFacts& facts() const = 0;
  // What the request's `_meta` said (modern era), or a legacy request.
  virtual const RequestMeta& meta() const = 0;
  // The inputResponses of a modern retry (multi round-trip), else null,
  // and the requestState it echoes ("" when none).
  virtual const Json& input_responses() const = 0;
  virtual const std::string& request_state() const = 0;
  // The client can show its user a form: it declared elicitation forms (in
  // this request's _meta, or at initialize), so `ask: "person"` can work.
  virtual bool CanAskPerson() const = 0;
  // `task`, just delegated with ask: "person", has its questions put to the
  // client's user. Legacy eras: the server sends elicitation/create as each
  // one comes. The modern era has no server requests: a wait that reports
  // the question answers input_required instead (InputRequired).
  virtual void WatchPersonQuestions(const std::string& task) = 0;
  // Ends the call with resultType "input_required" (modern era): the
  // client asks its user and sends the same call again with
  // inputResponses under the keys of `input_requests`, and `request_state`
  // as it was.
  virtual void InputRequired(Json input_requests,
                             std::string request_state) = 0;

  // A typed request (ipc/messages.h) on the session's attached connection;
  // `done` gets batond's typed reply or the error (also when batond cannot
  // be reached).
  template <class R>
  void Daemon(const R& request, ReplyCallback<R> done) {
    Error error;
    AsyncDaemonClient* connection = daemon(&error);
    std::shared_ptr<ToolCall> self = shared_from_this();
    if (!connection) {
      return Post(
          [done = std::move(done), error] { done(std::unexpected(error)); });
    }
    connection->Call(request, [self, done = std::move(done)](
                                  Result<typename R::Reply> reply) mutable {
      self->Run([&] { done(std::move(reply)); });
    });
  }

  // A `wait` on a connection of its own, so a cancellation (closing it)
  // drops exactly this wait. While it is pending the server sends progress
  // notifications (when the client asked for them) with `what` in the
  // message.
  virtual void DaemonWait(WaitRequest request, std::string what,
                          ReplyCallback<WaitRequest> done) = 0;

  // Answers the call (once; the server adds the pending notices).
  virtual void Finish(ToolResult result) = 0;

 protected:
  // The session's attached connection, reopened (and re-attached) when it
  // was lost; nullptr with `*error` set when batond cannot be reached.
  virtual AsyncDaemonClient* daemon(Error* error) = 0;
  // Runs `fn` now unless the call has ended.
  virtual void Run(const std::function<void()>& fn) = 0;
  // Runs `fn` from the loop, soon, unless the call has ended by then.
  virtual void Post(std::function<void()> fn) = 0;
};

using ToolCallPtr = std::shared_ptr<ToolCall>;

struct ToolDefinition {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema;
  Json output_schema;  // Without "notices": the server adds it.
  Json annotations;
  // Starts the call; must end in call->Finish (now or from a callback).
  std::function<void(const ToolCallPtr& call)> handler;
};

}  // namespace baton::mcp

#endif  // BATON_MCP_TOOL_H_
