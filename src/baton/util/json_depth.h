// How deeply a JSON text nests arrays and objects, read from the text alone
// (no parse). A parsed tree is walked by recursive code (nlohmann's dump,
// comparison, copy), and 60,000 nested arrays in one line overflow the
// stack there: a reader of outside input checks the depth first and refuses
// the line with an error (issue 12).
#ifndef BATON_UTIL_JSON_DEPTH_H_
#define BATON_UTIL_JSON_DEPTH_H_

#include <cstddef>
#include <string_view>

namespace baton {

// Deeper than any message of the protocols baton reads (the client
// protocol, MCP, the agent CLIs' streams nest a few levels; a tool's input
// a few more), and shallow enough that every recursive walk of the tree
// stays far from the stack's end.
inline constexpr size_t kMaxJsonDepth = 256;

// True when no array or object in `text` lies deeper than `max_depth`
// (brackets inside strings do not count). Stops scanning as soon as the
// limit is passed. Says nothing about whether `text` is valid JSON.
bool JsonDepthWithin(std::string_view text, size_t max_depth = kMaxJsonDepth);

}  // namespace baton

#endif  // BATON_UTIL_JSON_DEPTH_H_
