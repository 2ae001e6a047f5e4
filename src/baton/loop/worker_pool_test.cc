#include "baton/loop/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace baton {
namespace {

// Turns `loop` until `done` holds (or two seconds passed).
bool TurnUntil(EventLoop& loop, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done() && std::chrono::steady_clock::now() < deadline)
    (void)loop.RunOnce(std::chrono::milliseconds(10));
  return done();
}

TEST(WorkerPoolTest, JobsRunOffTheLoopAndTheirEndsOnIt) {
  EventLoop loop;
  WorkerPool pool(&loop, 2, WorkerPool::AtExit::kDropQueued);
  const std::thread::id loop_thread = std::this_thread::get_id();
  std::atomic<int> off_loop = 0;
  int done_on_loop = 0;
  for (int i = 0; i < 10; ++i) {
    pool.Post(
        [&] {
          if (std::this_thread::get_id() != loop_thread)
            ++off_loop;
        },
        [&] {
          if (std::this_thread::get_id() == loop_thread)
            ++done_on_loop;
        });
  }
  EXPECT_EQ(pool.pending(), 10u);
  ASSERT_TRUE(TurnUntil(loop, [&] { return done_on_loop == 10; }));
  EXPECT_EQ(off_loop, 10);
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(WorkerPoolTest, AtExitQueuedJobsRunOrAreDroppedAndNoEndIsCalled) {
  for (auto at_exit :
       {WorkerPool::AtExit::kRunQueued, WorkerPool::AtExit::kDropQueued}) {
    EventLoop loop;
    std::atomic<int> ran = 0;
    std::atomic<bool> started = false, go = false;
    int ends = 0;
    std::thread release;
    {
      WorkerPool pool(&loop, 1, at_exit);
      // The first job holds the thread until the pool is being destroyed.
      pool.Post(
          [&] {
            started = true;
            while (!go)
              std::this_thread::yield();
            ++ran;
          },
          [&] { ++ends; });
      for (int i = 0; i < 3; ++i)
        pool.Post([&] { ++ran; }, [&] { ++ends; });
      while (!started)
        std::this_thread::yield();
      release = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        go = true;
      });
    }
    release.join();
    EXPECT_EQ(ran, at_exit == WorkerPool::AtExit::kRunQueued ? 4 : 1);
    EXPECT_EQ(ends, 0);
  }
}

}  // namespace
}  // namespace baton
