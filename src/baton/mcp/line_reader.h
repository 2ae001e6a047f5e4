// Splits the bytes of `baton mcp`'s stdin into lines (one JSON-RPC message
// each), with a bound on a line's length: a longer line is dropped whole and
// reported once, however many reads it spans. Pure: no I/O.
#ifndef BATON_MCP_LINE_READER_H_
#define BATON_MCP_LINE_READER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace baton::mcp {

class LineReader {
 public:
  using LineFn = std::function<void(std::string_view line)>;
  using TooLongFn = std::function<void()>;

  // A line (without its '\n') may hold at most `max_line` bytes.
  explicit LineReader(size_t max_line) : max_line_(max_line) {}

  // Appends `data`; calls `on_line` for each complete line, in order, and
  // `on_too_long` once for each line over the bound, as soon as it is
  // known to be (its bytes so far are dropped, the rest is skipped up to
  // its '\n'). Neither callback may call Feed or Finish.
  void Feed(std::string_view data, const LineFn& on_line,
            const TooLongFn& on_too_long);

  // At the end of input: a last line without its '\n' goes to `on_line`.
  void Finish(const LineFn& on_line);

  // Bytes held for an incomplete line.
  size_t buffered() const { return buffer_.size(); }

 private:
  size_t max_line_;
  std::string buffer_;
  // buffer_[0, scanned_) holds no '\n': a long line is scanned once.
  size_t scanned_ = 0;
  // Dropping the rest of a line that was too long.
  bool skipping_ = false;
};

}  // namespace baton::mcp

#endif  // BATON_MCP_LINE_READER_H_
