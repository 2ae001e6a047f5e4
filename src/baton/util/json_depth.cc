#include "baton/util/json_depth.h"

namespace baton {

bool JsonDepthWithin(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth)
          return false;
        break;
      case ']':
      case '}':
        // More closing than opening brackets: invalid, for the parser to
        // refuse; it nests nothing.
        if (depth > 0)
          --depth;
        break;
      default:
        break;
    }
  }
  return true;
}

}  // namespace baton
