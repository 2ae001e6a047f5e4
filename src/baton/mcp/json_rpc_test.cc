#include "baton/mcp/json_rpc.h"

#include <gtest/gtest.h>

namespace baton::mcp {
namespace {

TEST(JsonRpc, ParsesRequestWithIntegerAndStringIds) {
  Message m = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  EXPECT_EQ(m.kind, Message::Kind::kRequest);
  EXPECT_EQ(m.id, Json(7));
  EXPECT_EQ(m.method, "ping");
  m = ParseMessage(
      R"({"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{}})");
  EXPECT_EQ(m.kind, Message::Kind::kRequest);
  EXPECT_EQ(m.id, Json("server-discover-probe-1"));
  EXPECT_TRUE(m.params.is_object());
}

TEST(JsonRpc, NotificationHasNoId) {
  Message m = ParseMessage(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})");
  EXPECT_EQ(m.kind, Message::Kind::kNotification);
  EXPECT_EQ(m.params["requestId"], 3);
}

TEST(JsonRpc, MalformedJsonIsParseError) {
  Message m = ParseMessage(R"({"jsonrpc":"2.0","id":1,"method":)");
  EXPECT_EQ(m.kind, Message::Kind::kInvalid);
  EXPECT_EQ(m.error_code, kParseError);
  EXPECT_TRUE(m.id.is_null());
}

TEST(JsonRpc, BadShapesAreInvalidRequestKeepingTheId) {
  struct Case {
    const char* line;
    Json id;
  };
  for (const Case& c : {
           Case{R"([1,2])", nullptr},
           Case{R"("hello")", nullptr},
           Case{R"({"id":1,"method":"ping"})", 1},  // no jsonrpc
           Case{R"({"jsonrpc":"1.0","id":1,"method":"ping"})", 1},
           Case{R"({"jsonrpc":"2.0","id":2,"method":5})", 2},
           Case{R"({"jsonrpc":"2.0","id":"a","params":{}})", "a"},
           Case{R"({"jsonrpc":"2.0","id":3,"method":"x","params":"p"})", 3},
           Case{R"({"jsonrpc":"2.0","id":null,"method":"ping"})", nullptr},
           Case{R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", nullptr},
           Case{R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", nullptr},
           Case{R"({"jsonrpc":"2.0","id":true,"method":"ping"})", nullptr},
       }) {
    Message m = ParseMessage(c.line);
    EXPECT_EQ(m.kind, Message::Kind::kInvalid) << c.line;
    EXPECT_EQ(m.error_code, kInvalidRequest) << c.line;
    EXPECT_EQ(m.id, c.id) << c.line;
  }
}

TEST(JsonRpc, DeepNestingIsAParseErrorNotACrash) {
  // Issue 12, finding 3: a cancellation whose requestId nests 60,000 lists
  // deep overflowed the stack when the id was printed.
  std::string deep = std::string(60'000, '[') + std::string(60'000, ']');
  for (
      const std::string& line :
      {R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
           deep + "}}",
       R"({"jsonrpc":"2.0","id":)" + deep + R"(,"method":"ping"})", deep}) {
    Message m = ParseMessage(line);
    EXPECT_EQ(m.kind, Message::Kind::kInvalid);
    EXPECT_EQ(m.error_code, kParseError);
    EXPECT_NE(m.error_message.find("nested deeper than"), std::string::npos)
        << m.error_message;
    EXPECT_TRUE(m.id.is_null());
  }
  // Within the limit, nesting is fine.
  std::string ok = std::string(kMaxMessageDepth - 2, '[') +
                   std::string(kMaxMessageDepth - 2, ']');
  Message m = ParseMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":)" + ok + "}}");
  EXPECT_EQ(m.kind, Message::Kind::kRequest) << m.error_message;
}

TEST(JsonRpc, RequestIds) {
  EXPECT_EQ(RequestId(Json(7)), Json(7));
  EXPECT_EQ(RequestId(Json("a")), Json("a"));
  EXPECT_EQ(RequestId(Json(3.0)), Json(3));
  EXPECT_EQ(RequestId(Json(3.0))->dump(), "3");
  for (const Json& bad : {Json(nullptr), Json(1.5), Json(true), Json(1e300),
                          Json(-1e19), Json::array({1}), Json::object()}) {
    EXPECT_FALSE(RequestId(bad).has_value()) << bad.dump();
  }
  // A float id beyond int64 is refused, not cast (undefined behaviour).
  Message m = ParseMessage(R"({"jsonrpc":"2.0","id":1e300,"method":"ping"})");
  EXPECT_EQ(m.kind, Message::Kind::kInvalid);
  EXPECT_EQ(m.error_code, kInvalidRequest);
  m = ParseMessage(R"({"jsonrpc":"2.0","id":4.0,"method":"ping"})");
  EXPECT_EQ(m.kind, Message::Kind::kRequest);
  EXPECT_EQ(m.id, Json(4));
}

TEST(JsonRpc, MemberIsCheckedOnAnyValue) {
  Json object = {{"a", 1}};
  ASSERT_NE(Member(object, "a"), nullptr);
  EXPECT_EQ(*Member(object, "a"), 1);
  EXPECT_EQ(Member(object, "b"), nullptr);
  EXPECT_EQ(Member(Json::array({1}), "a"), nullptr);
  EXPECT_EQ(Member(Json("a"), "a"), nullptr);
  EXPECT_EQ(Member(Json(), "a"), nullptr);
}

TEST(JsonRpc, ResponsesAreRecognised) {
  Message m = ParseMessage(R"({"jsonrpc":"2.0","id":1,"result":{}})");
  EXPECT_EQ(m.kind, Message::Kind::kResponse);
}

TEST(JsonRpc, SerializedLineIsOneLineEvenForBinaryOutput) {
  Json msg = MakeResult(1, {{"text", std::string("a\nb\xff\xfe", 5)}});
  std::string line = SerializeLine(msg);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  Json back = Json::parse(line);
  EXPECT_EQ(back["result"]["text"], "a\nb\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(JsonRpc, ErrorResponseShape) {
  Json e = MakeErrorResponse("x", kMethodNotFound, "Method not found: y");
  EXPECT_EQ(e["jsonrpc"], "2.0");
  EXPECT_EQ(e["id"], "x");
  EXPECT_EQ(e["error"]["code"], -32601);
  EXPECT_FALSE(e["error"].contains("data"));
}

}  // namespace
}  // namespace baton::mcp
