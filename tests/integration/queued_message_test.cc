// Queued follow-ups can be changed before their delivery (issue 13),
// through the CLI and a real batond: `baton send` answers with the
// message's id, `--list` shows what waits, `--replace` and `--withdraw`
// change it, the ids survive a kill -9 of batond, and once a message was
// delivered or withdrawn a change is refused with `already_delivered`.
#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class QueuedMessageTest : public FakeAgentTest {};

TEST_F(QueuedMessageTest, AQueuedFollowUpIsReplacedOrWithdrawnUntilDelivered) {
  // The question holds the first turn open: follow-ups queue behind it.
  std::string id = Delegate({"please ASK me"});
  WaitForEvent(id, "question");
  auto first = Baton({"send", id, "first version"}, env_);
  EXPECT_EQ(first.out, id + ": m-1 queued until the current turn ends\n")
      << first.err;
  auto second = Baton({"--json", "send", id, "second"}, env_);
  EXPECT_EQ(second.json()["id"], "m-2") << second.out;
  const std::string listed = id +
                             ": queued, next first:\n  m-1 first version\n"
                             "  m-2 second\n";
  EXPECT_EQ(Baton({"send", id, "--list"}, env_).out, listed);

  // The ids are kept in the task's events: a new batond knows them.
  KillDaemonHard();
  EXPECT_EQ(Baton({"send", id, "--list"}, env_).out, listed);

  auto replaced =
      Baton({"send", id, "--replace", "m-1", "REPLACED text"}, env_);
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_EQ(replaced.out, id + ": m-1 replaced\n" + id +
                              ": queued, next first:\n  m-1 REPLACED text\n"
                              "  m-2 second\n");
  auto withdrawn = Baton({"send", id, "--withdraw", "m-2"}, env_);
  EXPECT_EQ(withdrawn.out, id + ": m-2 withdrawn\n" + id +
                               ": queued, next first:\n  m-1 REPLACED text\n");
  auto unknown = Baton({"send", id, "--withdraw", "m-9"}, env_);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("has no message m-9; the queued ones are m-1"),
            std::string::npos)
      << unknown.err;

  // The answer ends the turn: the replaced text goes in, the withdrawn
  // one never does.
  ASSERT_EQ(Baton({"answer", id, "2"}, env_).exit_code, 0);
  auto delivered = WaitForEvent(id, "delivered");
  EXPECT_EQ(delivered.value("text", ""), "REPLACED text") << delivered.dump();
  EXPECT_EQ(delivered.value("id", ""), "m-1") << delivered.dump();

  auto late =
      Baton({"--json", "send", id, "--replace", "m-1", "too late"}, env_);
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_EQ(late.json()["error"]["code"], "already_delivered") << late.out;
  EXPECT_NE(late.out.find("message m-1 was already delivered at "),
            std::string::npos)
      << late.out;
  auto again = Baton({"--json", "send", id, "--withdraw", "m-2"}, env_);
  EXPECT_EQ(again.json()["error"]["code"], "already_delivered") << again.out;
  EXPECT_NE(again.out.find("message m-2 was already withdrawn at "),
            std::string::npos)
      << again.out;

  EXPECT_EQ(WaitEnd(id)["status"], "completed");
  std::string texts = Texts(id);
  EXPECT_NE(texts.find("REPLACED text"), std::string::npos) << texts;
  EXPECT_EQ(texts.find("first version"), std::string::npos) << texts;
  EXPECT_EQ(texts.find("second"), std::string::npos) << texts;
}

TEST_F(QueuedMessageTest, ListAndChangesNeedTheirArguments) {
  std::string id = Delegate({"please ASK me"});
  WaitForEvent(id, "question");
  EXPECT_EQ(Baton({"send", id, "--list"}, env_).out,
            id + ": no message is queued\n");
  auto no_text = Baton({"send", id, "--replace", "m-1"}, env_);
  EXPECT_EQ(no_text.exit_code, 2);
  EXPECT_NE(no_text.err.find("needs the new text"), std::string::npos)
      << no_text.err;
  auto both = Baton({"send", id, "--list", "--withdraw", "m-1"}, env_);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("one of --list, --replace and --withdraw"),
            std::string::npos)
      << both.err;
  Baton({"kill", id}, env_);
  WaitEnd(id);
}

}  // namespace
}  // namespace baton::testing
