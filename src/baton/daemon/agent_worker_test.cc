#include "baton/daemon/agent_worker.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "baton/util/file_util.h"
#include "tests/support/fakes.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

// An interactive adapter driven by the test: a stream line "end" ends the
// turn, any other is a text event; what it sends is recorded.
class ScriptedAdapter : public AgentAdapter {
 public:
  std::vector<std::string> Argv(const std::vector<std::string>& command,
                                const AgentSpec&) const override {
    return command;
  }
  bool interactive() const override { return true; }
  void Begin(const AgentSpec& spec, const std::string&,
             AdapterSink& sink) override {
    sink.WriteLine("brief: " + spec.brief);
  }
  void OnLine(std::string_view line, AdapterSink& sink) override {
    if (line == "end")
      return sink.TurnEnded();
    sink.Emit({{"type", "text"}, {"text", std::string(line)}});
  }
  Status Send(std::string_view message, SendMode, AdapterSink& sink) override {
    sent->push_back(std::string(message));
    sink.WriteLine("message: " + std::string(message));
    return {};
  }
  bool can_steer() const override { return false; }
  Status Answer(const Json&, const std::vector<ItemAnswer>&,
                AdapterSink&) override {
    return {};
  }
  void Interrupt(AdapterSink&) override { ++*interrupts; }
  std::optional<std::pair<TaskStatus, std::string>> verdict() const override {
    return std::nullopt;
  }

  std::vector<std::string>* sent;
  int* interrupts;
};

class AgentWorkerTest : public ::testing::Test {
 protected:
  AgentWorkerTest()
      : executor_(tmp_.path()),
        registry_(&store_, &executor_, &time_, &time_,
                  TaskRegistry::Options{}) {
    task_.id = TaskId{TaskKind::kAgent, 1};
    task_.spec.kind = TaskKind::kAgent;
    task_.spec.cwd = tmp_.path();
    task_.spec.agent.emplace();
    task_.spec.agent->profile = "fake";
    task_.spec.agent->brief = "do it";
    dir_ = tmp_.MakeDir("agent-1");
    task_.output_path = dir_ + "/output.log";
    // The supervisor holds the FIFO's read end; we read what is written.
    EXPECT_EQ(::mkfifo((dir_ + "/stdin").c_str(), 0600), 0);
    stdin_.reset(::open((dir_ + "/stdin").c_str(), O_RDONLY | O_NONBLOCK));
  }

  std::unique_ptr<AgentWorker> MakeWorker() {
    auto adapter = std::make_unique<ScriptedAdapter>();
    adapter->sent = &sent_;
    adapter->interrupts = &interrupts_;
    return std::make_unique<AgentWorker>(&loop_, &executor_, &registry_, task_,
                                         std::move(adapter));
  }
  void Stream(const std::string& lines) {
    std::ofstream(dir_ + "/stream.jsonl", std::ios::app) << lines;
  }
  std::vector<Json> Events() { return ReadAgentEvents(dir_ + "/events.jsonl"); }
  std::string StdinText() {
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(stdin_.get(), buf, sizeof buf)) > 0;)
      text.append(buf, static_cast<size_t>(n));
    return text;
  }

  testing::TempDir tmp_;
  EventLoop loop_;
  testing::InMemoryTaskStore store_;
  testing::FolderExecutor executor_;
  testing::FakeTimeline time_;
  TaskRegistry registry_;
  TaskRecord task_;
  std::string dir_;
  UniqueFd stdin_;
  std::vector<std::string> sent_;
  int interrupts_ = 0;
};

