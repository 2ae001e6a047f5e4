#include "baton/mcp/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::mcp {
namespace {

// Feeds `chunks` in order; returns the lines and "<too long>" markers in
// the order the reader reported them.
std::vector<std::string> Read(size_t max_line,
                              const std::vector<std::string>& chunks) {
  LineReader reader(max_line);
  std::vector<std::string> out;
  auto on_line = [&](std::string_view line) { out.emplace_back(line); };
  auto on_too_long = [&] { out.emplace_back("<too long>"); };
  for (const auto& chunk : chunks)
    reader.Feed(chunk, on_line, on_too_long);
  reader.Finish(on_line);
  return out;
}

using Lines = std::vector<std::string>;

TEST(LineReader, SplitsLinesAcrossReads) {
  EXPECT_EQ(Read(100, {"a\nb", "c\n", "\nd"}), (Lines{"a", "bc", "", "d"}));
}

TEST(LineReader, AnOverlongLineSpanningManyReadsIsReportedOnce) {
  // Issue 12, finding 10: the part after the drop used to be served as a
  // line of its own, and answered with a second error.
  std::vector<std::string> chunks = {"ok\n"};
  for (int i = 0; i < 10; ++i)
    chunks.push_back(std::string(7, 'x'));
  chunks.push_back("xx\nnext\n");
  EXPECT_EQ(Read(16, chunks), (Lines{"ok", "<too long>", "next"}));
}

TEST(LineReader, AnOverlongLineInOneReadIsReportedOnce) {
  EXPECT_EQ(Read(4, {"12345\n1234\n"}), (Lines{"<too long>", "1234"}));
  EXPECT_EQ(Read(4, {"123456789", "\nab\n"}), (Lines{"<too long>", "ab"}));
}

TEST(LineReader, AnOverlongLastLineWithoutNewlineIsNotServed) {
  EXPECT_EQ(Read(4, {"a\n", "123456"}), (Lines{"a", "<too long>"}));
}

TEST(LineReader, TwoOverlongLinesAreTwoReports) {
  EXPECT_EQ(Read(3, {"aaaaa", "a\nbbbbbb\nc\n"}),
            (Lines{"<too long>", "<too long>", "c"}));
}

}  // namespace
}  // namespace baton::mcp
