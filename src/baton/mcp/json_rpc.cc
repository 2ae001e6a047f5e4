#include "baton/mcp/json_rpc.h"

#include <cmath>

#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

Message Invalid(Json id, std::string message) {
  Message out;
  out.kind = Message::Kind::kInvalid;
  out.id = std::move(id);
  out.error_code = kInvalidRequest;
  out.error_message = std::move(message);
  return out;
}

}  // namespace

std::optional<Json> RequestId(const Json& value) {
  // JSON-RPC ids in MCP are strings or integers (never null).
  if (value.is_string() || value.is_number_integer())
    return value;
  // 3.0 is an integer written as a float by some encoders; accept it when
  // it is one an int64_t holds.
  if (const auto* number = value.get_ptr<const double*>()) {
    if (std::isfinite(*number) && std::floor(*number) == *number &&
        std::fabs(*number) < 9.2e18) {
      return Json(static_cast<int64_t>(*number));
    }
  }
  return std::nullopt;
}

const Json* Member(const Json& object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Message ParseMessage(std::string_view line) {
  auto parsed = ParseJson(line, {.max_depth = kMaxMessageDepth});
  if (!parsed) {
    Message out;
    out.error_code = kParseError;
    out.error_message = "Parse error: " + parsed.error().message;
    return out;
  }
  const Json& doc = parsed->value;
  if (doc.is_array()) {
    return Invalid(nullptr,
                   "Invalid Request: batches are not supported (removed in "
                   "MCP 2025-06-18); send one message per line");
  }
  if (!doc.is_object())
    return Invalid(nullptr, "Invalid Request: a message must be an object");

  Json id;
  const Json* given_id = Member(doc, "id");
  bool has_id = given_id != nullptr;
  if (has_id) {
    auto valid = RequestId(*given_id);
    if (!valid) {
      return Invalid(nullptr,
                     "Invalid Request: 'id' must be a string or an integer");
    }
    id = std::move(*valid);
  }
  const Json* version = Member(doc, "jsonrpc");
  const auto* version_text =
      version ? version->get_ptr<const std::string*>() : nullptr;
  if (!version_text || *version_text != "2.0")
    return Invalid(id, "Invalid Request: 'jsonrpc' must be \"2.0\"");

  const Json* method = Member(doc, "method");
  if (!method) {
    const Json* result = Member(doc, "result");
    const Json* error = Member(doc, "error");
    if (has_id && (result || error)) {
      Message out;
      out.kind = Message::Kind::kResponse;
      out.id = id;
      out.failed = result == nullptr;
      out.result = result ? *result : *error;
      return out;
    }
    return Invalid(id, "Invalid Request: 'method' is missing");
  }
  const auto* method_text = method->get_ptr<const std::string*>();
  if (!method_text)
    return Invalid(id, "Invalid Request: 'method' must be a string");

  Message out;
  out.id = id;
  out.method = *method_text;
  if (const Json* params = Member(doc, "params")) {
    if (!params->is_object() && !params->is_array())
      return Invalid(id, "Invalid Request: 'params' must be an object");
    out.params = *params;
  }
  out.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
  return out;
}

Json MakeResult(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json MakeErrorResponse(const Json& id, int code, std::string_view message,
                       const Json& data) {
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null())
    error["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

Json MakeNotification(std::string_view method, Json params) {
  return {
      {"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

std::string SerializeLine(const Json& message) {
  std::string line =
      message.dump(-1, ' ', false, Json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

}  // namespace baton::mcp
