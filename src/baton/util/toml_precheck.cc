#include "baton/util/toml_precheck.h"

#include <string>

namespace baton {
namespace {

bool IsBareKeyCharacter(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool IsWhitespaceOrNewline(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Walks the text once, knowing only what decides where toml++ looks at a
// character as a possible key, value or whitespace: comments, the four
// kinds of strings (which open only where a key or value starts: toml++
// reads a quote inside a bare value as part of it), bare values, and
// whether a '[' opens a table header (first on its line, outside any array
// or inline table) or an array.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  std::optional<TomlPrecheckFailure> Run() {
    if (text_.starts_with("\xEF\xBB\xBF"))  // a UTF-8 BOM, which toml++ skips
      pos_ = 3;
    while (pos_ < text_.size() && !failure_) {
      switch (state_) {
        case State::kOutside:
          Outside();
          break;
        case State::kComment:
          Comment();
          break;
        case State::kBasic:
          Basic();
          break;
        case State::kLiteral:
          Literal();
          break;
        case State::kMultiLineBasic:
          MultiLineBasic();
          break;
        case State::kMultiLineLiteral:
          MultiLineLiteral();
          break;
      }
    }
    return failure_;
  }

 private:
  enum class State {
    kOutside,
    kComment,
    kBasic,
    kLiteral,
    kMultiLineBasic,
    kMultiLineLiteral,
  };

  void Outside() {
    const unsigned char c = text_[pos_];
    if (in_value_token_) {
      if (!IsValueTerminator(c)) {
        if (c >= 0x80)
          FailNonAscii();
        ++pos_;
        return;
      }
      in_value_token_ = false;
    }
    if (c == '\n') {
      if (brackets_.empty()) {
        expect_key_ = true;
        at_line_start_ = true;
        in_header_ = false;
      }
      ++pos_;
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
      return;
    }
    const bool line_start = at_line_start_;
    at_line_start_ = false;
    if (c >= 0x80) {
      FailNonAscii();
      return;
    }
    if (c == '#') {
      state_ = State::kComment;
    } else if (c == '"') {
      state_ = OpensTriple('"') ? State::kMultiLineBasic : State::kBasic;
      if (state_ == State::kMultiLineBasic)
        pos_ += 2;
    } else if (c == '\'') {
      state_ = OpensTriple('\'') ? State::kMultiLineLiteral : State::kLiteral;
      if (state_ == State::kMultiLineLiteral)
        pos_ += 2;
    } else if (expect_key_) {
      if (c == '[' && line_start && brackets_.empty()) {
        TableHeader();
        return;
      }
      if (c == '=')
        expect_key_ = false;
      else if ((c == ']' && !in_header_) || c == '}')
        CloseBracket();
    } else if (c == '[' || c == '{') {
      brackets_.push_back(static_cast<char>(c));
      expect_key_ = c == '{';
    } else if (c == '}' && !brackets_.empty() && brackets_.back() == '[') {
      // toml++ would read it as the start of an array's next value.
      Fail(pos_, "a '}' inside an array, where a value or ']' belongs");
      return;
    } else if (c == ']' || c == '}') {
      CloseBracket();
    } else if (c == ',') {
      expect_key_ = !brackets_.empty() && brackets_.back() == '{';
    } else if (c != '=') {
      // A number, date, boolean or junk: toml++ reads it, quotes and
      // brackets included, up to the next terminator.
      in_value_token_ = true;
    }
    ++pos_;
  }

  static bool IsValueTerminator(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ']' ||
           c == '}' || c == ',' || c == '#';
  }

  void CloseBracket() {
    if (!brackets_.empty())
      brackets_.pop_back();
    expect_key_ = false;  // what follows is a ',', a closing bracket or EOL
  }

  void FailNonAscii() {
    Fail(pos_,
         "a non-ASCII character outside a quoted string or comment; "
         "quote the key (\"name\" = ...) or the value");
  }

  // `[name]` or `[[name]]`: toml++ reads a key right after the brackets
  // and the blanks, assuming one starts there.
  void TableHeader() {
    size_t next = pos_ + 1;
    if (next < text_.size() && text_[next] == '[')
      ++next;
    while (next < text_.size() && (text_[next] == ' ' || text_[next] == '\t'))
      ++next;
    const unsigned char c = next < text_.size() ? text_[next] : '\n';
    if (!IsBareKeyCharacter(c) && c != '"' && c != '\'' && c != ']') {
      Fail(next, "a table header must start with its name: [name] or [[name]]");
      return;
    }
    in_header_ = true;
    pos_ = next;
  }

  void Comment() {
    if (text_[pos_] == '\n')
      state_ = State::kOutside;  // the newline itself is read outside
    else
      ++pos_;
  }

  void Basic() {
    const char c = text_[pos_];
    if (c == '\\') {
      pos_ += 2;
      return;
    }
    if (c == '\n') {  // toml++ reports the unterminated string
      state_ = State::kOutside;
      return;
    }
    if (c == '"')
      state_ = State::kOutside;
    ++pos_;
  }

  void Literal() {
    const char c = text_[pos_];
    if (c == '\n') {
      state_ = State::kOutside;
      return;
    }
    if (c == '\'')
      state_ = State::kOutside;
    ++pos_;
  }

  void MultiLineBasic() {
    const char c = text_[pos_];
    if (c == '\\') {
      // toml++ asks whether the character after a backslash, and each one
      // after a line-ending backslash up to the first non-blank, is
      // whitespace.
      size_t next = pos_ + 1;
      while (next < text_.size() && IsWhitespaceOrNewline(text_[next]))
        ++next;
      if (next < text_.size() &&
          static_cast<unsigned char>(text_[next]) >= 0x80) {
        Fail(next,
             "a non-ASCII character right after a backslash in a multi-line "
             "string; write it as \\uXXXX");
        return;
      }
      pos_ = next == pos_ + 1 ? pos_ + 2 : next;
      return;
    }
    if (ClosesTriple('"'))
      return;
    ++pos_;
  }

  void MultiLineLiteral() {
    if (ClosesTriple('\''))
      return;
    ++pos_;
  }

  bool OpensTriple(char quote) const {
    return text_.substr(pos_, 3) == std::string(3, quote);
  }

  // At a closing triple quote: ends the string, with the up to two quotes
  // more that TOML lets a multi-line string end with.
  bool ClosesTriple(char quote) {
    if (!OpensTriple(quote))
      return false;
    pos_ += 3;
    for (int extra = 0;
         extra < 2 && pos_ < text_.size() && text_[pos_] == quote; ++extra)
      ++pos_;
    state_ = State::kOutside;
    return true;
  }

  void Fail(size_t at, std::string description) {
    TomlPrecheckFailure failure{.description = std::move(description)};
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++failure.line;
        failure.column = 1;
      } else {
        ++failure.column;
      }
    }
    failure_ = std::move(failure);
  }

  std::string_view text_;
  size_t pos_ = 0;
  State state_ = State::kOutside;
  bool at_line_start_ = true;
  bool in_header_ = false;
  // Where toml++ reads a key (a line's start, after '{' or ',' in an inline
  // table) rather than a value (after '=', in an array).
  bool expect_key_ = true;
  // Inside a bare value (number, date, boolean) that toml++ scans to its
  // end before judging it.
  bool in_value_token_ = false;
  std::string brackets_;  // the open '[' and '{' of values, innermost last
  std::optional<TomlPrecheckFailure> failure_;
};

}  // namespace

std::optional<TomlPrecheckFailure> PrecheckTomlText(std::string_view text) {
  return Scanner(text).Run();
}

}  // namespace baton
