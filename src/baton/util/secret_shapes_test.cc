#include "baton/util/secret_shapes.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

// Made-up secrets of each shape (none is real).
const std::string kAnthropic =
    "sk-ant-api03-" + std::string(40, 'A') + "_b-" + std::string(20, 'c');
const std::string kOpenAi = "sk-proj-" + std::string(48, 'x');
const std::string kGitHub = "ghp_" + std::string(36, 'Z');
const std::string kGitHubPat = "github_pat_11ABCDEFG0" + std::string(40, 'q');
const std::string kAws = "AKIAIOSFODNN7EXAMPLE";
const std::string kSlack = "xoxb-1234567890-1234567890123-abcdefghijkl";
const std::string kJwt =
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
const std::string kKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "QyNTUxOQAAACD\n-----END OPENSSH PRIVATE KEY-----";

std::vector<std::string_view> Kinds(const std::vector<SecretMatch>& found) {
  std::vector<std::string_view> kinds;
  for (const auto& match : found)
    kinds.push_back(match.kind);
  return kinds;
}

TEST(SecretShapesTest, FindsEachShapeWhereItIs) {
  struct Case {
    std::string secret;
    std::string_view kind;
  };
  for (const Case& c :
       {Case{kAnthropic, "anthropic-key"}, Case{kOpenAi, "openai-key"},
        Case{kGitHub, "github-token"}, Case{kGitHubPat, "github-token"},
        Case{kAws, "aws-key"}, Case{kSlack, "slack-token"}, Case{kJwt, "jwt"},
        Case{kKey, "private-key"}}) {
    std::string text = "export TOKEN=" + c.secret + "\nnext line\n";
    auto found = FindSecrets(text, /*at_end=*/true);
    ASSERT_EQ(found.size(), 1u) << c.secret;
    EXPECT_EQ(found[0], (SecretMatch{13, c.secret.size(), c.kind}));
  }
}

TEST(SecretShapesTest, LeavesWordsAndNearMissesAlone) {
  for (const std::string& text : std::vector<std::string>{
           "risk-ant-" + std::string(30, 'a'),  // Inside a word.
           "sk-short", "ghp_" + std::string(20, 'a'),
           "AKIA" + std::string(15, 'A'),  // One short.
           "AKIA" + std::string(17, 'A'),  // One long.
           "AKIAiosfodnn7example",         // Not upper case.
           "eyJhbGciOi.notjson.x", "-----BEGIN CERTIFICATE-----\nMIIB\n",
           "xoxz-1234567890abc", "plain text, nothing secret: sk- ghp_ AKIA"}) {
    EXPECT_TRUE(FindSecrets(text, true).empty()) << text;
  }
}

TEST(SecretShapesTest, MasksWithTheSameLength) {
  std::string text = "a " + kGitHub + " b " + kAws + " c";
  auto found = FindSecrets(text, true);
  ASSERT_EQ(Kinds(found),
            (std::vector<std::string_view>{"github-token", "aws-key"}));
  size_t size = text.size();
  for (const SecretMatch& match : found)
    text.replace(match.offset, match.length,
                 SecretMarker(match.kind, match.length));
  EXPECT_EQ(text.size(), size);
  EXPECT_EQ(text,
            "a [redacted: github-token]**************** b "
            "[redacted: aws-key]* c");
  EXPECT_EQ(SecretMarker("github-token", 12), "[redacted]**");
  EXPECT_EQ(SecretMarker("github-token", 5), "*****");
  // Masked text has nothing left to find.
  EXPECT_TRUE(FindSecrets(text, true).empty());
}

// Output comes in pieces: what may go on past the end is left undecided,
// and scanning again from `settled` with more text finds it whole.
TEST(SecretShapesTest, PiecesSettleOnlyWhatIsDecided) {
  std::string whole = "start " + kSlack + " middle " + kKey + " end\n";
  for (size_t cut = 0; cut <= whole.size(); ++cut) {
    std::string first = whole.substr(0, cut);
    ScanEnd end;
    auto early = FindSecrets(first, /*at_end=*/false, &end);
    size_t settled = end.settled;
    ASSERT_LE(settled, cut);
    ASSERT_LE(end.open, cut);
    auto rest = FindSecrets(std::string_view(whole).substr(settled), true);
    for (auto& match : rest)
      match.offset += settled;
    early.insert(early.end(), rest.begin(), rest.end());
    EXPECT_EQ(early, FindSecrets(whole, true)) << "cut at " << cut;
  }
}

