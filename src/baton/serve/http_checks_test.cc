#include "baton/serve/http_checks.h"

#include <gtest/gtest.h>

#include "baton/mcp/json_rpc.h"
#include "baton/serve/board_access.h"
#include "baton/serve/mcp_headers.h"
#include "baton/serve/serve.h"

namespace baton::serve {
namespace {

TEST(ServeListen, ParsesHostsAndPorts) {
  auto v4 = ParseListenAddress("127.0.0.1:7420");
  ASSERT_TRUE(v4) << v4.error().message;
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 7420);
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(ParseListenAddress("localhost:80")->host, "127.0.0.1");
  for (const char* bad :
       {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
        "example.com:80", ":80", "127.0.0.1:80x"}) {
    auto parsed = ParseListenAddress(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find("HOST:PORT"), std::string::npos);
  }
}

TEST(ServeListen, KnowsLoopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.3.2.1"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("192.168.1.4"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

TEST(ServeHostPolicy, AcceptsOnlyOurNamesWithTheBoundPort) {
  HostPolicy policy({"127.0.0.1", 0}, 7420, {"mybox.lan"});
  EXPECT_TRUE(policy.HostAllowed("127.0.0.1:7420"));
  EXPECT_TRUE(policy.HostAllowed("LOCALHOST:7420"));
  EXPECT_TRUE(policy.HostAllowed("[::1]:7420"));
  EXPECT_TRUE(policy.HostAllowed("mybox.lan:7420"));
  // DNS rebinding: the attacker's name resolves to us, the Host stays his.
  EXPECT_FALSE(policy.HostAllowed("evil.example:7420"));
  EXPECT_FALSE(policy.HostAllowed("127.0.0.1:7421"));
  EXPECT_FALSE(policy.HostAllowed("127.0.0.1"));
  EXPECT_FALSE(policy.HostAllowed(""));
}

TEST(ServeHostPolicy, OriginMustBeOurOwnOrAbsent) {
  HostPolicy policy({"127.0.0.1", 7420}, 7420, {});
  EXPECT_TRUE(policy.OriginAllowed(nullptr));
  std::string ok = "http://localhost:7420";
  EXPECT_TRUE(policy.OriginAllowed(&ok));
  for (std::string bad :
       {"http://evil.example:7420", "https://localhost:7420", "null", "",
        "http://localhost:8080", "http://localhost:7420.evil.example"}) {
    EXPECT_FALSE(policy.OriginAllowed(&bad)) << bad;
  }
}

TEST(ServeBearer, MatchesOnlyTheWholeToken) {
  std::string token = "0123456789abcdef0123456789abcdef";
  std::string good = "Bearer " + token;
  std::string lower = "bearer " + token;
  EXPECT_TRUE(BearerTokenMatches(&good, token));
  EXPECT_TRUE(BearerTokenMatches(&lower, token));
  EXPECT_FALSE(BearerTokenMatches(nullptr, token));
  for (const std::string& bad : std::vector<std::string>{
           "Bearer", "Bearer ", "Basic " + token, token,
           "Bearer " + token.substr(1), "Bearer " + token + "0",
           "Bearer 0123456789abcdef0123456789abcdeX"}) {
    EXPECT_FALSE(BearerTokenMatches(&bad, token)) << bad;
  }
  // An empty configured token never matches.
  std::string empty = "Bearer ";
  EXPECT_FALSE(BearerTokenMatches(&empty, ""));
}

TEST(ServeBoardLogin, ReadsCookiesAndQueries) {
  std::string cookie = "a=1; baton_board_7420=abc ;other=x=y";
  EXPECT_EQ(CookieValue(&cookie, "baton_board_7420"), "abc");
  EXPECT_EQ(CookieValue(&cookie, "other"), "x=y");
  EXPECT_FALSE(CookieValue(&cookie, "baton_board_1"));
  EXPECT_FALSE(CookieValue(nullptr, "a"));
  EXPECT_EQ(QueryValue("/?token=ab%41+c&x=1", "token"), "abA c");
  EXPECT_EQ(QueryValue("/x?a&token=", "token"), "");
  EXPECT_FALSE(QueryValue("/x?tokens=1", "token"));
  EXPECT_FALSE(QueryValue("/x", "token"));
  EXPECT_FALSE(QueryValue("/x?token=%4", "token"));
  EXPECT_FALSE(QueryValue("/x?token=%zz", "token"));
  EXPECT_EQ(BoardCookieName(7420), "baton_board_7420");
}

TEST(ServeBoardLogin, ALoginRequestIsGetSlashWithACodeForThePageToClaim) {
  HttpRequest login{"GET", "/?login=abc", {}, ""};
  EXPECT_EQ(BoardLoginCode(login), "abc");
  EXPECT_FALSE(CheckBoardAccess(login, "secret", "c"));
  // The token itself is no login any more, nor is a code elsewhere.
  for (const char* target :
       {"/?token=secret", "/", "/board/api/tasks?login=abc"}) {
    HttpRequest other{"GET", target, {}, ""};
    EXPECT_FALSE(BoardLoginCode(other)) << target;
    auto refused = CheckBoardAccess(other, "secret", "c");
    ASSERT_TRUE(refused) << target;
    EXPECT_EQ(refused->status, 401);
  }
  HttpRequest post{"POST", "/?login=abc", {}, ""};
  EXPECT_FALSE(BoardLoginCode(post));
}

TEST(ServeBoardLogin, CookieOpensReadsAndOriginGuardsWrites) {
  HttpRequest read{"GET", "/board/api/tasks", {{"Cookie", "c=secret"}}, ""};
  EXPECT_FALSE(CheckBoardAccess(read, "secret", "c"));
  HttpRequest wrong{"GET", "/board/api/tasks", {{"Cookie", "c=other"}}, ""};
  EXPECT_EQ(CheckBoardAccess(wrong, "secret", "c")->status, 401);
  HttpRequest other_name{"GET", "/", {{"Cookie", "d=secret"}}, ""};
  EXPECT_EQ(CheckBoardAccess(other_name, "secret", "c")->status, 401);
  HttpRequest post{"POST", "/board/api/kill", {{"Cookie", "c=secret"}}, "{}"};
  auto refused = CheckBoardAccess(post, "secret", "c");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(refused->message.find("Origin"), std::string::npos);
  post.headers.emplace_back("Origin", "http://127.0.0.1:7420");
  EXPECT_FALSE(CheckBoardAccess(post, "secret", "c"));
  HttpRequest no_cookie{
      "POST", "/board/api/kill", {{"Origin", "http://127.0.0.1:7420"}}, "{}"};
  EXPECT_EQ(CheckBoardAccess(no_cookie, "secret", "c")->status, 401);
}

TEST(ServeBoardLogin, ABrowserWithoutTheCookieGetsASignInPage) {
  // The page itself (what a browser opens); not the API, nor a POST.
  EXPECT_TRUE(WantsSignInPage({"GET", "/", {}, ""}));
  EXPECT_TRUE(WantsSignInPage({"HEAD", "/?x=1", {}, ""}));
  EXPECT_FALSE(WantsSignInPage({"GET", "/board/api/tasks", {}, ""}));
  EXPECT_FALSE(WantsSignInPage({"GET", "/board.js", {}, ""}));
  EXPECT_FALSE(WantsSignInPage({"POST", "/", {}, ""}));
  HttpResponse page = BoardSignInPage("no <cookie> & \"more\"");
  EXPECT_EQ(page.status, 401);
  auto header = [&page](std::string_view name) {
    for (const auto& [key, value] : page.headers) {
      if (key == name)
        return value;
    }
    return std::string();
  };
  EXPECT_EQ(header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(header("Cache-Control"), "no-store");
  // Nothing runs in it; only its own style and icon load.
  EXPECT_EQ(header("Content-Security-Policy").find("script-src"),
            std::string::npos);
  EXPECT_NE(page.body.find("<pre>baton board</pre>"), std::string::npos);
  EXPECT_NE(page.body.find("no &lt;cookie&gt; &amp; &quot;more&quot;"),
            std::string::npos);
  EXPECT_EQ(page.body.find("<cookie>"), std::string::npos);
}

TEST(ServeAccept, ReadsMediaRanges) {
  std::string both = "application/json, text/event-stream";
  EXPECT_TRUE(Accepts(&both, "application/json"));
  EXPECT_TRUE(Accepts(&both, "text/event-stream"));
  std::string json = "application/json;q=0.9";
  EXPECT_FALSE(Accepts(&json, "text/event-stream"));
  std::string any = "*/*";
  EXPECT_TRUE(Accepts(&any, "text/event-stream"));
  std::string text_any = "TEXT/*";
  EXPECT_TRUE(Accepts(&text_any, "text/event-stream"));
  EXPECT_TRUE(Accepts(nullptr, "application/json"));
  std::string html = "text/html";
  EXPECT_FALSE(Accepts(&html, "application/json"));
}

TEST(ServeHeaders, DecodesTheBase64Sentinel) {
  EXPECT_EQ(DecodeHeaderValue("us-west1"), "us-west1");
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="),
            "Hello, \xe4\xb8\x96\xe7\x95\x8c");
  EXPECT_EQ(DecodeHeaderValue("=?base64?IHBhZGRlZCA=?="), " padded ");
  EXPECT_FALSE(DecodeHeaderValue("=?base64?not base64!?="));
  EXPECT_FALSE(DecodeHeaderValue("line\nbreak"));
  EXPECT_FALSE(DecodeHeaderValue("caf\xc3\xa9"));
}

HttpRequest ModernPost(HeaderList headers) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/mcp";
  request.headers = std::move(headers);
  return request;
}

mcp::Message ParseMcpMessage(const char* text) {
  return mcp::ParseMessage(text);
}

TEST(ServeHeaders, ModernHeadersMustMirrorTheBody) {
  auto call = ParseMcpMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run"}})");
  HeaderList good = {{"MCP-Protocol-Version", "2026-07-28"},
                     {"Mcp-Method", "tools/call"},
                     {"Mcp-Name", "run"}};
  EXPECT_FALSE(CheckModernHeaders(ModernPost(good), call, "2026-07-28"));
  HeaderList encoded = {{"mcp-protocol-version", "2026-07-28"},
                        {"mcp-method", "tools/call"},
                        {"mcp-name", "=?base64?cnVu?="}};
  EXPECT_FALSE(CheckModernHeaders(ModernPost(encoded), call, "2026-07-28"));

