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
