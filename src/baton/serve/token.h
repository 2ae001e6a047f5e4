// The bearer token of `baton serve` (doc/serve.md, "The token"): 32 random
// bytes as hex, generated once into a file of the state folder that only
// its owner can read, and read back by every later start and by
// `baton serve --print-token`.
#ifndef BATON_SERVE_TOKEN_H_
#define BATON_SERVE_TOKEN_H_

#include <string>

#include "baton/util/result.h"

namespace baton::serve {

// The token in `path`, created (mode 0600) when the file does not exist. A
// file that others may read or write, or that holds no token, is refused
// with what to do about it.
Result<std::string> LoadOrCreateToken(const std::string& path);

// `bytes` random bytes (getrandom) as lower-case hex.
Result<std::string> RandomHex(size_t bytes);

}  // namespace baton::serve

#endif  // BATON_SERVE_TOKEN_H_
