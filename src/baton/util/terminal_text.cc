#include "baton/util/terminal_text.h"

#include <fmt/format.h>

namespace baton {
namespace {

// The length of the control character at `text[i]`: 1 for C0 and DEL, 2
// for a C1 character in UTF-8 (0xC2 0x80..0x9F), 0 for none.
size_t ControlAt(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x20 || c == 0x7F)
    return 1;
  if (c == 0xC2 && i + 1 < text.size()) {
    unsigned char next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9F)
      return 2;
  }
  return 0;
}

}  // namespace

std::string TerminalSafe(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t length = ControlAt(text, i);
    char c = text[i];
    if (length == 0 || (keep_newlines && c == '\n')) {
      out += c;
      ++i;
      continue;
    }
    if (length == 2) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
    } else if (c == '\x1b') {
      out += "\\e";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
    i += length;
  }
  return out;
}

size_t FindControlCharacter(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (ControlAt(text, i) > 0)
      return i;
  }
  return std::string_view::npos;
}

}  // namespace baton
