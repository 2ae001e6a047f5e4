// Fuzzes MCP's JSON-RPC line parser (mcp/json_rpc.h): any bytes are
// classified without a throw, and the reply the server would send for them
// (an error for an invalid message, a result for a request) serializes as
// one line of JSON. The server around it is mcp_server_fuzz.cc.
#include <cstdint>
#include <string_view>

#include "baton/mcp/json_rpc.h"
#include "fuzz/fuzz_checks.h"

using baton::mcp::Message;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  Message message = baton::mcp::ParseMessage(line);
  FUZZ_CHECK(message.id.is_null() || message.id.is_string() ||
                 message.id.is_number_integer(),
             "an id that is kept is a string or an integer");
  std::string reply;
  switch (message.kind) {
    case Message::Kind::kInvalid:
      FUZZ_CHECK(message.error_code != 0, "an invalid message has a code");
      reply = baton::mcp::SerializeLine(baton::mcp::MakeErrorResponse(
          message.id, message.error_code, message.error_message));
      break;
    case Message::Kind::kRequest:
      reply = baton::mcp::SerializeLine(
          baton::mcp::MakeResult(message.id, baton::mcp::Json::object()));
      break;
    case Message::Kind::kNotification:
    case Message::Kind::kResponse:
      return 0;
  }
  FUZZ_CHECK(!reply.empty() && reply.back() == '\n', "a reply ends its line");
  reply.pop_back();
  FUZZ_CHECK(baton::fuzz::IsOneJsonLine(reply), "a reply is one JSON line");
  return 0;
}
