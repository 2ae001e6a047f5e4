// The methods of `baton mcp`, in both eras: the legacy handshake
// (initialize), the modern discovery (server/discover), tools/list and
// tools/call. The tasks extension and subscriptions are in server_tasks.cc.
#include <fmt/format.h>

#include "baton/mcp/protocol_version.h"
#include "baton/mcp/server.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/log.h"

namespace baton::mcp {
namespace {

// How long a client may keep tools/list and server/discover: the tools of
// one baton binary never change (a new binary is a new server process).
constexpr int64_t kListTtlMs = 3600 * 1000;

Json NoticesSchema() {
  return {{"type", "array"},
          {"description",
           "Tasks of this session that ended and whose end you had not seen, "
           "agent tasks that ask a question you were not told of, and "
           "overlaps between your workers' changes (`overlap`, as the "
           "conflicts tool lists them); each is told once"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"task_id", {{"type", "string"}}},
              {"status", {{"type", "string"}}},
              {"detail", {{"type", "string"}}},
              {"text", {{"type", "string"}}},
              {"evidence", EvidenceSchema()},
              {"questions", PendingQuestionsSchema()},
              {"overlap", {{"type", "object"}}}}},
            {"required", {"task_id", "text"}}}}};
}

// The tools whose call starts a task, answered as a CreateTaskResult to a
// client of the tasks extension.
bool StartsTask(const std::string& tool) {
  return tool == "run" || tool == "delegate";
}

}  // namespace

void Server::Reply(const Message& message, const RequestMeta& meta,
                   Json result) {
  Send(MakeResult(message.id,
                  meta.modern ? ModernResult(std::move(result)) : result),
       message.exchange);
}

void Server::ReplyError(const Message& message, const RpcError& error) {
  Send(MakeErrorResponse(message.id, error.code, error.message, error.data),
       message.exchange);
}

void Server::HandleRequest(const Message& message) {
  const std::string& method = message.method;
  if (method == "initialize")
    return HandleInitialize(message);
  auto meta = ReadRequestMeta(message.params);
  if (!meta) {
    // server/discover is how a client learns what we speak: it is answered
    // whatever version its _meta names.
    if (method != "server/discover")
      return ReplyError(message, meta.error());
    meta = RequestMeta{};
    meta->modern = true;
  }
  if (method == "server/discover")
    return HandleDiscover(message, *meta);
  if (method == "ping")
    return Reply(message, *meta, Json::object());
  if (method == "tools/list")
    return Reply(message, *meta, ToolsListResult(meta->modern));
  if (method == "tools/call")
    return HandleToolsCall(message, *meta);
  if (method == "subscriptions/listen")
    return HandleListen(message, *meta);
  if (method == "tasks/get" || method == "tasks/update" ||
      method == "tasks/cancel") {
    return HandleTasksMethod(message, *meta);
  }
  ReplyError(message, {kMethodNotFound,
                       fmt::format("Method not found: {}", method), nullptr});
}

void Server::HandleInitialize(const Message& message) {
  Json requested;
  if (const Json* asked = Member(message.params, "protocolVersion"))
    requested = *asked;
  std::string_view version = NegotiateProtocolVersion(requested);
  BATON_LOG_INFO("initialize: client asked {}, we speak {}", requested.dump(),
                 version);
  if (const Json* capabilities = Member(message.params, "capabilities"))
    legacy_elicitation_ = DeclaresElicitationForm(*capabilities);
  if (legacy_elicitation_)
    WatchPersonQuestionsAgain();
  Send(MakeResult(message.id,
                  {{"protocolVersion", version},
                   {"capabilities", {{"tools", {{"listChanged", false}}}}},
                   {"serverInfo", ServerInfo()},
                   {"instructions", kInstructions}}),
       message.exchange);
}

void Server::HandleDiscover(const Message& message, const RequestMeta& meta) {
  Json versions = Json::array({kModernVersion});
  for (std::string_view legacy : kSupportedVersions)
    versions.push_back(legacy);
  BATON_LOG_INFO("server/discover from {}", meta.client_info.is_null()
                                                ? "a client"
                                                : meta.client_info.dump());
  Send(MakeResult(
           message.id,
           ModernResult({{"supportedVersions", std::move(versions)},
                         {"capabilities",
                          {{"tools", {{"listChanged", false}}},
                           {"extensions",
                            {{std::string(kTasksExtension), Json::object()}}}}},
                         {"instructions", kInstructions},
                         {"ttlMs", kListTtlMs},
                         {"cacheScope", "public"}})),
       message.exchange);
}

Json Server::ToolsListResult(bool modern) const {
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
  Json result = {{"tools", std::move(tools)}};
  if (modern) {
    result["ttlMs"] = kListTtlMs;
    result["cacheScope"] = "public";
  }
  return result;
}

void Server::HandleToolsCall(const Message& message, const RequestMeta& meta) {
  const Json* name_json = Member(message.params, "name");
  const auto* name =
      name_json ? name_json->get_ptr<const std::string*>() : nullptr;
  if (!name) {
    return ReplyError(
        message,
        {kInvalidParams, "Invalid params: tools/call needs a 'name'", nullptr});
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
    return ReplyError(
        message,
        {kInvalidParams,
         fmt::format("Unknown tool: {} (tools: {})", *name, names), nullptr});
  }
  Json arguments = Json::object();
  if (const Json* given = Member(message.params, "arguments");
      given && !given->is_null()) {
    if (!given->is_object()) {
      return ReplyError(
          message, {kInvalidParams,
                    "Invalid params: 'arguments' must be an object", nullptr});
    }
    arguments = *given;
  }
  Json token;
  if (const Json* meta_json = Member(message.params, "_meta")) {
    const Json* given = Member(*meta_json, "progressToken");
    if (given && (given->is_string() || given->is_number_integer()))
      token = *given;  // Echoed with its own JSON type.
  }
  bool as_task =
      meta.modern && meta.HasExtension(kTasksExtension) && StartsTask(*name);
  auto call = std::make_shared<Call>(this, message.id, message.exchange,
                                     std::move(token), std::move(arguments),
                                     meta, as_task);
  if (meta.modern) {
    if (const Json* responses = Member(message.params, "inputResponses");
        responses && responses->is_object()) {
      const Json* state = Member(message.params, "requestState");
      const auto* text = state ? state->get_ptr<const std::string*>() : nullptr;
      call->set_input_responses(*responses, text ? *text : "");
    }
  }
  calls_[call->key()] = call;
  try {
    tool->handler(call);
  } catch (const std::exception& e) {
    BATON_LOG_ERROR("tool {}: {}", *name, e.what());
    call->Finish(ToolResult::Error(
        fmt::format("internal error in baton mcp: {}", e.what())));
  }
}

}  // namespace baton::mcp
