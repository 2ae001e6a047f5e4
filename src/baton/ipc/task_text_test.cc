#include "baton/ipc/task_text.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(TaskText, EvidenceShowsChecksTailsFilesAndOverlaps) {
  Evidence evidence{"git",
                    {"a.txt", "b.txt"},
                    {{"make test", 2, "one\ntwo\nthree\n"},
                     {"lint", 0, "checking\n3 files\nall clean\nbye\n"}},
                    {"shell-2"}};
  EXPECT_EQ(EvidenceText(evidence, "  ", 10),
            "  check `make test`: exit code 2\n"
            "    | one\n"
            "    | two\n"
            "    | three\n"
            "  check `lint`: exit code 0\n"
            "    | 3 files\n"
            "    | all clean\n"
            "    | bye\n"
            "  changed files: 2 (a.txt, b.txt)\n"
            "  overlapping tasks in the same folder: shell-2\n");
}

TEST(TaskText, ManyChangedFilesShowACountAndTheFirstPaths) {
  Evidence evidence;
  for (int i = 0; i < 12; ++i)
    evidence.changed_files.push_back(std::to_string(i));
  EXPECT_EQ(EvidenceText(evidence, "", 5),
            "changed files: 12 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...)\n");
}

TEST(TaskText, QuestionsAreNumberedFromOne) {
  OpenQuestion question{
      7, {{"Which db?", "db", {{"sqlite", "small"}, {"pg", ""}}, false}}};
  EXPECT_EQ(QuestionItemsText({question}, "  "),
            "  [db] Which db?\n"
            "    1. sqlite — small\n"
            "    2. pg\n");
  EXPECT_EQ(QuestionItemsText({}, "  "), "");
}

TEST(TaskText, LastLinesOfKeepsTheEnd) {
  EXPECT_EQ(LastLinesOf("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(LastLinesOf("a\nb", 5), "a\nb");
  EXPECT_EQ(LastLinesOf("", 5), "");
}

}  // namespace
}  // namespace baton
