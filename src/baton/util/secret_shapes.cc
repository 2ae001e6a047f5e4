#include "baton/util/secret_shapes.h"

#include <algorithm>
#include <array>

namespace baton {
namespace {

// The longest fixed start of a shape ("github_pat_", "-----BEGIN "): text
// this close to the end may still become one.
constexpr size_t kLongestStart = 16;
// A PEM block longer than this without its END line is masked up to here
// and scanning goes on (an RSA 4096 key is some 3.3 KB).
constexpr size_t kMaxKeyBlock = 16 * 1024;

// The first characters of the shapes, the cases of Scanner::At: most text
// has none of them at most positions, and the scan skips those at one
// table look-up each. (A table of the shapes themselves, read by At too,
// scanned at 0.7 GB/s against this one's 1.1: bench/redaction_scan.cc.)
constexpr std::array<bool, 256> kShapeStarts = [] {
  std::array<bool, 256> starts{};
  for (char c : std::string_view("sgAxe-"))
    starts[static_cast<unsigned char>(c)] = true;
  return starts;
}();

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}
bool IsUpperAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
// base64url, and what keys and tokens are written with.
bool IsTokenChar(char c) {
  return IsAlnum(c) || c == '_' || c == '-';
}

// What a shape's scanner says at one position.
struct Scan {
  enum class Kind { kNone, kMatch, kUndecided } kind = Kind::kNone;
  size_t length = 0;
  std::string_view name;
};
Scan None() {
  return {};
}
Scan Undecided() {
  return {.kind = Scan::Kind::kUndecided};
}
Scan Match(size_t length, std::string_view name) {
  return {.kind = Scan::Kind::kMatch, .length = length, .name = name};
}

class Scanner {
 public:
  Scanner(std::string_view text, bool at_end) : text_(text), at_end_(at_end) {}

  Scan At(size_t i) const {
    cut_short_ = false;
    Scan scan = Shape(i);
    // The text ended inside a shape's fixed start ("xo" of "xoxb-"): with
    // more to come it may yet be a secret, so it is not shown as text.
    if (scan.kind == Scan::Kind::kNone && cut_short_)
      return Undecided();
    return scan;
  }

 private:
  Scan Shape(size_t i) const {
    switch (text_[i]) {
      case 's':
        return Keys(i);
      case 'g':
        return GitHub(i);
      case 'A':
        return Aws(i);
      case 'x':
        return Slack(i);
      case 'e':
        return Jwt(i);
      case '-':
        return PrivateKey(i);
      default:
        return None();
    }
  }

  // Whether `prefix` starts at `i`; notes when the text, not at its end,
  // stops inside it.
  bool StartsAt(size_t i, std::string_view prefix) const {
    std::string_view rest = text_.substr(i);
    if (!at_end_ && rest.size() < prefix.size() && prefix.starts_with(rest))
      cut_short_ = true;
    return rest.starts_with(prefix);
  }
  // The run of characters `ok` takes from `from`; `reaches_end` when it
  // went on to the end of the text (it may go on).
  template <class Pred>
  size_t Run(size_t from, Pred ok, bool* reaches_end) const {
    size_t end = from;
    while (end < text_.size() && ok(text_[end]))
      ++end;
    *reaches_end = end == text_.size() && !at_end_;
    return end - from;
  }
  // A token: `prefix`, then at least `min` characters `ok` takes.
  template <class Pred>
  Scan Token(size_t i, std::string_view prefix, size_t min, Pred ok,
             std::string_view name) const {
    if (!StartsAt(i, prefix))
      return None();
    bool open = false;
    size_t body = Run(i + prefix.size(), ok, &open);
    if (open)
      return Undecided();
    if (body < min)
      return None();
    return Match(prefix.size() + body, name);
  }

  // Anthropic (sk-ant-...) before OpenAI (sk-..., sk-proj-...).
  Scan Keys(size_t i) const {
    if (StartsAt(i, "sk-ant-"))
      return Token(i, "sk-ant-", 20, IsTokenChar, "anthropic-key");
    return Token(i, "sk-", 20, IsTokenChar, "openai-key");
  }

  Scan GitHub(size_t i) const {
    for (std::string_view prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}) {
      if (StartsAt(i, prefix))
        return Token(i, prefix, 36, IsAlnum, "github-token");
    }
    return Token(
        i, "github_pat_", 22, [](char c) { return IsAlnum(c) || c == '_'; },
        "github-token");
  }

  // An access key id: exactly 16 after its prefix, then no more.
  Scan Aws(size_t i) const {
    if (!StartsAt(i, "AKIA") && !StartsAt(i, "ASIA"))
      return None();
    bool open = false;
    size_t body = Run(i + 4, IsAlnum, &open);
    if (open)
      return Undecided();
    if (body != 16 ||
        !std::all_of(text_.begin() + static_cast<ptrdiff_t>(i) + 4,
                     text_.begin() + static_cast<ptrdiff_t>(i) + 20,
                     IsUpperAlnum)) {
      return None();
    }
    return Match(20, "aws-key");
  }

