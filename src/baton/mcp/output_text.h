// How task output and task state become text for a model: the head-and-tail
// cut of long output (never silent: it names the bytes left out and how to
// read them) and the status line. Pure, except ReadOutputSlice which reads
// the task's log file.
#ifndef BATON_MCP_OUTPUT_TEXT_H_
#define BATON_MCP_OUTPUT_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "baton/ipc/messages.h"  // TaskRecord, the protocol's view of a task.
#include "baton/util/result.h"

namespace baton::mcp {

// About 20,000 characters: well under Claude Code's 25,000-token cap for a
// tool result, with room for several tasks' status and the notices.
inline constexpr uint64_t kOutputCap = 20'000;

// Where a range of the output is cut. All offsets are byte offsets in the
// task's log; [head_from, head_to) and [tail_from, tail_to) are shown, the
// bytes in between are left out. Without a cut, tail is empty and
// head_to == the end of the range.
struct OutputCut {
  uint64_t head_from = 0, head_to = 0;
  uint64_t tail_from = 0, tail_to = 0;
  uint64_t omitted() const { return tail_from - head_to; }
  bool cut() const { return tail_to > tail_from; }
};

// Plans the cut of [from, to) for at most `cap` shown bytes: all of it if it
// fits, else about 2/5 head and 3/5 tail (the end of a log usually says how
// it went). Byte-exact; callers move the edges to character boundaries with
// SnapCut once they have the bytes.
OutputCut PlanCut(uint64_t from, uint64_t to, uint64_t cap);

// Moves the cut's inner edges so neither splits a UTF-8 character and, when
// a newline is near (within 1/8 of each part), so both fall on line starts.
// `head` holds bytes [head_from, head_to), `tail` [tail_from, tail_to).
// Returns the adjusted cut; the shown bytes shrink, the omitted count grows
// by exactly as much.
OutputCut SnapCut(const OutputCut& cut, std::string_view head,
                  std::string_view tail);

// The marker put between head and tail: how many bytes were left out, which
// ones, and how to read them.
std::string OmittedMarker(std::string_view task_id, const OutputCut& cut);

// The text of an output range read in `offset` mode (from a given byte, no
// tail): if it stops before `end`, says how many bytes follow and the next
// offset.
std::string MoreMarker(std::string_view task_id, uint64_t next, uint64_t end);

// Reads [from, to) of the file at `path`, as planned and snapped: the
// text (head, marker, tail) and the cut actually applied. A file shorter than
// `to` yields what is there.
struct OutputSlice {
  std::string text;
  OutputCut cut;
};
Result<OutputSlice> ReadOutputSlice(const std::string& path,
                                    std::string_view task_id, uint64_t from,
                                    uint64_t to, uint64_t cap);

// "[status: running]", "[status: completed, exit code: 0]",
// "[status: killed, killed: not needed]".
std::string StatusLine(const TaskRecord& task);

// The last lines (at most 10, from the last 4 KiB) of the log at `path`
// whose size is `size`, read from its file; "" when unreadable.
std::string ReadLogTail(const std::string& path, uint64_t size);

// The last `max_lines` lines of `text` (a trailing newline does not count as
// an empty last line).
std::string LastLines(std::string_view text, size_t max_lines);

}  // namespace baton::mcp

#endif  // BATON_MCP_OUTPUT_TEXT_H_
