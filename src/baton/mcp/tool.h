// What one MCP tool is (name, schemas, annotations, handler) and what its
// handler may use while it runs (ToolCall: daemon requests, a cancellable
// wait, the result). The tools themselves live in tools/, one file each;
// tools/tools.h lists them.
#ifndef BATON_MCP_TOOL_H_
#define BATON_MCP_TOOL_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

  static ToolResult Error(std::string message) {
    return {std::move(message), nullptr, true};
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
  using ReplyCallback = std::function<void(Result<Json>)>;

  virtual ~ToolCall() = default;

  virtual const Json& arguments() const = 0;
  virtual const ServerFacts& facts() const = 0;

  // A request on the session's attached connection.
  virtual void Daemon(std::string_view op, Json args, ReplyCallback done) = 0;
  // A `wait` on a connection of its own, so a cancellation (closing it)
  // drops exactly this wait. While it is pending the server sends progress
  // notifications (when the client asked for them) with `what` in the
  // message.
  virtual void DaemonWait(Json args, std::string what, ReplyCallback done) = 0;

  // Answers the call (once; the server adds the pending notices).
  virtual void Finish(ToolResult result) = 0;
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

// Argument helpers. Each returns a message the model can act on, naming the
// argument, what was wrong and an example. `args` is the arguments object.

// A required non-empty string.
Result<std::string> RequiredString(const Json& args, std::string_view name,
                                   std::string_view example);
// An optional string ("" when absent or null).
Result<std::string> OptionalString(const Json& args, std::string_view name);
// An optional boolean.
Result<bool> OptionalBool(const Json& args, std::string_view name,
                          bool fallback);
// An optional number >= minimum (fractions allowed); nullopt when absent.
Result<std::optional<double>> OptionalNumber(const Json& args,
                                             std::string_view name,
                                             double minimum);
// The task ids of "task_id" and/or "task_ids" (merged, in order, without
// duplicates); at least one is required.
Result<std::vector<std::string>> TaskIdsArgument(const Json& args);
// Refuses arguments not in `known` (a typo should not silently do nothing).
Status CheckKnownArguments(const Json& args,
                           const std::vector<std::string_view>& known);

// Safe field access on daemon objects (never throws).
std::string StringField(const Json& object, std::string_view key);
int64_t IntField(const Json& object, std::string_view key,
                 int64_t fallback = 0);

}  // namespace baton::mcp

#endif  // BATON_MCP_TOOL_H_
