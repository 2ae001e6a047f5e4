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

// The secrets in `text`, in order, not overlapping. Text that arrives in
// pieces: a match that might go on past the end of `text` (a token that
// reaches its end, a key block not yet closed) is left out, and
// `*settled` (when given) is set to where the undecided part starts, so
// that the caller scans again from there once more text came. With
// `at_end` nothing more comes: everything is decided.
std::vector<SecretMatch> FindSecrets(std::string_view text, bool at_end,
                                     size_t* settled = nullptr);

// Overwrites each match in `text` (as found in it) with a marker of the
// same length: `[redacted: github-token]` padded with `*`, or `[redacted]`,
// or only `*`, whichever fits.
void MaskSecrets(std::string& text, const std::vector<SecretMatch>& matches);

// The marker MaskSecrets writes over a match of `length` bytes.
std::string SecretMarker(std::string_view kind, size_t length);

}  // namespace baton

#endif  // BATON_UTIL_SECRET_SHAPES_H_
