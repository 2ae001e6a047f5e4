#include "baton/mcp/line_reader.h"

#include <algorithm>

namespace baton::mcp {

void LineReader::Feed(std::string_view data, const LineFn& on_line,
                      const TooLongFn& on_too_long) {
  buffer_.append(data);
  size_t start = 0;
  for (size_t nl; (nl = buffer_.find('\n', std::max(start, scanned_))) !=
                  std::string::npos;
       start = nl + 1) {
    std::string_view line(buffer_.data() + start, nl - start);
    if (skipping_) {
      skipping_ = false;  // The end of a line already reported.
    } else if (line.size() > max_line_) {
      on_too_long();
    } else {
      on_line(line);
    }
  }
  buffer_.erase(0, start);
  scanned_ = buffer_.size();
  if (!skipping_ && buffer_.size() > max_line_) {
    skipping_ = true;
    on_too_long();
  }
  if (skipping_) {
    buffer_.clear();
    scanned_ = 0;
  }
}

void LineReader::Finish(const LineFn& on_line) {
  if (!skipping_ && !buffer_.empty())
    on_line(buffer_);
  buffer_.clear();
  scanned_ = 0;
  skipping_ = false;
}

}  // namespace baton::mcp
