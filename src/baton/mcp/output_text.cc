#include "baton/mcp/output_text.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "baton/util/unique_fd.h"

namespace baton::mcp {
namespace {

bool IsContinuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// The length a UTF-8 lead byte announces (1 for ASCII and stray bytes).
size_t SequenceLength(unsigned char c) {
  if (c >= 0xF0 && c <= 0xF7)
    return 4;
  if (c >= 0xE0)
    return 3;
  if (c >= 0xC0)
    return 2;
  return 1;
}

// How many bytes at the end of `head` form an incomplete UTF-8 character.
size_t IncompleteTail(std::string_view head) {
  size_t back = 0;
  while (back < head.size() && back < 4 &&
         IsContinuation(
             static_cast<unsigned char>(head[head.size() - 1 - back]))) {
    ++back;
  }
  if (back == head.size())
    return 0;  // Only continuation bytes: not UTF-8; leave it.
  unsigned char lead = static_cast<unsigned char>(head[head.size() - 1 - back]);
  size_t need = SequenceLength(lead);
  return need > back + 1 ? back + 1 : 0;
}

Result<std::string> ReadRange(int fd, uint64_t from, uint64_t to,
                              const std::string& path) {
  std::string data;
  if (to <= from)
    return data;
  data.resize(to - from);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pread(fd, data.data() + done, data.size() - done,
                        static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::unexpected(ErrnoError("read " + path, errno));
    if (n == 0)
      break;  // The file is shorter than asked.
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

}  // namespace

OutputCut PlanCut(uint64_t from, uint64_t to, uint64_t cap) {
  OutputCut cut;
  cut.head_from = from;
  if (to < from)
    to = from;
  if (to - from <= cap) {
    cut.head_to = to;
    cut.tail_from = cut.tail_to = to;
    return cut;
  }
  uint64_t head = cap * 2 / 5;
  cut.head_to = from + head;
  cut.tail_from = to - (cap - head);
  cut.tail_to = to;
  return cut;
}

OutputCut SnapCut(const OutputCut& cut, std::string_view head,
                  std::string_view tail) {
  OutputCut out = cut;
  if (!cut.cut())
    return out;
  // Head: drop a character split at its end, then end at a line start if
  // one is near.
  size_t head_len = head.size() - IncompleteTail(head);
  std::string_view kept = head.substr(0, head_len);
  size_t nl = kept.rfind('\n');
  if (nl != std::string_view::npos && kept.size() - (nl + 1) <= kept.size() / 8)
    head_len = nl + 1;
  out.head_to = cut.head_from + head_len;
  // Tail: skip continuation bytes of a character split at its start, then
  // start at a line start if one is near.
  size_t skip = 0;
  while (skip < tail.size() && skip < 3 &&
         IsContinuation(static_cast<unsigned char>(tail[skip]))) {
    ++skip;
  }
  size_t first_nl = tail.find('\n', skip);
  if (first_nl != std::string_view::npos &&
      first_nl + 1 - skip <= tail.size() / 8 && first_nl + 1 < tail.size()) {
    skip = first_nl + 1;
  }
  out.tail_from = cut.tail_from + skip;
  return out;
}

std::string OmittedMarker(std::string_view task_id, const OutputCut& cut) {
  return fmt::format(
      "[... {} bytes omitted here (bytes {} to {} of the output). To read "
      "them: task_output with {{\"task_id\": \"{}\", \"offset\": {}}}, or "
      "`baton output {} --offset {}` ...]\n",
      cut.omitted(), cut.head_to, cut.tail_from, task_id, cut.head_to, task_id,
      cut.head_to);
}

std::string MoreMarker(std::string_view task_id, uint64_t next, uint64_t end) {
  return fmt::format(
      "[... {} more bytes after byte {}. To read on: task_output with "
      "{{\"task_id\": \"{}\", \"offset\": {}}} ...]\n",
      end - next, next, task_id, next);
}

Result<OutputSlice> ReadOutputSlice(const std::string& path,
                                    std::string_view task_id, uint64_t from,
                                    uint64_t to, uint64_t cap) {
  OutputSlice slice;
  slice.cut = PlanCut(from, to, cap);
  if (to <= from)
    return slice;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  auto head = ReadRange(fd.get(), slice.cut.head_from, slice.cut.head_to, path);
  if (!head)
    return std::unexpected(head.error());
  if (!slice.cut.cut()) {
    slice.cut.head_to = slice.cut.head_from + head->size();
    slice.cut.tail_from = slice.cut.tail_to = slice.cut.head_to;
    slice.text = std::move(*head);
    return slice;
  }
  auto tail = ReadRange(fd.get(), slice.cut.tail_from, slice.cut.tail_to, path);
  if (!tail)
    return std::unexpected(tail.error());
  OutputCut snapped = SnapCut(slice.cut, *head, *tail);
  slice.text.assign(*head, 0, snapped.head_to - snapped.head_from);
  if (!slice.text.empty() && slice.text.back() != '\n')
    slice.text.push_back('\n');
  slice.text += OmittedMarker(task_id, snapped);
  slice.text.append(*tail, snapped.tail_from - slice.cut.tail_from);
  slice.cut = snapped;
  return slice;
}

std::string StatusLine(const TaskRecord& task) {
  if (task.detail.empty())
    return fmt::format("[status: {}]", TaskStatusName(task.status));
  return fmt::format("[status: {}, {}]", TaskStatusName(task.status),
                     DetailBesideStatus(task));
}

std::string LastLines(std::string_view text, size_t max_lines) {
  if (max_lines == 0 || text.empty())
    return "";
  size_t end = text.size();
  if (text.back() == '\n')
    --end;
  size_t start = end;
  size_t lines = 0;
  while (start > 0) {
    if (text[start - 1] == '\n') {
      if (++lines == max_lines)
        break;
    }
    --start;
  }
  return std::string(text.substr(start));
}

}  // namespace baton::mcp

namespace baton::mcp {

std::string ReadLogTail(const std::string& path, uint64_t size) {
  constexpr size_t kLastLines = 10;
  constexpr uint64_t kTailBytes = 4096;
  if (path.empty() || size == 0)
    return "";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return "";
  uint64_t from = size > kTailBytes ? size - kTailBytes : 0;
  std::string data(size - from, '\0');
  ssize_t n =
      ::pread(fd.get(), data.data(), data.size(), static_cast<off_t>(from));
  if (n <= 0)
    return "";
  data.resize(static_cast<size_t>(n));
  if (from > 0) {
    // Drop the partial first line.
    size_t nl = data.find('\n');
    data.erase(0, nl == std::string::npos ? 0 : nl + 1);
  }
  return LastLines(data, kLastLines);
}

}  // namespace baton::mcp
