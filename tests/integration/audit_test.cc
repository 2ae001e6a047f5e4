// The audit trail (doc/audit.md) through the real daemon and CLI: each
// control action leaves one record with who, when, what and why; reads
// filter by task and time; records outlive batond; an action refused, or
// taken back by a failed commit, leaves none.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class AuditTest : public BatonTest {
 protected:
  // `baton --json audit ARGS...`'s records.
  nlohmann::json Records(std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"--json", "audit"});
    auto result = Baton(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    auto doc = nlohmann::json::parse(result.out, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << result.out;
    return doc.is_object() ? doc["records"] : nlohmann::json::array();
  }
};

TEST_F(AuditTest, EachActionIsRecordedWithWhoWhatAndWhy) {
  std::map<std::string, std::string> build = {{"BATON_SESSION", "build"}};
  std::string id = Run("sleep 30", {}, build);
  auto killed = Baton(
      {"kill", "--reason", "stuck on the network", "--grace", "2s", id}, build);
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  // A kill of an ended task changes nothing and records nothing.
  ASSERT_EQ(Baton({"wait", "--timeout", "10s", id}, build).exit_code, 1);
  ASSERT_EQ(Baton({"kill", id}, build).exit_code, 0);
  ASSERT_EQ(Baton({"queue", "add", "gpu", "--max", "1"}).exit_code, 0);
  ASSERT_EQ(Baton({"budget", "--max-tokens", "5000"}, build).exit_code, 0);

  auto records = Records();
  ASSERT_EQ(records.size(), 4u) << records.dump(1);
  const auto& run = records[0];
  EXPECT_EQ(run["action"], "run");
  EXPECT_EQ(run["task"], id);
  EXPECT_EQ(run["session"], "build");
  EXPECT_EQ(run["client"], "cli");
  EXPECT_EQ(run["uid"], static_cast<int64_t>(::getuid()));
  // The pid is the CLI process's, which has gone by now: not batond's.
  EXPECT_GT(run["pid"].get<int64_t>(), 0);
  EXPECT_NE(run["pid"], DaemonPids().first);
  EXPECT_EQ(run["detail"], "sleep 30");
  EXPECT_EQ(run["seq"], 1);

  const auto& kill = records[1];
  EXPECT_EQ(kill["action"], "kill");
  EXPECT_EQ(kill["task"], id);
  EXPECT_EQ(kill["detail"], "SIGTERM, then SIGKILL after 2s");
  EXPECT_EQ(kill["reason"], "stuck on the network");
  EXPECT_GE(kill["at_ms"].get<int64_t>(), run["at_ms"].get<int64_t>());

  EXPECT_EQ(records[2]["action"], "queue_set");
  EXPECT_FALSE(records[2].contains("session"));
  EXPECT_NE(records[2]["detail"].get<std::string>().find("\"gpu\""),
            std::string::npos);
  EXPECT_EQ(records[3]["action"], "budget");
  EXPECT_EQ(records[3]["detail"], "budget max-tokens 5000");

  // The text: one line per record, oldest first.
  auto text = Baton({"audit"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::string kill_line = fmt::format(
      "kill          {:<10} cli, session build (uid {}, pid {}): SIGTERM, "
      "then SIGKILL after 2s; why: stuck on the network",
      id, ::getuid(), kill["pid"].get<int64_t>());
  EXPECT_NE(text.out.find(kill_line), std::string::npos) << text.out;
  EXPECT_LT(text.out.find(" run "), text.out.find(" kill "));
}

TEST_F(AuditTest, FiltersByTaskTimeAndCount) {
  std::string first = Run("true");
  std::string second = Run("sleep 30");
  ASSERT_EQ(Baton({"kill", second}).exit_code, 0);
  auto only = Records({"--task", first});
  ASSERT_EQ(only.size(), 1u) << only.dump(1);
  EXPECT_EQ(only[0]["task"], first);

  // The newest N, oldest first.
  auto last = Records({"--limit", "2"});
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0]["task"], second);
  EXPECT_EQ(last[0]["action"], "run");
  EXPECT_EQ(last[1]["action"], "kill");

  // A time after every record: none; an hour ago: all.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto later = Baton({"audit", "--since", "10ms"});
  EXPECT_EQ(later.exit_code, 0);
  EXPECT_EQ(later.out, "no actions match\n");
  EXPECT_EQ(Records({"--since", "1h"}).size(), Records().size());
  EXPECT_EQ(Records({"--since", "2000-01-01"}).size(), Records().size());
  EXPECT_EQ(Records({"--since", "2999-01-01T00:00:00.000Z"}).size(), 0u);
}

TEST_F(AuditTest, BadArgumentsAreRefusedWithTheFormsThatWork) {
  Run("true");
  auto since = Baton({"audit", "--since", "yesterday"});
  EXPECT_EQ(since.exit_code, 1) << since.out;
  EXPECT_NE(since.err.find("neither a duration"), std::string::npos)
      << since.err;
  auto limit = Baton({"audit", "--limit", "0"});
  EXPECT_NE(limit.exit_code, 0);
  // On the socket: a limit out of range is refused, with the field named.
  std::string reply = RawRequest(R"({"id":1,"op":"audit","limit":0})");
  EXPECT_NE(reply.find("invalid_argument"), std::string::npos) << reply;
  EXPECT_NE(reply.find("limit"), std::string::npos) << reply;
  // A refused run leaves no record.
  EXPECT_NE(Baton({"run", "--cwd", "/no/such/folder", "--", "true"}).exit_code,
            0);
  EXPECT_EQ(Records().size(), 1u);
}

// Another program on the socket is named by its file name, with the
// session its request named.
TEST_F(AuditTest, AnotherProgramIsNamedByItsFileName) {
  Run("true");  // Starts batond.
  std::string reply =
      RawRequest(R"({"id":1,"op":"run","session":"director",)"
                 R"("argv":["/bin/echo","hi"],"cwd":"/","base_env":[]})");
  ASSERT_NE(reply.find("\"ok\":true"), std::string::npos) << reply;
  auto records = Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["client"], "integration_tests");
  EXPECT_EQ(records[1]["session"], "director");
  EXPECT_EQ(records[1]["pid"], static_cast<int64_t>(::getpid()));
  EXPECT_EQ(records[1]["detail"], "/bin/echo hi");
}

TEST_F(AuditTest, RecordsOutliveBatondAndItsOwnActionsAreItsOwn) {
  std::map<std::string, std::string> env = {{"BATON_SESSION", "agent"},
                                            {"BATON_LEASE", "300ms"}};
  std::string id = Run("sleep 30", {}, env);
  AttachAndLeave("agent");  // The lease starts.
  ASSERT_EQ(Baton({"wait", "--timeout", "10s", id}, env).exit_code, 1);
  int batond = DaemonPids().first;
  ASSERT_EQ(Baton({"daemon", "stop"}).exit_code, 0);
  // A new batond reads the same trail.
  auto records = Records({"--task", id});
  ASSERT_EQ(records.size(), 2u) << records.dump(1);
  EXPECT_EQ(records[1]["action"], "lease_expired");
  EXPECT_EQ(records[1]["client"], "batond");
  EXPECT_EQ(records[1]["session"], "agent");
  EXPECT_EQ(records[1]["pid"], batond);
  auto all = Records();
  ASSERT_EQ(all.size(), 3u) << all.dump(1);
  EXPECT_EQ(all[2]["action"], "shutdown");
  EXPECT_EQ(all[2]["detail"], "batond stops; tasks keep running");
  EXPECT_EQ(all[2]["client"], "cli");
}

}  // namespace
}  // namespace baton::testing
