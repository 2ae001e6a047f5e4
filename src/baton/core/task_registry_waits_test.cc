// TaskRegistry's waits, notices and reads (task_registry_waits.cc).
#include "baton/core/task_registry_test_fixture.h"

namespace baton {
namespace registry_test {
namespace {

TEST_F(TaskRegistryTest, WaitAnyReturnsAtTheFirstEndWithTheRestRunning) {
  std::string a = StartRunning(), b = StartRunning(), c = StartRunning();
  std::optional<WaitResult> result;
  ASSERT_TRUE(registry_->Wait({a, b, c}, "", false, std::nullopt,
                              [&](WaitResult r) { result = r; }));
  EXPECT_FALSE(result);
  executor_.Exit(Id(b), 0);
  ASSERT_TRUE(result);
  ASSERT_EQ(result->ended.size(), 1u);
  EXPECT_EQ(result->ended[0].id.ToString(), b);
  EXPECT_EQ(result->still_running_count(), 2u);
  EXPECT_FALSE(result->timed_out);
}

TEST_F(TaskRegistryTest, WaitAllWaitsForEveryTask) {
  std::string a = StartRunning(), b = StartRunning();
  std::optional<WaitResult> result;
  ASSERT_TRUE(registry_->Wait({a, b}, "", true, std::nullopt,
                              [&](WaitResult r) { result = r; }));
  executor_.Exit(Id(a), 0);
  EXPECT_FALSE(result);
  executor_.Exit(Id(b), 1);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->ended.size(), 2u);
}

TEST_F(TaskRegistryTest, WaitOnAnEndedTaskAnswersAtOnce) {
  std::string a = StartRunning();
  executor_.Exit(Id(a), 0);
  std::optional<WaitResult> result;
  ASSERT_TRUE(registry_->Wait({a}, "", false, seconds(5),
                              [&](WaitResult r) { result = r; }));
  ASSERT_TRUE(result);
  EXPECT_EQ(time_.pending_timers(), 0u);
}

TEST_F(TaskRegistryTest, WaitTimesOutWithTheStateOnly) {
  std::string a = StartRunning();
  std::optional<WaitResult> result;
  int calls = 0;
  ASSERT_TRUE(registry_->Wait({a}, "", false, seconds(2), [&](WaitResult r) {
    ++calls;
    result = r;
  }));
  time_.Advance(milliseconds(1999));
  EXPECT_FALSE(result);
  time_.Advance(milliseconds(1));
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->timed_out);
  EXPECT_EQ(result->still_running_count(), 1u);
  EXPECT_TRUE(result->ended.empty());
  executor_.Exit(Id(a), 0);  // Must not call the finished wait again.
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(result->timed_out);
  EXPECT_TRUE(result->ended.empty());
}

TEST_F(TaskRegistryTest, CancelledWaitIsNeverCalled) {
  std::string a = StartRunning();
  bool called = false;
  auto wait = registry_->Wait({a}, "", false, seconds(1),
                              [&](WaitResult) { called = true; });
  registry_->CancelWait(*wait);
  executor_.Exit(Id(a), 0);
  time_.Advance(seconds(2));
  EXPECT_FALSE(called);
}

TEST_F(TaskRegistryTest, AnsweredAndCancelledWaitsLeaveNothingBehind) {
  std::string a = StartRunning(), b = StartRunning(), c = StartRunning();
  int any_calls = 0;
  std::optional<WaitResult> any;
  ASSERT_TRUE(
      registry_->Wait({a, b, c, b}, "", false, std::nullopt, [&](WaitResult r) {
        ++any_calls;
        any = std::move(r);
      }));
  bool cancelled_called = false;
  auto cancelled =
      registry_->Wait({b, c}, "", true, std::nullopt,
                      [&](WaitResult) { cancelled_called = true; });
  registry_->CancelWait(*cancelled);
  executor_.Exit(Id(a), 0);
  ASSERT_TRUE(any);
  ASSERT_EQ(any->ended.size(), 1u);
  EXPECT_EQ(any->ended[0].id.ToString(), a);
  // Each id once, in the order asked.
  ASSERT_EQ(any->still_running_count(), 2u);
  std::vector<TaskId> running = any->StillRunning();
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].ToString(), b);
  EXPECT_EQ(running[1].ToString(), c);

  // A new wait on a task the old ones named sees only itself.
  std::optional<WaitResult> later;
  ASSERT_TRUE(registry_->Wait({c, b}, "", true, std::nullopt,
                              [&](WaitResult r) { later = std::move(r); }));
  executor_.Exit(Id(b), 0);
  EXPECT_FALSE(later);
  executor_.Exit(Id(c), 1);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->ended.size(), 2u);
  EXPECT_EQ(later->ended[0].id.ToString(), c);
  EXPECT_EQ(later->ended[0].status, TaskStatus::kFailed);
  EXPECT_EQ(later->ended[1].id.ToString(), b);
  EXPECT_EQ(later->still_running_count(), 0u);
  EXPECT_TRUE(later->StillRunning().empty());
  EXPECT_EQ(any_calls, 1);
  EXPECT_FALSE(cancelled_called);
}

