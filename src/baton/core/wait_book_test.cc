#include "baton/core/wait_book.h"

#include <gtest/gtest.h>

#include "tests/support/fakes.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

TaskId Shell(int64_t number) {
  return TaskId{TaskKind::kShell, number};
}

// The book alone, with an answer that lists the ended entries (the
// registry reads their records there) and the answers it got.
class WaitBookTest : public ::testing::Test {
 protected:
  WaitId Add(std::vector<WaitBook::Entry> entries, bool all = false,
             std::optional<milliseconds> timeout = std::nullopt,
             bool turns = false) {
    WaitBook::Waiter waiter;
    waiter.session = "s";
    waiter.all = all;
    waiter.turns = turns;
    waiter.done = [this](WaitResult result) {
      answers_.push_back(std::move(result));
    };
    return book_.Add(std::move(waiter), entries, timeout);
  }
  // A live task that has neither ended nor asked.
  static WaitBook::Entry Running(int64_t number) {
    return {Shell(number), /*pending=*/true, /*live=*/true};
  }
  // Names of the tasks an answer reports as ended, in order.
  static std::vector<std::string> Ended(const WaitResult& result) {
    std::vector<std::string> names;
    for (const TaskRecord& task : result.ended)
      names.push_back(task.id.ToString());
    return names;
  }
  TaskRecord Record(int64_t number) {
    TaskRecord task;
    task.id = Shell(number);
    task.status = TaskStatus::kCompleted;
    return task;
  }

  testing::FakeTimeline time_;
  std::vector<WaitResult> answers_;
  WaitBook book_{
      &time_, &time_,
      [](const WaitBook::Waiter& waiter, TaskRecord* ended,
         WaitResult& result) {
        for (size_t i = 0; i < waiter.ids.size(); ++i) {
          if (waiter.pending[i])
            continue;
          TaskRecord task;
          task.id = waiter.ids[i];
          result.ended.push_back(ended && ended->id == task.id ? *ended : task);
        }
      }};
};

TEST_F(WaitBookTest, AnyAnswersAtTheFirstEndAllAtTheLast) {
  Add({Running(1), Running(2)});
  Add({Running(1), Running(2)}, /*all=*/true);
  EXPECT_EQ(book_.open(), 2u);
  TaskRecord first = Record(2);
  book_.TaskChanged(first.id, &first);
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(Ended(answers_[0]), std::vector<std::string>{"shell-2"});
  EXPECT_EQ(answers_[0].StillRunning(), std::vector<TaskId>{Shell(1)});
  TaskRecord second = Record(1);
  book_.TaskChanged(second.id, &second);
  ASSERT_EQ(answers_.size(), 2u);
  EXPECT_EQ(Ended(answers_[1]),
            (std::vector<std::string>{"shell-1", "shell-2"}));
  EXPECT_EQ(answers_[1].still_running_count(), 0u);
  EXPECT_EQ(book_.open(), 0u);
}

TEST_F(WaitBookTest, ATaskNamedTwiceCountsOnceAndEndedOnesAnswerAtOnce) {
  Add({Running(1), Running(1)}, /*all=*/true);
  TaskRecord one = Record(1);
  book_.TaskChanged(one.id, &one);
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(Ended(answers_[0]), std::vector<std::string>{"shell-1"});
  // Nothing left to happen: answered inside Add, never blocked.
  Add({{Shell(3), /*pending=*/false, /*live=*/false}});
  EXPECT_EQ(answers_.size(), 2u);
}

TEST_F(WaitBookTest, TimeoutsCancelsAndAnsweredQuestions) {
  Add({Running(1)}, false, milliseconds(500));
  WaitId cancelled = Add({Running(1)}, false, milliseconds(500));
  book_.Cancel(cancelled);
  time_.Advance(milliseconds(499));
  EXPECT_TRUE(answers_.empty());
  time_.Advance(milliseconds(1));
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_TRUE(answers_[0].timed_out);
  EXPECT_EQ(time_.pending_timers(), 0u);

  // A question wakes a wait-all's count; its answer makes it pending
  // again, so the wait goes on until the end.
  Add({Running(1), Running(2)}, /*all=*/true);
  book_.TaskChanged(Shell(1), nullptr);
  book_.TaskRunsAgain(Shell(1));
  TaskRecord two = Record(2);
  book_.TaskChanged(two.id, &two);
  EXPECT_EQ(answers_.size(), 1u);
  TaskRecord one = Record(1);
  book_.TaskChanged(one.id, &one);
  EXPECT_EQ(answers_.size(), 2u);
}

TEST_F(WaitBookTest, TurnsAnswerOnlyWaitsThatAskForThemAndFailuresAnswerAll) {
  Add({Running(1)}, false, std::nullopt, /*turns=*/true);
  Add({Running(1)});
  book_.TurnEnded(Shell(1), "done with part one");
  ASSERT_EQ(answers_.size(), 1u);
  ASSERT_EQ(answers_[0].turns.size(), 1u);
  EXPECT_EQ(answers_[0].turns[0].second, "done with part one");

  Add({Running(1)}, false, milliseconds(1000));
  book_.Fail(Shell(1), Error{ErrorCode::kIo, "disk full"});
  ASSERT_EQ(answers_.size(), 3u);
  for (size_t i : {1, 2}) {
    ASSERT_TRUE(answers_[i].error);
    EXPECT_EQ(answers_[i].error->message, "disk full");
  }
  EXPECT_EQ(book_.open(), 0u);
  EXPECT_EQ(time_.pending_timers(), 0u);
}

}  // namespace
}  // namespace baton