TEST_F(AgentWorkerTest, AQueuedFollowUpStartsTheNextTurnThenStdinCloses) {
  auto worker = MakeWorker();
  worker->Begin(/*replay=*/false);
  EXPECT_EQ(worker->turn_state(), TurnState::kInTurn);
  EXPECT_EQ(StdinText(), "brief: do it\n");
  EXPECT_EQ(worker->Send("next", SendMode::kFollowup)->delivery,
            "queued until the current turn ends");
  EXPECT_TRUE(sent_.empty());

  worker->TurnEnded();
  EXPECT_EQ(worker->turn_state(), TurnState::kInTurn);
  EXPECT_EQ(sent_, std::vector<std::string>{"next"});
  EXPECT_EQ(StdinText(), "message: next\n");
  std::vector<Json> events = Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["type"], "delivered");
  EXPECT_EQ(events[1]["message"], events[0]["seq"]);

  worker->TurnEnded();
  EXPECT_EQ(worker->turn_state(), TurnState::kClosed);
  EXPECT_EQ(executor_.stdin_closed, std::vector<TaskId>{task_.id});
  auto late = worker->Send("more", SendMode::kFollowup);
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message.find("finished its turn"), std::string::npos);
}

TEST_F(AgentWorkerTest, AKillMidTurnEndsItAndNothingFollows) {
  auto worker = MakeWorker();
  worker->Begin(false);
  ASSERT_TRUE(worker->Send("next", SendMode::kFollowup));
  EXPECT_TRUE(worker->Stop());
  EXPECT_EQ(worker->turn_state(), TurnState::kStopping);
  EXPECT_EQ(interrupts_, 1);
  worker->TurnEnded();
  EXPECT_EQ(worker->turn_state(), TurnState::kClosed);
  EXPECT_TRUE(sent_.empty());    // The queued follow-up never went.
  EXPECT_FALSE(worker->Stop());  // No turn left to stop.
  EXPECT_EQ(interrupts_, 1);
}

// After a restart the stream is fed again: a turn end after the last
// message that started a turn means the turn is over, and the follow-up
// queued before the restart goes now.
TEST_F(AgentWorkerTest, AReplayRebuildsTheTurnStateAndDeliversTheQueue) {
  Stream("first\nend\n");
  std::ofstream(dir_ + "/events.jsonl")
      << R"({"type":"text","text":"first","src":0,"seq":1})"
         "\n"
      << R"({"type":"message","mode":"followup","text":"later","delivery":"queued until the current turn ends","emits":1,"seq":2})"
         "\n";
  auto worker = MakeWorker();
  worker->Begin(/*replay=*/true);
  EXPECT_EQ(sent_, std::vector<std::string>{"later"});
  EXPECT_EQ(worker->turn_state(), TurnState::kInTurn);
  std::vector<Json> events = Events();
  ASSERT_EQ(events.size(), 3u);  // Nothing recorded twice.
  EXPECT_EQ(events[2]["type"], "delivered");
  EXPECT_EQ(events[2]["seq"], 3);
}

TEST_F(AgentWorkerTest, AReplayedTurnEndBeforeTheLastStartLeavesTheTurnOn) {
  Stream("first\nend\n");
  std::ofstream(dir_ + "/events.jsonl")
      << R"({"type":"text","text":"first","src":0,"seq":1})"
         "\n"
      << R"({"type":"delivered","message":9,"text":"go on","emits":1,"seq":2})"
         "\n";
  auto worker = MakeWorker();
  worker->Begin(true);
  EXPECT_EQ(worker->turn_state(), TurnState::kInTurn);
  EXPECT_TRUE(sent_.empty());
  EXPECT_TRUE(executor_.stdin_closed.empty());
}

