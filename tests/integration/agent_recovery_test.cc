// kill -9 of batond while an agent has follow-ups queued behind a running
// turn (the scripted claude, tests/agents/fakes/claude): after the restart
// each follow-up is delivered exactly once, and only when the turn before
// it ended.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class AgentRecoveryTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (!PutFakeAgentsOnPath(env_))
      GTEST_SKIP() << "python3 (for the fake agent CLIs) is not installed";
  }

  nlohmann::json Events(const std::string& id) {
    nlohmann::json events = nlohmann::json::array();
    auto result = Baton({"--json", "events", id}, env_);
    size_t start = 0;
    for (size_t nl; (nl = result.out.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      events.push_back(nlohmann::json::parse(
          result.out.substr(start, nl - start), nullptr, false));
    }
    return events;
  }

  // The events of `type`, polled (bounded) until there are `count`.
  nlohmann::json WaitForEvents(const std::string& id, const std::string& type,
                               size_t count) {
    auto deadline = std::chrono::steady_clock::now() + seconds(20);
    nlohmann::json found;
    do {
      found = nlohmann::json::array();
      for (const auto& event : Events(id)) {
        if (event.value("type", "") == type)
          found.push_back(event);
      }
      if (found.size() >= count)
        break;
      std::this_thread::sleep_for(milliseconds(100));
    } while (std::chrono::steady_clock::now() < deadline);
    return found;
  }

  static size_t Count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos;
         at = text.find(what, at + 1)) {
      ++n;
    }
    return n;
  }

  std::map<std::string, std::string> env_;
};

TEST_F(AgentRecoveryTest, QueuedFollowUpsSurviveARestartAndGoInOnce) {
  auto started = Baton({"delegate", "SLOW one"}, env_);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string id = started.out.substr(0, started.out.find('\n'));
  WaitStarted(id, env_);
  // Two follow-ups wait behind the slow first turn (2 s).
  EXPECT_EQ(Baton({"send", id, "SLOW two"}, env_).out,
            id + ": m-1 queued until the current turn ends\n");
  EXPECT_EQ(Baton({"send", id, "three"}, env_).out,
            id + ": m-2 queued until the current turn ends\n");

  // batond dies; the first turn ends while none runs.
  auto first_daemon = DaemonPids().first;
  KillDaemonHard();
  std::this_thread::sleep_for(milliseconds(2500));

  // The next command starts a batond, which sees the turn ended and sends
  // the first follow-up (its slow turn starts).
  EXPECT_EQ(Status(id, env_)["status"], "running");
  EXPECT_NE(DaemonPids().first, first_daemon);
  // (Under a sanitizer on a loaded machine the two sends can take longer
  // than the first turn: then the first batond delivered it already, and
  // "three" may be in too. Once each, in order, is checked at the end.)
  auto delivered = WaitForEvents(id, "delivered", 1);
  ASSERT_GE(delivered.size(), 1u) << Events(id);
  EXPECT_EQ(delivered[0]["text"], "SLOW two");

  // batond dies again, most often inside the second turn, and comes back
  // at once: "three" waits for that turn's end. (Whether the 2 s turn is
  // still running when the status call lands depends on the machine's
  // load, so the status is not asserted; the order of deliveries and
  // results below is what shows it.)
  KillDaemonHard();
  auto status = Status(id, env_)["status"];
  EXPECT_TRUE(status == "running" || status == "completed") << status;

  auto waited = Baton({"--json", "wait", "--timeout", "30s", id}, env_);
  ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  EXPECT_EQ(waited.json()["ended"][0]["status"], "completed") << waited.out;
  std::string output = Baton({"output", id}, env_).out;
  EXPECT_EQ(Count(output, "turn 1: SLOW one"), 2u) << output;  // text, result
  EXPECT_EQ(Count(output, "turn 2: SLOW two"), 2u) << output;
  EXPECT_EQ(Count(output, "turn 3: three"), 2u) << output;
  EXPECT_EQ(Count(output, "turn 4"), 0u) << output;

  // Each follow-up was marked delivered once, "three" only after the
  // second turn's result.
  auto events = Events(id);
  std::vector<std::string> order;
  for (const auto& event : events) {
    std::string type = event.value("type", "");
    if (type == "delivered")
      order.push_back("delivered " + event.value("text", ""));
    if (type == "result")
      order.push_back("result");
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{"result", "delivered SLOW two", "result",
                                      "delivered three", "result"}))
      << events;
}

}  // namespace
}  // namespace baton::testing
