// Redaction of secrets in output (issue 12, doc/redaction.md): what a
// task prints is masked in place, same length, before any reader gets it;
// a token printed in two writes is found whole and never shown half; the
// count survives a kill -9 of batond; `--no-redact` keeps the log as
// printed.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Made-up secrets of each shape (none is real).
const std::string kGitHub = "ghp_" + std::string(36, 'Z');
const std::string kAws = "AKIAIOSFODNN7EXAMPLE";
const std::string kOpenAi = "sk-proj-" + std::string(48, 'x');
const std::string kSlack = "xoxb-1234567890-1234567890123-abcdefghijkl";
const std::string kKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----";

// What a secret of `length` bytes is shown as.
std::string Marker(const std::string& kind, size_t length) {
  std::string marker = "[redacted: " + kind + "]";
  return marker + std::string(length - marker.size(), '*');
}

class RedactionTest : public BatonTest {
 protected:
  // A file in the home that a task `cat`s: the secrets never appear on a
  // command line.
  std::string Text(const std::string& name, const std::string& text) {
    std::string path = home_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  static bool WaitFor(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done())
        return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }
  std::string Raw(const std::string& id) {
    return ReadFile(Status(id)["output_path"].get<std::string>())
        .value_or("<no log>");
  }
};

TEST_F(RedactionTest, EachShapeIsMaskedInPlaceWithTheSameLength) {
  std::string printed = "clone " + kGitHub + "\naws " + kAws + " and " +
                        kOpenAi + "\nslack=" + kSlack + "\n" + kKey +
                        "\nplain ghp_short sk-no\n";
  std::string id = Run("cat " + Text("secrets", printed));
  EXPECT_EQ(Baton({"wait", "--timeout", "20s", id}).exit_code, 0);

  std::string shown = Baton({"output", id}).out;
  EXPECT_EQ(shown.size(), printed.size());
  EXPECT_EQ(shown,
            "clone [redacted: github-token]****************\n"
            "aws [redacted: aws-key]* and " +
                Marker("openai-key", kOpenAi.size()) +
                "\nslack=" + Marker("slack-token", kSlack.size()) + "\n" +
                Marker("private-key", kKey.size()) +
                "\nplain ghp_short sk-no\n");
  // The file itself keeps none of them.
  std::string raw = Raw(id);
  EXPECT_EQ(raw, shown);
  for (const std::string& secret : {kGitHub, kAws, kOpenAi, kSlack, kKey})
    EXPECT_EQ(raw.find(secret), std::string::npos) << secret;

  auto task = Status(id);
  EXPECT_EQ(task["redactions"],
            nlohmann::json::parse(R"([{"kind":"aws-key","count":1},)"
                                  R"({"kind":"github-token","count":1},)"
                                  R"({"kind":"openai-key","count":1},)"
                                  R"({"kind":"private-key","count":1},)"
                                  R"({"kind":"slack-token","count":1}])"))
      << task.dump();
  EXPECT_FALSE(task.contains("redact"));
  std::string status = Baton({"status", id}).out;
  EXPECT_NE(status.find("redacted: 5 secrets masked (1 aws-key, 1 "
                        "github-token, 1 openai-key, 1 private-key, 1 "
                        "slack-token)"),
            std::string::npos)
      << status;
}

TEST_F(RedactionTest, ATokenPrintedInTwoWritesIsNeverShownHalf) {
  std::string half = home_ + "/half", go = home_ + "/go", all = home_ + "/all";
  std::string first = Text("first", "token: " + kGitHub.substr(0, 20));
  std::string rest = Text("rest", kGitHub.substr(20) + "\nafter\n");
  std::string id = Run("cat " + first + "; touch " + half + "; while [ ! -e " +
                       go + " ]; do sleep 0.02; done; cat " + rest +
                       "; touch " + all + "; exec sleep 60");
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(half); }));
  // Several reads while half of it is out: the line's start is shown, the
  // token's half never (nor consumed by a cursor).
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Baton({"output", id}).out, "token: ");
    std::this_thread::sleep_for(milliseconds(300));
  }
  EXPECT_EQ(Status(id)["output_bytes"], 7);
  std::ofstream(go) << "";
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(all); }));
  EXPECT_EQ(Baton({"output", id}).out,
            "token: [redacted: github-token]****************\nafter\n");
  EXPECT_EQ(Status(id)["redactions"][0]["count"], 1);
  EXPECT_EQ(Baton({"kill", "--grace", "100ms", id}).exit_code, 0);
}

TEST_F(RedactionTest, AFollowShowsTheMaskOnly) {
  // `output --follow` streams as the log grows; half a token is never
  // printed, not even between the two writes.
  std::string first = Text("first", "key: " + kGitHub.substr(0, 30));
  std::string rest = Text("rest", kGitHub.substr(30) + "\nend\n");
  std::string id = Run("sleep 0.3; cat " + first + "; sleep 0.7; cat " + rest);
  auto followed = Baton({"output", "--follow", id});
  EXPECT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_EQ(followed.out,
            "key: [redacted: github-token]****************\nend\n");
}

TEST_F(RedactionTest, NoRedactKeepsTheOutputAsPrinted) {
  std::string printed = "key " + kAws + "\n";
  std::string id = Run("cat " + Text("secrets", printed), {"--no-redact"});
  EXPECT_EQ(Baton({"wait", "--timeout", "20s", id}).exit_code, 0);
  EXPECT_EQ(Baton({"output", id}).out, printed);
  EXPECT_EQ(Raw(id), printed);
  auto task = Status(id);
  EXPECT_EQ(task["redact"], false) << task.dump();
  EXPECT_FALSE(task.contains("redactions"));
  EXPECT_NE(Baton({"status", id}).out.find("redacted: off (run --no-redact)"),
            std::string::npos);
}

