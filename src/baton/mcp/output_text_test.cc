#include "baton/mcp/output_text.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

namespace baton::mcp {
namespace {

TEST(OutputText, SmallRangeIsNotCut) {
  OutputCut cut = PlanCut(10, 110, 100);
  EXPECT_FALSE(cut.cut());
  EXPECT_EQ(cut.head_from, 10u);
  EXPECT_EQ(cut.head_to, 110u);
  EXPECT_EQ(cut.omitted(), 0u);
}

TEST(OutputText, LargeRangeKeepsHeadAndTailAndCountsTheRest) {
  OutputCut cut = PlanCut(0, 100'000, 20'000);
  EXPECT_TRUE(cut.cut());
  EXPECT_EQ(cut.head_to - cut.head_from, 8'000u);
  EXPECT_EQ(cut.tail_to - cut.tail_from, 12'000u);
  EXPECT_EQ(cut.omitted(), 80'000u);
  EXPECT_EQ(cut.tail_to, 100'000u);
}

TEST(OutputText, SnapNeverSplitsUtf8AndPrefersLineStarts) {
  // Head ends in the middle of "é" (C3 A9); tail starts inside "€"
  // (E2 82 AC).
  std::string head = "abc\xC3";
  std::string tail =
      "\x82\xAC"
      "def";
  OutputCut cut{0, 4, 100, 105};
  OutputCut snapped = SnapCut(cut, head, tail);
  EXPECT_EQ(snapped.head_to, 3u);
  EXPECT_EQ(snapped.tail_from, 102u);
  EXPECT_EQ(snapped.omitted(), 99u);

  std::string lines_head(100, 'x');
  lines_head[95] = '\n';
  std::string lines_tail(100, 'y');
  lines_tail[4] = '\n';
  OutputCut lines{0, 100, 1000, 1100};
  OutputCut at_lines = SnapCut(lines, lines_head, lines_tail);
  EXPECT_EQ(at_lines.head_to, 96u);
  EXPECT_EQ(at_lines.tail_from, 1005u);
  EXPECT_EQ(at_lines.omitted(), 909u);
}

TEST(OutputText, ReadOutputSliceNamesExactlyWhatItLeftOut) {
  char path[] = "/tmp/baton-output-text-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::string data;
  for (int i = 0; i < 5000; ++i)
    data += "line " + std::to_string(i) + "\n";
  std::ofstream(path) << data;

  auto slice = ReadOutputSlice(path, "shell-7", 0, data.size(), 2000);
  ASSERT_TRUE(slice.has_value());
  const OutputCut& cut = slice->cut;
  EXPECT_TRUE(cut.cut());
  uint64_t shown =
      (cut.head_to - cut.head_from) + (cut.tail_to - cut.tail_from);
  EXPECT_EQ(shown + cut.omitted(), data.size());
  EXPECT_LE(shown, 2000u);
  // Head and tail are the file's bytes, and the marker says how to read
  // what is between.
  EXPECT_EQ(slice->text.substr(0, cut.head_to), data.substr(0, cut.head_to));
  EXPECT_TRUE(slice->text.ends_with(data.substr(cut.tail_from)));
  std::string marker = OmittedMarker("shell-7", cut);
  EXPECT_NE(slice->text.find(marker), std::string::npos);
  EXPECT_NE(marker.find(std::to_string(cut.omitted()) + " bytes omitted"),
            std::string::npos);
  EXPECT_NE(marker.find("\"offset\": " + std::to_string(cut.head_to)),
            std::string::npos);
  // Line starts on both sides.
  EXPECT_EQ(data[cut.head_to - 1], '\n');
  EXPECT_EQ(data[cut.tail_from - 1], '\n');

  auto whole = ReadOutputSlice(path, "shell-7", 100, 200, 2000);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->text, data.substr(100, 100));
  EXPECT_EQ(whole->cut.omitted(), 0u);
  ::unlink(path);
}

TEST(OutputText, StatusLines) {
  auto task = [](TaskStatus status, std::string detail) {
    TaskRecord record;
    record.status = status;
    record.detail = std::move(detail);
    return record;
  };
  EXPECT_EQ(StatusLine(task(TaskStatus::kRunning, "")), "[status: running]");
  EXPECT_EQ(StatusLine(task(TaskStatus::kCompleted, "exit code: 0")),
            "[status: completed, exit code: 0]");
  EXPECT_EQ(StatusLine(task(TaskStatus::kKilled, "killed: not needed")),
            "[status: killed, not needed]");
}

TEST(OutputText, LastLines) {
  EXPECT_EQ(LastLines("a\nb\nc\n", 2), "b\nc\n");
  EXPECT_EQ(LastLines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(LastLines("a\n", 5), "a\n");
  EXPECT_EQ(LastLines("", 5), "");
}

}  // namespace
}  // namespace baton::mcp