  Scan Slack(size_t i) const {
    for (std::string_view prefix :
         {"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"}) {
      if (StartsAt(i, prefix))
        return Token(i, prefix, 10, IsTokenChar, "slack-token");
    }
    return None();
  }

  // header.payload.signature, each base64url; header and payload are JSON
  // objects, so each starts "eyJ".
  Scan Jwt(size_t i) const {
    size_t at = i;
    for (int part = 0; part < 3; ++part) {
      if (part < 2 && !StartsAt(at, "eyJ"))
        return None();
      bool open = false;
      size_t length = Run(
          at, [](char c) { return IsTokenChar(c); }, &open);
      if (open)
        return Undecided();
      if (length < 10)
        return None();
      at += length;
      if (part < 2) {
        if (at == text_.size())
          return at_end_ ? None() : Undecided();
        if (text_[at] != '.')
          return None();
        ++at;
      }
    }
    return Match(at - i, "jwt");
  }

  // -----BEGIN ... PRIVATE KEY----- to its -----END ... PRIVATE KEY-----.
  Scan PrivateKey(size_t i) const {
    if (!StartsAt(i, "-----BEGIN "))
      return None();
    size_t line_end = text_.find('\n', i);
    std::string_view first = text_.substr(i, line_end == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : line_end - i);
    if (first.find("PRIVATE KEY-----") == std::string_view::npos)
      return line_end == std::string_view::npos && !at_end_ ? Undecided()
                                                            : None();
    constexpr std::string_view kEnd = "PRIVATE KEY-----";
    size_t end = text_.find("-----END ", i + 11);
    if (end != std::string_view::npos)
      end = text_.find(kEnd, end);
    if (end != std::string_view::npos && end - i <= kMaxKeyBlock)
      return Match(end + kEnd.size() - i, "private-key");
    if (text_.size() - i >= kMaxKeyBlock)
      return Match(kMaxKeyBlock, "private-key");
    // Not closed yet: more may come; at the end, the rest is the key.
    return at_end_ ? Match(text_.size() - i, "private-key") : Undecided();
  }

  std::string_view text_;
  bool at_end_;
  // Set by StartsAt during one At.
  mutable bool cut_short_ = false;
};

}  // namespace

std::vector<SecretMatch> FindSecrets(std::string_view text, bool at_end,
                                     ScanEnd* end, size_t from) {
  std::vector<SecretMatch> found;
  from = std::min(from, text.size());
  size_t open = text.size();
  size_t decided = text.size();
  if (!at_end) {
    decided = std::max(
        from, text.size() > kLongestStart ? text.size() - kLongestStart : 0);
  }
  Scanner scanner(text, at_end);
  // Right after a match: masked, its marker ends in '*' or ']', which no
  // token goes on from, so what follows starts a word (in a later scan of
  // the masked text too).
  bool after_match = false;
  for (size_t i = from; i < text.size();) {
    if (!kShapeStarts[static_cast<unsigned char>(text[i])]) {
      ++i;
      after_match = false;
      continue;
    }
    // A shape starts a word: not inside another token.
    bool starts_word = after_match || i == 0 || !IsTokenChar(text[i - 1]) ||
                       (text[i] == '-' && text[i - 1] != '-');
    after_match = false;
    Scan scan = starts_word ? scanner.At(i) : None();
    if (scan.kind == Scan::Kind::kUndecided) {
      open = i;
      decided = std::min(decided, i);
      break;
    }
    if (scan.kind == Scan::Kind::kMatch) {
      found.push_back({i, scan.length, scan.name});
      i += scan.length;
      after_match = true;
      continue;
    }
    ++i;
  }
  // A match is reported only when it starts before the undecided part:
  // the caller scans from there again.
  // One left for the next scan is not masked yet: not shown either.
  for (const SecretMatch& match : found) {
    if (match.offset >= decided) {
      open = std::min(open, match.offset);
      break;
    }
  }
  std::erase_if(
      found, [&](const SecretMatch& match) { return match.offset >= decided; });
  if (end) {
    end->settled =
        found.empty()
            ? decided
            : std::max(decided, found.back().offset + found.back().length);
    end->open = open;
  }
  return found;
}

std::string SecretMarker(std::string_view kind, size_t length) {
  std::string marker = "[redacted: " + std::string(kind) + "]";
  if (marker.size() > length)
    marker = "[redacted]";
  if (marker.size() > length)
    marker.clear();
  marker.resize(length, '*');
  return marker;
}

std::string MaskSecrets(std::string_view text) {
  std::vector<SecretMatch> found = FindSecrets(text, /*at_end=*/true);
  if (found.empty())
    return std::string(text);
  std::string out(text);
  for (const SecretMatch& match : found)
    out.replace(match.offset, match.length,
                SecretMarker(match.kind, match.length));
  return out;
}

}  // namespace baton
