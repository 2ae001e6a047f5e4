#include "baton/mcp/json_rpc.h"

#include <cmath>

namespace baton::mcp {
namespace {

// JSON-RPC ids in MCP are strings or integers (never null).
bool ValidId(const Json& id) {
  if (id.is_string() || id.is_number_integer())
    return true;
  // 3.0 is an integer written as a float by some encoders; accept it.
  if (id.is_number_float()) {
    double value = id.get<double>();
    return std::isfinite(value) && std::floor(value) == value;
  }
  return false;
}

Message Invalid(Json id, std::string message) {
  Message out;
  out.kind = Message::Kind::kInvalid;
  out.id = std::move(id);
  out.error_code = kInvalidRequest;
  out.error_message = std::move(message);
  return out;
}

}  // namespace

Message ParseMessage(std::string_view line) {
  Json doc = Json::parse(line.begin(), line.end(), nullptr,
                         /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    Message out;
    out.error_code = kParseError;
    out.error_message = "Parse error: the line is not valid JSON";
    return out;
  }
  if (doc.is_array()) {
    return Invalid(nullptr,
                   "Invalid Request: batches are not supported (removed in "
                   "MCP 2025-06-18); send one message per line");
  }
  if (!doc.is_object())
    return Invalid(nullptr, "Invalid Request: a message must be an object");

  Json id;
  bool has_id = doc.contains("id");
  if (has_id) {
    if (!ValidId(doc["id"])) {
      return Invalid(nullptr,
                     "Invalid Request: 'id' must be a string or an integer");
    }
    id = doc["id"];
    if (id.is_number_float())
      id = static_cast<int64_t>(id.get<double>());
  }
  auto version = doc.find("jsonrpc");
  if (version == doc.end() || !version->is_string() || *version != "2.0")
    return Invalid(id, "Invalid Request: 'jsonrpc' must be \"2.0\"");

  auto method = doc.find("method");
  if (method == doc.end()) {
    if (has_id && (doc.contains("result") || doc.contains("error"))) {
      Message out;
      out.kind = Message::Kind::kResponse;
      out.id = id;
      return out;
    }
    return Invalid(id, "Invalid Request: 'method' is missing");
  }
  if (!method->is_string())
    return Invalid(id, "Invalid Request: 'method' must be a string");

  Message out;
  out.id = id;
  out.method = method->get<std::string>();
  if (auto params = doc.find("params"); params != doc.end()) {
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
