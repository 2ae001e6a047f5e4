// Text that came from a task or a client (labels, commands, details, an
// agent's questions, reasons) shown on a terminal. Its control characters
// are escaped, so that a label cannot set the window's title, clear the
// screen, recolour what follows or forge a line of `baton status`
// (doc/security.md, "What the CLI shows").
#ifndef BATON_UTIL_TERMINAL_TEXT_H_
#define BATON_UTIL_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace baton {

// `text` with each control character written out: ESC as \e, newline as
// \n, tab as \t, carriage return as \r, the other C0 characters and DEL
// as \xHH, the C1 characters (U+0080 to U+009F, as UTF-8) as \u00HH; and
// a backslash as it is. With `keep_newlines`, newlines stay (text of
// several lines, such as a check's last lines).
std::string TerminalSafe(std::string_view text, bool keep_newlines = false);

// The first control character in `text` (as above; newlines count) and
// its offset, or npos when there is none.
size_t FindControlCharacter(std::string_view text);

}  // namespace baton

#endif  // BATON_UTIL_TERMINAL_TEXT_H_
