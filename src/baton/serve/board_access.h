// Who may use the board (doc/board.md, "Login"): its login cookie, the login
// request that sets it, and the rule for a request that changes state. The
// gate (serve/serve.cc) runs CheckBoardAccess on every route but /mcp; the
// page's route claims a login's code (serve/login_code.h).
#ifndef BATON_SERVE_BOARD_ACCESS_H_
#define BATON_SERVE_BOARD_ACCESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "baton/serve/http_message.h"

namespace baton::serve {

// The board's login cookie, one per port, so that two servers on one
// machine (cookies ignore the port) do not log each other out.
std::string BoardCookieName(uint16_t port);

// A refused request: the status and what to do instead.
struct Refusal {
  int status = 403;
  std::string message;
};

// The request carries the board's login cookie, with the token.
bool HasBoardCookie(const HttpRequest& request, std::string_view token,
                    std::string_view cookie_name);

// The board's checks (every route but /mcp), after Host and Origin
// (doc/board.md, "Login"): the login request (GET / with ?login=<code>)
// passes, for the page to claim its code; any other request needs the login
// cookie (401); and one that changes state (any method but GET and HEAD) also
// needs an Origin header, which the gate already checked is ours (403 without
// it). Cross-site requests carry no SameSite=Strict cookie and no Origin of
// ours, so a page elsewhere can neither read the board nor act through it.
std::optional<Refusal> CheckBoardAccess(const HttpRequest& request,
                                        std::string_view token,
                                        std::string_view cookie_name);
// The page a browser gets for the board's page without its cookie, or with
// a login code that is used or old: 401, HTML that says what happened
// (`why`) and how to get in (`baton board`). Static: nothing of the request
// goes into it. The API's refusals stay JSON (the page's fetch calls read
// them).
HttpResponse BoardSignInPage(std::string_view why);
// Whether the gate answers `request`'s refusal with BoardSignInPage: a GET
// or HEAD of the page itself.
bool WantsSignInPage(const HttpRequest& request);
// The code of a login request: GET / with ?login=<code>, whatever the code.
std::optional<std::string> BoardLoginCode(const HttpRequest& request);

}  // namespace baton::serve

#endif  // BATON_SERVE_BOARD_ACCESS_H_
