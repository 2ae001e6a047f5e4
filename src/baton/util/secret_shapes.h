// Well-known shapes of secrets in text (doc/redaction.md): API keys and
// tokens of Anthropic, OpenAI, GitHub, AWS and Slack, JSON Web Tokens and
// PEM private key blocks. Found by hand-written scanners, one pass, no
// regular expressions (output can be gigabytes), and masked in place with
// text of the same length, so offsets into a log stay true.
#ifndef BATON_UTIL_SECRET_SHAPES_H_
#define BATON_UTIL_SECRET_SHAPES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

struct SecretMatch {
  size_t offset = 0;
  size_t length = 0;
  std::string_view kind;  // "github-token", "aws-key", ... (static text).
  bool operator==(const SecretMatch&) const = default;
};

// Where a scan of text that arrives in pieces stopped deciding.
struct ScanEnd {
  // Scan again from here once more text came (past every match reported).
  size_t settled = 0;
  // Where a secret may be starting that is not whole yet (a token that
  // reaches the end, a key block not yet closed); the text's size when
  // none is. What comes before it may be shown.
  size_t open = 0;
};

// The secrets in `text` from `from` on, in order, not overlapping. Unless
// `at_end` (nothing more comes: everything is decided), a match that might
// go on past the end of `text` is left out, and `end` says where to go on.
// The text before `from` is context: a shape starts only where a word
// does, so a scan that goes on from a pass's `settled` is given the byte
// before it. Right after a secret a word starts (its marker ends there).
std::vector<SecretMatch> FindSecrets(std::string_view text, bool at_end,
                                     ScanEnd* end = nullptr, size_t from = 0);

// The marker of the same length that goes over a match of `length` bytes:
// `[redacted: github-token]` padded with `*`, or `[redacted]`, or only
// `*`, whichever fits.
std::string SecretMarker(std::string_view kind, size_t length);

// `text` with every secret found in it (whole: nothing more comes) replaced
// by its marker. For what baton shows besides output: commands, labels,
// reasons, environment values, questions (doc/redaction.md).
std::string MaskSecrets(std::string_view text);

}  // namespace baton

#endif  // BATON_UTIL_SECRET_SHAPES_H_