TEST(SecretShapesTest, AnUnclosedKeyBlockIsTheRestAtTheEndAndBoundedBefore) {
  std::string open = "x -----BEGIN RSA PRIVATE KEY-----\nMIIEow";
  ScanEnd end;
  EXPECT_TRUE(FindSecrets(open, false, &end).empty());
  EXPECT_EQ(end.settled, 2u);
  EXPECT_EQ(end.open, 2u);
  auto ended = FindSecrets(open, true);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].length, open.size() - 2);
  // A block that never closes does not hold everything after it.
  std::string huge = open + std::string(20'000, 'A') + "\n" + kAws + "\n";
  auto found = FindSecrets(huge, false, &end);
  ASSERT_EQ(Kinds(found),
            (std::vector<std::string_view>{"private-key", "aws-key"}));
  EXPECT_EQ(found[0].length, 16u * 1024);
}

// A prompt printed without its newline is shown at once: only a secret
// that may be starting is held back.
TEST(SecretShapesTest, OnlyARealCandidateIsHeldBack) {
  ScanEnd end;
  FindSecrets("Password: ", false, &end);
  EXPECT_EQ(end.open, 10u);
  EXPECT_EQ(end.settled, 0u);  // Scanned again: "gh" may become "ghp_".
  FindSecrets("token ghp_abc", false, &end);
  EXPECT_EQ(end.open, 6u);
}

// fuzz/corpus/redaction_scan/live-slack-prefix-shown: a log that ended in
// "xo" was shown up to its end; then "xs-..." came, the whole was masked,
// and the reader had "xo" of a marker's place: half masked.
TEST(SecretShapesTest, TheStartOfAShapeCutByTheEndIsHeldBack) {
  ScanEnd end;
  FindSecrets("token xo", false, &end);
  EXPECT_EQ(end.open, 6u);
  FindSecrets("done -----BEG", false, &end);
  EXPECT_EQ(end.open, 5u);
  FindSecrets("results", false, &end);  // Inside a word: no shape.
  EXPECT_EQ(end.open, 7u);
  std::string whole = "a " + kSlack + " b " + kJwt + " c " + kKey + " " +
                      kGitHubPat + " " + kAws + " " + kAnthropic + "\n";
  std::string masked = MaskSecrets(whole);
  for (size_t cut = 0; cut <= whole.size(); ++cut) {
    std::string shown = MaskSecrets(whole.substr(0, cut));
    FindSecrets(std::string_view(whole).substr(0, cut), false, &end);
    EXPECT_EQ(shown.substr(0, end.open), masked.substr(0, end.open))
        << "cut at " << cut;
  }
}

// The text before `from` is context only: whether a shape at `from`
// starts a word.
TEST(SecretShapesTest, ScanningFromAnOffsetReadsTheByteBeforeIt) {
  std::string glued = "x" + kOpenAi + " ";
  EXPECT_TRUE(FindSecrets(glued, true, nullptr, 1).empty());
  EXPECT_EQ(FindSecrets(std::string_view(glued).substr(1), true).size(), 1u);
  auto spaced = FindSecrets(" " + kOpenAi + " ", true, nullptr, 1);
  ASSERT_EQ(spaced.size(), 1u);
  EXPECT_EQ(spaced[0].offset, 1u);
}

// After a secret a word starts, as it does after its marker: what masking
// leaves is no secret to a second masking.
TEST(SecretShapesTest, AWordStartsRightAfterASecret) {
  std::string text = kKey + kAws + "\n";
  EXPECT_EQ(Kinds(FindSecrets(text, true)),
            (std::vector<std::string_view>{"private-key", "aws-key"}));
  std::string masked = MaskSecrets(text);
  EXPECT_EQ(MaskSecrets(masked), masked);
}

TEST(SecretShapesTest, MaskSecretsReplacesEachWholeMatchInACopy) {
  std::string token = "ghp_" + std::string(36, 'Z');
  std::string line = "curl -H 'Authorization: Bearer " + token + "' x";
  std::string masked = MaskSecrets(line);
  EXPECT_EQ(masked.size(), line.size());
  EXPECT_EQ(masked.find(token), std::string::npos);
  EXPECT_NE(masked.find("Bearer [redacted: github-token]"), std::string::npos);
  EXPECT_EQ(MaskSecrets("nothing here"), "nothing here");
}

}  // namespace
}  // namespace baton
