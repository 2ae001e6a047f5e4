// The board's one-time login codes (doc/board.md, "Login"): `baton serve`
// at its start and `baton board` each time mint a code, a file in the
// state folder; the board's login URL carries it, and serve claims it once,
// within two minutes, by removing the file. A copy of the URL (a browser's
// history, a terminal's scrollback) is then worth nothing, and the
// permanent token never appears in a URL.
#ifndef BATON_SERVE_LOGIN_CODE_H_
#define BATON_SERVE_LOGIN_CODE_H_

#include <chrono>
#include <string>
#include <string_view>

#include "baton/util/result.h"

namespace baton::serve {

// How long a minted code may be claimed.
inline constexpr std::chrono::seconds kLoginCodeLifetime{120};

// The folder of `home` that holds the codes not yet claimed (0700).
std::string LoginCodeDir(const std::string& home);

// A new code (16 random bytes as hex), written as a file of
// LoginCodeDir(home) that only its owner can read. Codes left unclaimed
// past their lifetime are removed on the way.
Result<std::string> MintLoginCode(const std::string& home);

// Whether `code` was minted for `home` less than kLoginCodeLifetime ago and
// not claimed yet; it can never be claimed again either way. Anything that
// is not the shape of a code (a path, a token) is refused before the file
// system is asked.
bool ClaimLoginCode(const std::string& home, std::string_view code);

}  // namespace baton::serve

#endif  // BATON_SERVE_LOGIN_CODE_H_
