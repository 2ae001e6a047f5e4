#include "baton/mcp/modern.h"

#include <gtest/gtest.h>

namespace baton::mcp {
namespace {

Json Params(Json meta) {
  return {{"_meta", std::move(meta)}};
}

TEST(RequestMeta, WithoutAVersionARequestIsLegacy) {
  for (const Json& params : {Json(nullptr), Json::object(),
                             Params({{"progressToken", 3}}), Json::array()}) {
    auto meta = ReadRequestMeta(params);
    ASSERT_TRUE(meta) << params.dump();
    EXPECT_FALSE(meta->modern);
  }
}

TEST(RequestMeta, ReadsTheModernFields) {
  auto meta = ReadRequestMeta(
      Params({{kMetaProtocolVersion, "2026-07-28"},
              {kMetaClientCapabilities,
               {{"extensions", {{"io.modelcontextprotocol/tasks", {}}}},
                {"elicitation", {{"form", {}}}}}},
              {kMetaClientInfo, {{"name", "c"}, {"version", "1"}}}}));
  ASSERT_TRUE(meta);
  EXPECT_TRUE(meta->modern);
  EXPECT_TRUE(meta->HasExtension(kTasksExtension));
  EXPECT_FALSE(meta->HasExtension("io.modelcontextprotocol/ui"));
  EXPECT_TRUE(meta->ElicitationForm());
  EXPECT_EQ(meta->client_info["name"], "c");
}

TEST(RequestMeta, ElicitationFormOnlyWhenDeclared) {
  auto with = [](Json elicitation) {
    auto meta = ReadRequestMeta(
        Params({{kMetaProtocolVersion, "2026-07-28"},
                {kMetaClientCapabilities, {{"elicitation", elicitation}}}}));
    return meta && meta->ElicitationForm();
  };
  EXPECT_TRUE(with(Json::object()));
  EXPECT_FALSE(with({{"url", Json::object()}}));
  EXPECT_FALSE(with("yes"));
}

TEST(RequestMeta, AnUnservedVersionIsUnsupportedWithTheList) {
  for (const Json& version : {Json("2099-01-01"), Json("2025-11-25"),
                              Json(20260728), Json(nullptr)}) {
    auto meta =
        ReadRequestMeta(Params({{kMetaProtocolVersion, version},
                                {kMetaClientCapabilities, Json::object()}}));
    ASSERT_FALSE(meta) << version.dump();
    EXPECT_EQ(meta.error().code, kUnsupportedProtocolVersion);
    EXPECT_EQ(meta.error().data["supported"], Json::array({"2026-07-28"}));
    EXPECT_EQ(meta.error().data["requested"], version);
  }
}

TEST(RequestMeta, CapabilitiesAreRequired) {
  for (const Json& capabilities : {Json(nullptr), Json("x"), Json::array()}) {
    Json meta = {{kMetaProtocolVersion, "2026-07-28"}};
    if (!capabilities.is_null())
      meta[kMetaClientCapabilities] = capabilities;
    auto read = ReadRequestMeta(Params(meta));
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, -32602);
    EXPECT_NE(read.error().message.find("clientCapabilities"),
              std::string::npos);
  }
}

TEST(ModernResult, AddsResultTypeAndServerInfo) {
  Json result = ModernResult({{"tools", Json::array()}});
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["_meta"][kMetaServerInfo]["name"], "baton");
  EXPECT_EQ(ModernResult(Json::object(), "task")["resultType"], "task");
  EXPECT_EQ(ModernResult(nullptr)["resultType"], "complete");
}

TEST(MissingTasksExtension, NamesTheCapability) {
  RpcError error = MissingTasksExtension("tasks/get");
  EXPECT_EQ(error.code, -32021);
  EXPECT_EQ(error.data["requiredCapabilities"]["extensions"]
                      ["io.modelcontextprotocol/tasks"],
            Json::object());
  EXPECT_NE(error.message.find("tasks/get"), std::string::npos);
}

}  // namespace
}  // namespace baton::mcp