TEST_F(TaskRegistryTest, WaitForAllAnswersWhenTheLastTaskEnds) {
  std::string a = StartRunning(), b = StartRunning(), c = StartRunning();
  executor_.Exit(Id(c), 0);
  std::vector<TaskId> killed = registry_->KillAll("daemon stopped");
  ASSERT_EQ(killed.size(), 2u);
  bool done = false;
  registry_->WaitForAll({Id(a), Id(b), Id(c)}, [&] { done = true; });
  executor_.Exit(Id(a), 0, ExitCause::kKilled);
  EXPECT_FALSE(done);
  executor_.Exit(Id(b), 0, ExitCause::kKilled);
  EXPECT_TRUE(done);

  bool none_live = false;
  registry_->WaitForAll({Id(a)}, [&] { none_live = true; });
  EXPECT_TRUE(none_live);
}

TEST_F(TaskRegistryTest, ConsumingReadsArePerSessionOffsetReadsConsumeNothing) {
  std::string a = StartRunning("alice");
  executor_.output_sizes[Id(a)] = 10;
  auto first = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(first->from, 0u);
  EXPECT_EQ(first->to, 10u);
  executor_.output_sizes[Id(a)] = 25;
  auto peek = registry_->Read(a, "alice", ReadMode::kOffset, 5);
  EXPECT_EQ(peek->from, 5u);
  EXPECT_EQ(peek->to, 25u);
  auto second = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(second->from, 10u);
  EXPECT_EQ(second->to, 25u);
  auto third = registry_->Read(a, "alice", ReadMode::kNew);
  EXPECT_EQ(third->from, 25u);
  EXPECT_EQ(third->to, 25u);
  EXPECT_EQ(registry_->Read(a, "alice", ReadMode::kAll)->from, 0u);
}

TEST_F(TaskRegistryTest, NoticeIsDeliveredOnce) {
  std::string a = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  EXPECT_TRUE(registry_->TakeNotices("bob").empty());
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(NoticeText(notices[0]), a + " completed (exit code: 0)");
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
  Reset();  // Delivered is durable.
  ASSERT_TRUE(registry_->Recover());
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
}

TEST_F(TaskRegistryTest, NoNoticeWhenTheOwnerAlreadySawTheEnd) {
  std::string waited = StartRunning("alice");
  std::string read = StartRunning("alice");
  std::string killed = StartRunning("alice");
  std::string unseen = StartRunning("alice");
  ASSERT_TRUE(registry_->Wait({waited}, "alice", false, std::nullopt,
                              [](WaitResult) {}));
  executor_.Exit(Id(waited), 0);
  executor_.Exit(Id(read), 0);
  ASSERT_TRUE(registry_->Read(read, "alice", ReadMode::kNew));
  ASSERT_TRUE(registry_->Kill(killed, "alice", "", std::nullopt));
  executor_.Exit(Id(killed), 0, ExitCause::kKilled);
  executor_.Exit(Id(unseen), 0);
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].id.ToString(), unseen);
}

// Issue 13: a question is noticed like an end, once; a wait, a read or a
// status that showed it counts as told. The next question is news again.
TEST_F(TaskRegistryTest, AQuestionIsNoticedOnceUntilTheNextOne) {
  std::string asks = StartRunning("alice"), looked = StartRunning("alice");
  registry_->SetWaiting(Id(asks), true);
  registry_->SetWaiting(Id(looked), true);
  ASSERT_TRUE(registry_->Get(looked, "alice"));  // A status tells it.
  EXPECT_TRUE(registry_->TakeNotices("bob").empty());
  auto notices = registry_->TakeNotices("alice");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].id.ToString(), asks);
  EXPECT_EQ(NoticeText(notices[0]), asks + " waiting (asks a question)");
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
  Commit();
  Reset();  // Told is durable.
  ASSERT_TRUE(registry_->Recover());
  EXPECT_TRUE(registry_->TakeNotices("alice").empty());
  // Answered, then a new question: news again; its end is news too.
  registry_->SetWaiting(Id(asks), false);
  registry_->SetWaiting(Id(asks), true);
  EXPECT_EQ(registry_->TakeNotices("alice").size(), 1u);
  executor_.Exit(Id(asks), 0);
  EXPECT_EQ(registry_->TakeNotices("alice").size(), 1u);
}