// A check's output is masked like the task's (issue 35, finding 3): in
// status, wait and --json, and in check-N.log on disk. The key is put
// together by the shell, so no command line holds it whole.
TEST_F(RedactionTest, ACheckOutputIsMaskedInEveryViewAndOnDisk) {
  std::string check = "A=AKIA; B=IOSFODNN7EXAMPLE; printf '%s%s\\n' $A $B";
  std::string id = Run("true", {"--check", check});
  auto waited = Baton({"wait", "--timeout", "20s", id});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  auto task = Status(id);
  std::string views = waited.out + Baton({"status", id}).out + task.dump() +
                      Baton({"--json", "ls", "--all"}).out;
  EXPECT_EQ(views.find(kAws), std::string::npos) << views;
  EXPECT_NE(views.find("[redacted: aws-key]"), std::string::npos) << views;
  std::string log =
      ReadFile(std::filesystem::path(task["output_path"].get<std::string>())
                   .parent_path() /
               "check-1.log")
          .value_or("<no check log>");
  EXPECT_EQ(log, Marker("aws-key", kAws.size()) + "\n");
}

// With --no-redact, the check's output is kept as printed too.
TEST_F(RedactionTest, NoRedactKeepsACheckOutputAsPrinted) {
  std::string id = Run("true", {"--no-redact", "--check",
                                "cat " + Text("secrets", kAws + "\n")});
  EXPECT_EQ(Baton({"wait", "--timeout", "20s", id}).exit_code, 0);
  EXPECT_NE(Status(id).dump().find(kAws), std::string::npos);
}

// Secrets outside output (issue 35, finding 4): on a command line, in a
// label, an environment value whatever its name, a kill reason. No view
// shows them (ls, status, their --json, the audit trail); the task runs
// with the real values.
TEST_F(RedactionTest, SecretsInCommandsLabelsEnvAndReasonsAreShownMasked) {
  std::string got = home_ + "/got";
  std::string id = Run("printenv PLAIN > " + got + ".tmp; mv " + got + ".tmp " +
                           got + "; sleep 30 # Bearer " + kGitHub,
                       {"--label", "deploy " + kSlack, "--env", "PLAIN=" + kAws,
                        "--env", "DB_PASS=" + kOpenAi});
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(got); }));
  EXPECT_EQ(ReadFile(got).value_or(""), kAws + "\n");
  auto killed = Baton({"kill", "--reason", "leaked " + kOpenAi, id});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  Baton({"wait", "--timeout", "20s", id});
  std::string shown =
      Baton({"ls", "--all"}).out + Baton({"--json", "ls", "--all"}).out +
      Baton({"status", id}).out + Baton({"--json", "status", id}).out +
      Baton({"audit"}).out + Baton({"--json", "audit"}).out;
  for (const std::string& secret : {kGitHub, kAws, kOpenAi, kSlack})
    EXPECT_EQ(shown.find(secret), std::string::npos) << secret << "\n" << shown;
  EXPECT_NE(shown.find("Bearer [redacted: github-token]"), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("\"PLAIN\":\"[redacted: aws-key]*\""), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("\"DB_PASS\":\"***\""), std::string::npos) << shown;
}

TEST_F(RedactionTest, ACrashOfBatondMidTaskKeepsTheMaskAndTheCount) {
  std::string one = home_ + "/one", go = home_ + "/go", two = home_ + "/two";
  std::string first = Text("first", "a " + kAws + "\n");
  std::string second = Text("second", "b " + kGitHub + "\n");
  std::string id = Run("cat " + first + "; touch " + one + "; while [ ! -e " +
                       go + " ]; do sleep 0.02; done; cat " + second +
                       "; touch " + two + "; exec sleep 60");
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(one); }));
  ASSERT_TRUE(WaitFor([&] { return Status(id).contains("redactions"); }));
  KillDaemonHard();
  // Printed while no batond runs; the next one scans the log again from
  // its start (a marker is no secret) and counts on from the file.
  std::ofstream(go) << "";
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(two); }));
  EXPECT_EQ(Baton({"output", id}).out,
            "a [redacted: aws-key]*\nb [redacted: github-token]"
            "****************\n");
  auto task = Status(id);
  EXPECT_EQ(task["redactions"],
            nlohmann::json::parse(R"([{"kind":"aws-key","count":1},)"
                                  R"({"kind":"github-token","count":1}])"))
      << task.dump();
  EXPECT_EQ(Baton({"kill", "--grace", "100ms", id}).exit_code, 0);
}

TEST_F(RedactionTest, WithACapOnlyWhatIsKeptIsScanned) {
  // The secret past the cap is dropped, never scanned nor counted.
  std::string printed = "x " + kAws + "\n" + kGitHub + "\n";
  std::string id = Run("cat " + Text("secrets", printed),
                       {"--max-output", std::to_string(3 + kAws.size())});
  EXPECT_EQ(Baton({"wait", "--timeout", "20s", id}).exit_code, 0);
  std::string shown = Baton({"output", id}).out;
  EXPECT_EQ(shown,
            "x [redacted: aws-key]*\n[baton: output capped at 23 "
            "bytes (max_output); 41 more bytes were dropped]\n");
  EXPECT_EQ(Status(id)["redactions"],
            nlohmann::json::parse(R"([{"kind":"aws-key","count":1}])"));
}

}  // namespace
}  // namespace baton::testing
