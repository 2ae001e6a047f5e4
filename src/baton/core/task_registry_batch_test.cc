// TaskRegistry::Commit: executor requests wait for the commit, and a failed
// commit takes back what its batch did for replies that will not be given,
// while what happened to tasks stays for the next commit (issue #12,
// finding 1; doc/protocol.md, "When state cannot be saved").
#include <gtest/gtest.h>

#include <cerrno>

#include "baton/core/task_registry_test_fixture.h"

namespace baton {
namespace {

using registry_test::RegistryHarness;

using std::chrono::milliseconds;
using testing::FakeExecutor;
using testing::FakeTimeline;
using testing::InMemoryTaskStore;

class TaskRegistryBatchTest : public RegistryHarness {
 protected:
  TaskSpec Shell(std::string owner = "") {
    TaskSpec spec;
    spec.shell_command = "true";
    spec.cwd = "/tmp";
    spec.owner = std::move(owner);
    return spec;
  }

  // Starts a task; its id text ("" if refused). Not committed.
  std::string Start(std::string owner = "") {
    std::string id;
    registry_->Start(Shell(std::move(owner)), [&](Result<TaskRecord> task) {
      if (task)
        id = task->id.ToString();
    });
    return id;
  }

  // Starts, commits and spawns a task; its id text.
  std::string StartRunning(std::string owner = "") {
    std::string id = Start(std::move(owner));
    Commit();
    executor_.Spawn(Id(id));
    Commit();
    return id;
  }

  void Commit() { ASSERT_TRUE(registry_->Commit()); }
  // Commits with the disk full; the ids of the tasks it dropped.
  std::vector<TaskId> FailedCommit() {
    store_.fail_flush = Error{ErrorCode::kIo, "disk full", ENOSPC};
    std::vector<TaskId> dropped;
    EXPECT_FALSE(registry_->Commit(&dropped));
    store_.fail_flush.reset();
    return dropped;
  }
  std::vector<std::string> Notices(const std::string& session) {
    std::vector<std::string> ids;
    for (const TaskRecord& task : registry_->TakeNotices(session))
      ids.push_back(task.id.ToString());
    return ids;
  }