// Issue 13: a wait means "tell me something new". After collecting one
// task, waiting again on the same list blocks until another ends; when
// every one ended and was told, it answers at once with all of them.
TEST_F(TaskRegistryTest, AWaitReturnsOnlyForNews) {
  std::string a = StartRunning("alice"), b = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  std::optional<WaitResult> first;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { first = std::move(r); }));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->ended.size(), 1u);
  std::optional<WaitResult> again;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { again = std::move(r); }));
  EXPECT_FALSE(again) << "a was collected: not news";
  executor_.Exit(Id(b), 1);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->ended.size(), 1u);
  EXPECT_EQ(again->ended[0].id.ToString(), b);
  ASSERT_EQ(again->already_told.size(), 1u);
  EXPECT_EQ(again->already_told[0].ToString(), a);
  // Everything ended and told: at once, with all.
  std::optional<WaitResult> all_told;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { all_told = std::move(r); }));
  ASSERT_TRUE(all_told);
  EXPECT_EQ(all_told->ended.size(), 2u);
  EXPECT_TRUE(all_told->already_told.empty());
}

// A wait sent again after its batond died (news_since_ms) gets an end told
// since its first send once more: the lost answer may have told it. An end
// told before that stays collected.
TEST_F(TaskRegistryTest, AResentWaitIsToldAgainWhatTheLostAnswerMayHaveTold) {
  std::string a = StartRunning("alice"), b = StartRunning("alice");
  executor_.Exit(Id(a), 0);  // Ends at wall time 2000 (FakeExecutor).
  std::optional<WaitResult> told;
  ASSERT_TRUE(registry_->Wait({a, b}, "alice", false, std::nullopt,
                              [&](WaitResult r) { told = std::move(r); }));
  ASSERT_TRUE(told && told->ended.size() == 1u);
  // The answer was lost: the resend of a wait first sent before the end.
  std::optional<WaitResult> resent;
  ASSERT_TRUE(registry_->Wait(
      {a, b}, "alice", false, std::nullopt,
      [&](WaitResult r) { resent = std::move(r); }, false, 1500));
  ASSERT_TRUE(resent) << "a resent wait lost an end told meanwhile";
  ASSERT_EQ(resent->ended.size(), 1u);
  EXPECT_EQ(resent->ended[0].id.ToString(), a);
  // A wait first sent after the end (and its telling) blocks as before.
  std::optional<WaitResult> later;
  ASSERT_TRUE(registry_->Wait(
      {a, b}, "alice", false, std::nullopt,
      [&](WaitResult r) { later = std::move(r); }, false, 2500));
  EXPECT_FALSE(later) << "a was collected before this wait began";
}

// A question told by a wait is not news to the next wait; the task's end,
// or a new question, is.
TEST_F(TaskRegistryTest, AToldQuestionDoesNotEndTheNextWait) {
  std::string asks = StartRunning("alice"), other = StartRunning("alice");
  registry_->SetWaiting(Id(asks), true);
  std::optional<WaitResult> first, second;
  ASSERT_TRUE(registry_->Wait({asks, other}, "alice", false, std::nullopt,
                              [&](WaitResult r) { first = std::move(r); }));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->ended[0].status, TaskStatus::kWaiting);
  ASSERT_TRUE(registry_->Wait({asks, other}, "alice", false, std::nullopt,
                              [&](WaitResult r) { second = std::move(r); }));
  EXPECT_FALSE(second);
  registry_->SetWaiting(Id(asks), false);
  registry_->SetWaiting(Id(asks), true);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->ended[0].id.ToString(), asks);
}

// A wait that asked for turns returns at an agent's turn end, with the
// turn's text; other waits do not.
TEST_F(TaskRegistryTest, ATurnsWaitReturnsAtATurnsEnd) {
  std::string agent = StartRunning("alice");
  std::optional<WaitResult> turns, ends;
  ASSERT_TRUE(registry_->Wait(
      {agent}, "alice", false, std::nullopt,
      [&](WaitResult r) { turns = std::move(r); }, /*turns=*/true));
  ASSERT_TRUE(registry_->Wait({agent}, "alice", false, std::nullopt,
                              [&](WaitResult r) { ends = std::move(r); }));
  registry_->TurnEnded(Id(agent), "done with step 1");
  ASSERT_TRUE(turns);
  EXPECT_FALSE(ends);
  ASSERT_EQ(turns->ended.size(), 1u);
  EXPECT_EQ(turns->ended[0].status, TaskStatus::kRunning);
  ASSERT_EQ(turns->turns.size(), 1u);
  EXPECT_EQ(turns->turns[0].second, "done with step 1");
  EXPECT_EQ(turns->still_running_count(), 0u);
  executor_.Exit(Id(agent), 0);
  EXPECT_TRUE(ends);
}

TEST_F(TaskRegistryTest, NoticesSurviveARestart) {
  std::string a = StartRunning("alice");
  executor_.Exit(Id(a), 0);
  Reset();
  ASSERT_TRUE(registry_->Recover());
  EXPECT_EQ(registry_->TakeNotices("alice").size(), 1u);
}

}  // namespace
}  // namespace registry_test
}  // namespace baton
