#include "baton/daemon/output_redactor.h"

#include <gtest/gtest.h>

#include <fstream>

#include "baton/util/file_util.h"
#include "baton/util/secret_shapes.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

const std::string kGitHubToken = "ghp_" + std::string(36, 'Z');
const std::string kAwsKey = "AKIAIOSFODNN7EXAMPLE";

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

// `count` lines, each with an AWS key.
std::string LinesWithKeys(int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += "line " + std::to_string(i) + " " + kAwsKey + "\n";
  return text;
}

TEST(OutputRedactorTest,
     MasksInPlaceKeepingTheSizeAndGoesOnFromWhereItSettled) {
  testing::TempDir dir;
  std::string log = dir.path() + "/output.log";
  Append(log, "clone with " + kGitHubToken + "\nthen " + kAwsKey.substr(0, 10));
  auto first = RedactLog(log, 0, /*at_end=*/false);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->masked, (RedactionCounts{{"github-token", 1}}));
  // The half-printed key is held back from readers, not masked yet.
  std::string text = *ReadFile(log);
  EXPECT_EQ(first->readable, text.find("AKIA"));
  EXPECT_EQ(text.find(kGitHubToken), std::string::npos);
  EXPECT_EQ(text.size(), 11 + kGitHubToken.size() + 6 + 10);

  Append(log, kAwsKey.substr(10) + " done\n");
  auto second = RedactLog(log, first->settled, /*at_end=*/true);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->masked, (RedactionCounts{{"aws-key", 1}}));
  text = *ReadFile(log);
  EXPECT_EQ(text,
            "clone with [redacted: github-token]****************\n"
            "then [redacted: aws-key]* done\n");
  EXPECT_EQ(second->readable, text.size());
  // Again from the start: a marker is no secret.
  auto again = RedactLog(log, 0, true);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->masked.empty());
}

// fuzz/corpus/redaction_scan/pass-boundary-inside-word: the second pass
// began at the first's `settled`, inside a word ("-sk-sk-..."), and took
// the "sk-..." there for a key that one pass over the whole text does not
// see. A pass goes on with the byte before `settled` as context.
TEST(OutputRedactorTest, APassGoesOnInsideAWordAsOnePassWould) {
  testing::TempDir dir;
  std::string log = dir.path() + "/output.log";
  std::string whole = "-sk-sk-sk-sk-s--sk-sk---yJ N yJ N  N  ";
  Append(log, whole.substr(0, 17));
  auto first = RedactLog(log, 0, /*at_end=*/false);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_GT(first->settled, 0u);
  Append(log, whole.substr(17));
  auto last = RedactLog(log, first->settled, /*at_end=*/true);
  ASSERT_TRUE(last) << last.error().message;
  EXPECT_TRUE(last->masked.empty());
  EXPECT_EQ(*ReadFile(log), MaskSecrets(whole));
  EXPECT_EQ(MaskSecrets(whole), whole);
}

TEST(OutputRedactorTest, ALogLargerThanAPieceIsScannedWholeAcrossPieces) {
  testing::TempDir dir;
  std::string log = dir.path() + "/output.log";
  std::string text = LinesWithKeys(200);
  Append(log, text);
  // Pieces of 100 bytes cut keys in half again and again.
  auto pass = RedactLog(log, 0, true, {.piece = 100});
  ASSERT_TRUE(pass) << pass.error().message;
  EXPECT_EQ(pass->masked, (RedactionCounts{{"aws-key", 200}}));
  EXPECT_EQ(ReadFile(log)->find("AKIA"), std::string::npos);
  EXPECT_EQ(pass->settled, text.size());
}

TEST(OutputRedactorTest, ABudgetStopsAPassAndTheNextGoesOnFromThere) {
  testing::TempDir dir;
  std::string log = dir.path() + "/output.log";
  std::string text = LinesWithKeys(200);
  Append(log, text);
  RedactionCounts masked;
  uint64_t from = 0;
  int passes = 0;
  for (;; ++passes) {
    ASSERT_LT(passes, 1000);
    auto pass = RedactLog(log, from, true, {.piece = 100, .budget = 300});
    ASSERT_TRUE(pass) << pass.error().message;
    for (const auto& [kind, count] : pass->masked)
      masked[kind] += count;
    if (pass->whole)
      break;
    // What it decided may be shown; it stopped at a piece's end.
    EXPECT_EQ(pass->readable, pass->settled);
    EXPECT_GT(pass->settled, from);
    EXPECT_LE(pass->settled - from, 300u + 100u);
    from = pass->settled;
  }
  EXPECT_GT(passes, 10);
  EXPECT_EQ(masked, (RedactionCounts{{"aws-key", 200}}));
  EXPECT_EQ(ReadFile(log)->find("AKIA"), std::string::npos);
}

TEST(OutputRedactorTest, AMissingLogIsNotFound) {
  auto pass = RedactLog("/nonexistent/output.log", 0, true);
  ASSERT_FALSE(pass);
  EXPECT_EQ(pass.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace baton