  struct Case {
    HeaderList headers;
    const char* says;
  };
  std::vector<Case> cases = {
      {{{"Mcp-Method", "tools/call"}, {"Mcp-Name", "run"}},
       "MCP-Protocol-Version header is missing"},
      {{{"MCP-Protocol-Version", "2025-11-25"},
        {"Mcp-Method", "tools/call"},
        {"Mcp-Name", "run"}},
       "'2025-11-25' does not match body value '2026-07-28'"},
      {{{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Name", "run"}},
       "Mcp-Method header is missing"},
      {{{"MCP-Protocol-Version", "2026-07-28"},
        {"Mcp-Method", "tools/list"},
        {"Mcp-Name", "run"}},
       "Mcp-Method header value 'tools/list'"},
      {{{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"}},
       "Mcp-Name header is missing"},
      {{{"MCP-Protocol-Version", "2026-07-28"},
        {"Mcp-Method", "tools/call"},
        {"Mcp-Name", "task_kill"}},
       "'task_kill' does not match body value 'run'"},
  };
  for (const auto& c : cases) {
    auto error = CheckModernHeaders(ModernPost(c.headers), call, "2026-07-28");
    ASSERT_TRUE(error) << c.says;
    EXPECT_EQ(error->code, kHeaderMismatch);
    EXPECT_NE(error->message.find(c.says), std::string::npos) << error->message;
  }
}

TEST(ServeHeaders, NameIsCheckedForTasksOnlyWhenSent) {
  auto get = ParseMcpMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"shell-1"}})");
  HeaderList without = {{"MCP-Protocol-Version", "2026-07-28"},
                        {"Mcp-Method", "tasks/get"}};
  EXPECT_FALSE(CheckModernHeaders(ModernPost(without), get, "2026-07-28"));
  HeaderList wrong = without;
  wrong.emplace_back("Mcp-Name", "shell-2");
  EXPECT_TRUE(CheckModernHeaders(ModernPost(wrong), get, "2026-07-28"));
  // A notification needs only the version.
  auto note =
      ParseMcpMessage(R"({"jsonrpc":"2.0","method":"notifications/x"})");
  HeaderList version = {{"MCP-Protocol-Version", "2026-07-28"}};
  EXPECT_FALSE(CheckModernHeaders(ModernPost(version), note, "2026-07-28"));
}

TEST(ServeArgs, ParsesFlagsAndRefusesTheRest) {
  auto defaults = ParseServeArgs({});
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->listen.host, "127.0.0.1");
  EXPECT_EQ(defaults->listen.port, kDefaultPort);
  auto given = ParseServeArgs(
      {"--listen", "[::1]:0", "--allow-host=box.lan", "--print-token"});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given->listen.host, "::1");
  EXPECT_EQ(given->listen.port, 0);
  EXPECT_EQ(given->allowed_hosts, std::vector<std::string>{"box.lan"});
  EXPECT_TRUE(given->print_token);
  EXPECT_FALSE(ParseServeArgs({"--listen"}));
  EXPECT_FALSE(ParseServeArgs({"--allow-host", "http://x"}));
  auto unknown = ParseServeArgs({"--port", "80"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown argument '--port'"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::serve