  TaskId Id(const std::string& text) { return *TaskId::Parse(text); }
};

TEST_F(TaskRegistryBatchTest, ATaskStartedInAFailedBatchNeverExists) {
  EXPECT_EQ(StartRunning(), "shell-1");
  EXPECT_EQ(Start(), "shell-2");
  EXPECT_EQ(FailedCommit(), std::vector<TaskId>{Id("shell-2")});
  EXPECT_EQ(executor_.started.size(), 1u) << "a spawn left for shell-2";
  EXPECT_FALSE(store_.tasks.contains(Id("shell-2")));
  EXPECT_FALSE(store_.HasPendingWrites());
  EXPECT_EQ(registry_->live_count(), 1u);
  auto gone = registry_->Get("shell-2", "");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  size_t hidden = 0;
  EXPECT_EQ(registry_->List("", true, &hidden)->size(), 1u);

  // Its number is not handed out again: a client may have seen it in a
  // log line, never in a reply.
  EXPECT_EQ(StartRunning(), "shell-3");
  EXPECT_EQ(executor_.started.size(), 2u);
  EXPECT_EQ(executor_.started.back().id, Id("shell-3"));
}

TEST_F(TaskRegistryBatchTest, AnEndInAFailedBatchStaysAndIsCommittedLater) {
  std::string a = StartRunning();
  executor_.Exit(Id(a), 3);
  FailedCommit();
  EXPECT_EQ(registry_->Get(a, "")->detail, "exit code: 3");
  EXPECT_EQ(store_.flushed.at(Id(a)).status, TaskStatus::kRunning);
  EXPECT_TRUE(store_.HasPendingWrites());
  FailedCommit();  // Still full: still kept.
  Commit();
  EXPECT_EQ(store_.flushed.at(Id(a)).status, TaskStatus::kFailed);
  EXPECT_EQ(store_.flushed.at(Id(a)).detail, "exit code: 3");
}

TEST_F(TaskRegistryBatchTest, AConsumingReadInAFailedBatchIsReadAgain) {
  std::string a = StartRunning("alice");
  executor_.output_sizes[Id(a)] = 10;
  EXPECT_EQ(registry_->Read(a, "alice", ReadMode::kNew)->to, 10u);
  Commit();
  executor_.output_sizes[Id(a)] = 25;
  EXPECT_EQ(registry_->Read(a, "alice", ReadMode::kNew)->from, 10u);
  FailedCommit();
  auto again = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(again->from, 10u);
  EXPECT_EQ(again->to, 25u);
  Commit();
  EXPECT_EQ(registry_->Read(a, "alice", ReadMode::kNew)->from, 25u);
}

TEST_F(TaskRegistryBatchTest, NoticesAndSeenEndsOfAFailedBatchComeBack) {
  std::string a = StartRunning("alice");
  std::string b = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  executor_.Exit(Id(b), 1);
  Commit();

  EXPECT_EQ(Notices("alice"), (std::vector<std::string>{a, b}));
  FailedCommit();
  EXPECT_TRUE(registry_->Get(a, "alice"));  // Sees a's end.
  FailedCommit();
  EXPECT_EQ(Notices("alice"), (std::vector<std::string>{a, b}));
  FailedCommit();

  EXPECT_TRUE(registry_->Get(a, "alice"));
  Commit();
  EXPECT_TRUE(store_.flushed.at(Id(a)).end_seen);
  EXPECT_EQ(Notices("alice"), std::vector<std::string>{b});
  Commit();
  EXPECT_TRUE(Notices("alice").empty());
  EXPECT_TRUE(store_.flushed.at(Id(b)).notice_delivered);
}

TEST_F(TaskRegistryBatchTest, AKillInAFailedBatchIsTakenBack) {
  std::string a = StartRunning("alice");
  EXPECT_EQ(*registry_->Kill(a, "alice", "why", milliseconds(100)),
            KillOutcome::kRequested);
  FailedCommit();
  EXPECT_TRUE(executor_.kills.empty());
  auto task = registry_->Get(a, "alice");
  EXPECT_EQ(task->status, TaskStatus::kRunning);
  EXPECT_EQ(task->kill_reason, "");
  EXPECT_FALSE(task->end_seen);
  EXPECT_FALSE(store_.HasPendingWrites());
  Commit();
  EXPECT_TRUE(executor_.kills.empty());

  EXPECT_EQ(*registry_->Kill(a, "alice", "why", milliseconds(100)),
            KillOutcome::kRequested);
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(store_.flushed.at(Id(a)).kill_reason, "why");
}

TEST_F(TaskRegistryBatchTest, AnExpiredLeaseStillKillsOnceACommitWorks) {
  registry_->Attach("mcp");
  std::string mine = StartRunning("mcp");
  registry_->Detach("mcp");
  time_.Advance(std::chrono::minutes(6));
  FailedCommit();
  EXPECT_TRUE(executor_.kills.empty());
  EXPECT_EQ(registry_->Get(mine, "mcp")->status, TaskStatus::kStopping);
  Commit();
  ASSERT_EQ(executor_.kills.size(), 1u);
  EXPECT_EQ(executor_.kills[0].first, Id(mine));
}

TEST_F(TaskRegistryBatchTest, AWaitOnATaskThatWasNotSavedGetsTheError) {
  std::string a = Start();
  std::optional<WaitResult> answer;
  ASSERT_TRUE(registry_->Wait({a}, "", false, std::nullopt,
                              [&](WaitResult result) { answer = result; }));
  EXPECT_FALSE(answer);
  FailedCommit();
  ASSERT_TRUE(answer);
  ASSERT_TRUE(answer->error);
  EXPECT_EQ(answer->error->code, ErrorCode::kIo);
  EXPECT_NE(answer->error->message.find(a), std::string::npos);
  EXPECT_EQ(time_.pending_timers(), 0u);
}

// A wait told of a plain task's end before the commit (the executor keeps
// the exit record) has seen it, whatever the commit does.
TEST_F(TaskRegistryBatchTest, AnEndToldBeforeTheCommitStaysSeen) {
  std::string a = StartRunning("alice");
  std::string b = StartRunning("alice");
  for (const std::string& id : {a, b}) {
    ASSERT_TRUE(
        registry_->Wait({id}, "alice", false, std::nullopt, [](WaitResult) {}));
  }
  executor_.Exit(Id(a), 0);
  executor_.Exit(Id(b), 0);
  registry_->KeepSeen({Id(a)});  // Only a's reply went early.
  FailedCommit();
  EXPECT_EQ(Notices("alice"), std::vector<std::string>{b});
  Commit();
  EXPECT_TRUE(store_.flushed.at(Id(a)).end_seen);
  EXPECT_FALSE(store_.flushed.at(Id(b)).end_seen);
}

TEST_F(TaskRegistryBatchTest, ACrashAfterAFailedCommitLosesNoToldTask) {
  std::string a = StartRunning();
  std::string b = Start();
  FailedCommit();
  store_.LoseUnflushed();
  Reset();
  ASSERT_TRUE(registry_->Recover());
  EXPECT_EQ(executor_.adopted.size(), 1u);
  EXPECT_EQ(executor_.adopted[0].id, Id(a));
  EXPECT_FALSE(registry_->Get(b, ""));
}

// The audit trail (doc/audit.md): a record in the batch of its action.
// A failed commit takes back a record whose action it takes back, and
// keeps one whose action stands (a message already delivered) for the
// next commit.
TEST_F(TaskRegistryBatchTest, AFailedCommitTakesBackOnlyTheAuditOfWhatItUndid) {
  std::string id = Start("build");
  registry_->audit().Record({.action = "run", .task = id, .detail = "true"},
                            /*with_batch=*/true);
  registry_->audit().Record(
      {.action = "send", .task = "agent-1", .detail = "m-1"},
      /*with_batch=*/false);
  FailedCommit();
  EXPECT_TRUE(store_.audit.empty());
  // The store drops a failed batch whole (DropBatch): what stays is
  // written again, and stays through a second failure too.
  FailedCommit();
  Commit();
  ASSERT_EQ(store_.audit.size(), 1u);
  EXPECT_EQ(store_.audit[0].action, "send");
  EXPECT_EQ(store_.audit[0].at_ms, time_.WallNowMillis());
}

// A session's lease, marked in a batch whose commit fails, is marked
// again in the next: a restarted batond still starts its lease.
TEST_F(TaskRegistryBatchTest, ALeaseMarkedInAFailedBatchIsStoredLater) {
  registry_->Attach("alice");
  FailedCommit();
  FailedCommit();
  Commit();
  EXPECT_EQ(*store_.LoadLeasedSessions(), std::vector<std::string>{"alice"});
}

TEST_F(TaskRegistryBatchTest, AnAuditDetailIsOneLineAndCutOnACharacter) {
  std::string long_text = "echo one\ntwo " + std::string(400, 'x');
  registry_->audit().Record({.action = "run", .detail = long_text},
                            /*with_batch=*/true);
  registry_->audit().Record(
      {.action = "run", .detail = std::string(299, 'x') + "é"},
      /*with_batch=*/true);
  Commit();
  ASSERT_EQ(store_.audit.size(), 2u);
  const std::string& cut = store_.audit[0].detail;
  EXPECT_EQ(cut.substr(0, 14), "echo one two x");
  EXPECT_EQ(cut.size(), kMaxAuditDetailBytes + std::string("…").size());
  EXPECT_EQ(cut.substr(cut.size() - 3), "…");
  // The 2-byte "é" would be cut in half at 300 bytes: it goes whole.
  EXPECT_EQ(store_.audit[1].detail, std::string(299, 'x') + "…");
}

}  // namespace
}  // namespace baton
