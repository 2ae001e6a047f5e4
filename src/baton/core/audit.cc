#include "baton/core/audit.h"

#include <algorithm>

#include "baton/util/secret_shapes.h"

namespace baton {

std::string AuditDetail(std::string_view raw) {
  // The trail keeps no secret a command or a reason carried.
  const std::string masked = MaskSecrets(raw);
  std::string_view text = masked;
  std::string out;
  out.reserve(std::min(text.size(), kMaxAuditDetailBytes + 3));
  for (char c : text) {
    if (out.size() >= kMaxAuditDetailBytes) {
      // Cut inside a character: drop its first bytes too.
      if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) {
        while (!out.empty() &&
               (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
          out.pop_back();
        if (!out.empty())
          out.pop_back();
      }
      out += "…";
      return out;
    }
    // One line per record: a newline or a tab in a command reads as a
    // space.
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out;
}

}  // namespace baton
