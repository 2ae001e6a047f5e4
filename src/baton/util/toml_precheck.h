// A lexical pass over a TOML text before toml++ parses it, refusing the
// few shapes on which toml++ 3.3 (Debian 12) has undefined behaviour
// instead of a parse error (doc/fuzzing.md, findings of the agent_config
// target):
//   - a non-ASCII character where toml++ asks whether it is whitespace
//     (outside strings and comments, or right after a backslash in a
//     multi-line basic string): its generated is_non_ascii_horizontal_
//     whitespace reaches TOML_UNREACHABLE for most code points;
//   - a table header whose name does not start with a key character
//     (`[[[`, `[ =`): parse_key assumes it does (an assert in debug builds,
//     an assumption the optimizer relies on in release builds).
// Valid TOML that baton's config files use passes untouched: quoted keys
// and strings may hold any UTF-8.
#ifndef BATON_UTIL_TOML_PRECHECK_H_
#define BATON_UTIL_TOML_PRECHECK_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace baton {

struct TomlPrecheckFailure {
  size_t line = 1;    // 1-based, as toml++ reports its own errors
  size_t column = 1;  // 1-based, in bytes
  std::string description;
};

// nullopt when toml++ may parse `text`; otherwise where and why not.
std::optional<TomlPrecheckFailure> PrecheckTomlText(std::string_view text);

}  // namespace baton

#endif  // BATON_UTIL_TOML_PRECHECK_H_
