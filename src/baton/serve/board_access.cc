#include "baton/serve/board_access.h"

#include <fmt/format.h>

#include "baton/serve/http_checks.h"

namespace baton::serve {

std::string BoardCookieName(uint16_t port) {
  return fmt::format("baton_board_{}", port);
}

std::optional<std::string> BoardLoginCode(const HttpRequest& request) {
  if (request.method != "GET" || request.path() != "/")
    return std::nullopt;
  return QueryValue(request.target, "login");
}

bool HasBoardCookie(const HttpRequest& request, std::string_view token,
                    std::string_view cookie_name) {
  auto cookie = CookieValue(request.Header("Cookie"), cookie_name);
  return cookie && TokenEquals(*cookie, token);
}

bool WantsSignInPage(const HttpRequest& request) {
  return (request.method == "GET" || request.method == "HEAD") &&
         request.path() == "/";
}

HttpResponse BoardSignInPage(std::string_view why) {
  // Inline style and icon only: the CSP lets nothing else load or run.
  constexpr std::string_view kPage = R"(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>baton: sign in</title>
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%232457c5'/%3E%3Cpath d='M4 12 L12 4' stroke='white' stroke-width='2.2' stroke-linecap='round'/%3E%3Ccircle cx='12' cy='4' r='1.6' fill='white'/%3E%3C/svg%3E">
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 38em; margin: 3em auto; padding: 0 1em; }
code, pre { font-family: ui-monospace, monospace; }
pre { padding: 0.6em 0.8em; border: 1px solid #8886; border-radius: 4px; overflow-x: auto; }
.why { color: #b3261e; }
@media (prefers-color-scheme: dark) { body { background: #17171a; color: #e8e8ea; } .why { color: #ff8a80; } }
</style>
</head>
<body>
<h1>baton board: sign in</h1>
<p class="why">{why}</p>
<p>The board opens with a login link that works once, within 2 minutes.
To get one, run this in a terminal of this machine, as the user who runs
<code>baton serve</code>:</p>
<pre>baton board</pre>
<p>It prints the link and opens it in your browser (with a display);
otherwise open the link it prints here. <code>baton serve</code> prints
one when it starts, too. Once in, this browser keeps a cookie and needs
no link again until it is closed or the server's token changes.</p>
</body>
</html>
)";
  std::string escaped;
  for (char c : why) {
    switch (c) {
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '&':
        escaped += "&amp;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      default:
        escaped += c;
    }
  }
  std::string body(kPage);
  body.replace(body.find("{why}"), 5, escaped);
  HttpResponse response;
  response.status = 401;
  response.headers = {
      {"Content-Type", "text/html; charset=utf-8"},
      {"Cache-Control", "no-store"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"Content-Security-Policy",
       "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"}};
  response.body = std::move(body);
  return response;
}

std::optional<Refusal> CheckBoardAccess(const HttpRequest& request,
                                        std::string_view token,
                                        std::string_view cookie_name) {
  if (BoardLoginCode(request))
    return std::nullopt;  // The page claims the code, or refuses it.
  if (!HasBoardCookie(request, token, cookie_name)) {
    return Refusal{401,
                   "Unauthorized: log in to the board with the URL that "
                   "baton board prints (it works once, within 2 minutes)"};
  }
  if (request.method != "GET" && request.method != "HEAD" &&
      !request.Header("Origin")) {
    return Refusal{403,
                   "Forbidden: a request that changes state needs an "
                   "Origin header of this server (send it from the board's "
                   "own page)"};
  }
  return std::nullopt;
}

}  // namespace baton::serve