// Queued follow-ups keep their ids (m-<n>) and changes across a restart;
// once delivered or withdrawn they are refused, saying so.
TEST_F(AgentWorkerTest, AQueuedFollowUpIsReplacedOrWithdrawnUntilDelivered) {
  {
    auto worker = MakeWorker();
    worker->Begin(false);
    EXPECT_EQ(worker->Send("one", SendMode::kFollowup)->id, "m-1");
    EXPECT_EQ(worker->Send("two", SendMode::kFollowup)->id, "m-2");
    ASSERT_TRUE(worker->ChangeQueued("m-1", "ONE"));
    ASSERT_TRUE(worker->ChangeQueued("m-2", std::nullopt));
    auto unknown = worker->ChangeQueued("m-5", "x");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(unknown.error().message,
              "agent-1 has no message m-5; the queued ones are m-1");
  }
  // A restarted batond rebuilds the queue, the changes and the numbering.
  auto worker = MakeWorker();
  worker->Begin(/*replay=*/true);
  auto queued = worker->Queued();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].id, "m-1");
  EXPECT_EQ(queued[0].text, "ONE");
  EXPECT_EQ(worker->Send("three", SendMode::kFollowup)->id, "m-3");
  auto withdrawn = worker->ChangeQueued("m-2", "again");
  ASSERT_FALSE(withdrawn);
  EXPECT_EQ(withdrawn.error().code, ErrorCode::kAlreadyDelivered);
  EXPECT_NE(withdrawn.error().message.find("message m-2 was already "
                                           "withdrawn at 20"),
            std::string::npos)
      << withdrawn.error().message;

  worker->TurnEnded();
  EXPECT_EQ(sent_, std::vector<std::string>{"ONE"});
  auto late = worker->ChangeQueued("m-1", std::nullopt);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ErrorCode::kAlreadyDelivered);
  EXPECT_NE(late.error().message.find("message m-1 was already delivered at"),
            std::string::npos)
      << late.error().message;
  EXPECT_EQ(worker->Queued().size(), 1u);  // m-3 waits.
}

// Events files written before messages had ids: they are counted.
TEST(MessageLedgerTest, MessagesWithoutIdsAreNumberedInOrder) {
  MessageLedger ledger;
  ledger.Apply(
      {{"type", "message"}, {"seq", 1}, {"delivery", "steered"}, {"at", "t1"}});
  ledger.Apply({{"type", "message"},
                {"seq", 2},
                {"text", "b"},
                {"delivery", "queued until the current turn ends"}});
  ledger.Apply(
      {{"type", "message"}, {"seq", 3}, {"id", "m-7"}, {"delivery", "queued"}});
  ledger.Apply({{"type", "delivered"}, {"message", 3}, {"at", "t4"}});
  EXPECT_EQ(ledger.settled["m-1"].at, "t1");
  ASSERT_EQ(ledger.queued.size(), 1u);
  EXPECT_EQ(ledger.queued[2].id, "m-2");
  EXPECT_EQ(ledger.settled["m-7"].how, "delivered");
  EXPECT_EQ(ledger.numbers, 7);
}

// An events.jsonl that cannot be written (a folder in its place here; a
// full disk in life, AgentEventLog's tests): the append fails, the
// transcript says so once, and the worker goes on.
TEST_F(AgentWorkerTest, AnEventThatCannotBeRecordedIsReported) {
  tmp_.MakeDir("agent-1/events.jsonl");
  auto worker = MakeWorker();
  worker->Begin(false);
  worker->Emit({{"type", "text"}, {"text", "hello"}});
  worker->Emit({{"type", "text"}, {"text", "again"}});
  std::string transcript = ReadFile(task_.output_path).value_or("");
  EXPECT_EQ(transcript,
            "hello\n[error] could not record event 1 in " + dir_ +
                "/events.jsonl (cannot open it: Is a directory)\nagain\n");
}

TEST_F(AgentWorkerTest, AnOptionNumberOutOfRangeIsRefusedEvenIfHuge) {
  auto worker = MakeWorker();
  worker->Begin(false);
  worker->Emit(Json::parse(R"({"type":"question","items":[
      {"prompt":"Which?","options":[{"label":"a"},{"label":"b"}]}]})"));
  EXPECT_TRUE(worker->has_open_question());
  Json answered;
  for (std::string number : {"3", "99999999999999999999999"}) {
    auto refused = worker->Answer({number}, &answered);
    ASSERT_FALSE(refused) << number;
    EXPECT_EQ(refused.error().message,
              "item 1 has options 1 to 2; " + number + " is none of them");
  }
  ASSERT_TRUE(worker->Answer({"2"}, &answered));
  EXPECT_EQ(answered["answers"], Json::array({Json::array({"b"})}));
  EXPECT_FALSE(worker->has_open_question());
}

}  // namespace
}  // namespace baton
