// batond against bad input on its socket: every request type with each
// field broken (tests/support/request_cases.h), and the lines of issue
// 12's findings. Each gets a clear error naming what was wrong, nothing is
// changed, and batond keeps serving.
#include <nlohmann/json.hpp>

#include "baton/ipc/async_daemon_client.h"
#include "baton/ipc/codec.h"
#include "baton/loop/event_loop.h"
#include "tests/support/baton_fixture.h"
#include "tests/support/request_cases.h"

namespace baton::testing {
namespace {

class ProtocolTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    ASSERT_EQ(Baton({"daemon", "start"}).exit_code, 0);
    daemon_pid_ = DaemonPids().first;
    ASSERT_GT(daemon_pid_, 0);
  }
  // batond still runs (the same process) and holds no task.
  void ExpectUnchanged() {
    EXPECT_EQ(DaemonPids().first, daemon_pid_) << "batond restarted";
    auto all = Baton({"--json", "ls", "--all"}).json();
    EXPECT_EQ(all["tasks"].size(), 0u) << all.dump();
  }
  int daemon_pid_ = 0;
};

TEST_F(ProtocolTest, EveryBrokenFieldGetsAnErrorNamingIt) {
  size_t refused = 0;
  for (const RequestCase& c : BrokenRequests()) {
    if (c.valid)
      continue;  // Would do something (start, stop): the codec test has it.
    std::string reply_text = RawRequest(c.line);
    auto reply = DecodeReplyLine(reply_text);
    ASSERT_TRUE(reply) << c.op << "." << c.field << " " << c.how << ": "
                       << reply_text;
    EXPECT_FALSE(reply->ok) << c.op << "." << c.field << " " << c.how;
    EXPECT_EQ(reply->id, 1);
    EXPECT_NE(reply->error.message.find("'" + c.field), std::string::npos)
        << c.op << "." << c.field << " " << c.how << ": "
        << reply->error.message;
    ++refused;
  }
  EXPECT_GT(refused, 100u);
  ExpectUnchanged();
}

TEST_F(ProtocolTest, TheFindingsOfIssue12GetErrorsNotCrashes) {
  std::string deep(60'000, '[');
  deep += std::string(60'000, ']');
  struct Case {
    std::string line;
    std::string says;
  } cases[] = {
      {R"({"id":1,"op":1})", "'op' must be a string"},
      {R"({"id":)" + deep + R"(,"op":"list"})", "nested deeper"},
      {R"({"id":2,"op":"run","argv":["/bin/echo","a\u0000b"],"cwd":"/"})",
       "NUL"},
      {R"({"id":3,"op":"run","argv":["true"],"cwd":"/srv\u0000/etc"})", "NUL"},
      {R"({"id":4,"op":"run","command":"true","argv":["false"],"cwd":"/"})",
       "not both"},
      {R"({"id":5,"op":"run","argv":["true"],"cwd":"/","base_env":["X"]})",
       "NAME=value"},
      {R"({"id":6,"op":"run","argv":["true"],"cwd":"/","timeout_ms":1e13})",
       "timeout_ms"},
      {R"({"id":7,"op":"run","argv":["true"],"cwd":"/","label":"a\u0000"})",
       "NUL"},
      {"{\"id\":8,\"op\":\"run\",\"argv\":[\"\xff\"],\"cwd\":\"/\"}",
       "not valid JSON"},
  };
  for (const auto& c : cases) {
    std::string reply_text = RawRequest(c.line);
    auto reply = DecodeReplyLine(reply_text);
    ASSERT_TRUE(reply) << c.line.substr(0, 80) << ": " << reply_text;
    EXPECT_FALSE(reply->ok);
    EXPECT_NE(reply->error.message.find(c.says), std::string::npos)
        << c.line.substr(0, 80) << ": " << reply->error.message;
  }
  ExpectUnchanged();
}

TEST_F(ProtocolTest, ALastLineWithoutItsNewlineIsAnswered) {
  std::string reply = RawRequest(R"({"id":7,"op":"hello"})", true);
  EXPECT_TRUE(reply.starts_with(R"({"id":7,)")) << reply;
  // A request that waits for the commit is answered too.
  reply = RawRequest(R"({"id":8,"op":"run","argv":["true"],"cwd":"/"})", true);
  EXPECT_TRUE(reply.starts_with(R"({"id":8,)")) << reply;
  EXPECT_NE(reply.find(R"("ok":true)"), std::string::npos) << reply;
}

TEST_F(ProtocolTest, IdsBeyondSixtyFourBitsComeBackExactly) {
  for (std::string id : {"18446744073709551616", "-9223372036854775809",
                         "123456789012345678901234567890", "1.25"}) {
    std::string reply = RawRequest(R"({"id":)" + id + R"(,"op":"notices"})");
    EXPECT_TRUE(reply.starts_with(R"({"id":)" + id + ",")) << reply;
  }
}

// `watch` (the board's live updates): answered at once below the count,
// else held until a commit changes state, here a task started by the CLI.
TEST_F(ProtocolTest, AWatchIsAnsweredAtTheNextChange) {
  auto blocking = ConnectToDaemon();
  ASSERT_TRUE(blocking) << blocking.error().message;
  auto now = blocking->Call(WatchRequest{});
  ASSERT_TRUE(now) << now.error().message;
  EXPECT_EQ(now->daemon_pid, daemon_pid_);

  EventLoop loop;
  DaemonClient::Options options;
  options.paths = StatePaths{home_, home_};
  options.autostart = false;
  auto client = AsyncDaemonClient::Open(&loop, options, [](Notice) {});
  ASSERT_TRUE(client) << client.error().message;
  std::optional<Result<WatchReply>> got;
  (*client)->Call(WatchRequest{.after = now->changes},
                  [&](Result<WatchReply> reply) {
                    got = std::move(reply);
                    loop.Stop();
                  });
  auto run_for = [&](std::chrono::milliseconds limit) {
    TimerId timer = loop.Schedule(std::chrono::steady_clock::now() + limit,
                                  [&] { loop.Stop(); });
    ASSERT_TRUE(loop.Run());
    loop.Cancel(timer);
  };
  // Nothing changed: the watch is held (a negative check, so a bounded
  // look rather than a wait for something).
  run_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got) << "answered with nothing changed";
  Run("true");
  run_for(std::chrono::seconds(30));
  ASSERT_TRUE(got) << "not answered after a task started";
  ASSERT_TRUE(*got) << got->error().message;
  EXPECT_GT((*got)->changes, now->changes);
}

}  // namespace
}  // namespace baton::testing
