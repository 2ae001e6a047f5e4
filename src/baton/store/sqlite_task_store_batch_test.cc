// SqliteTaskStore's batches: after a failed Flush, DropBatch takes back
// what the last batch did, all of it, and keeps what earlier failed
// batches left buffered (core/ports.h; doc/schema.md, "Writes").
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "baton/store/sqlite_task_store.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

TaskRecord BatchTask(int64_t number, TaskStatus status) {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, number};
  task.spec.kind = TaskKind::kShell;
  task.spec.owner = "a";
  task.spec.shell_command = "make";
  task.spec.cwd = "/src";
  task.status = status;
  // Larger than the files so far, so that its flush must grow them.
  task.detail = std::string(4 << 20, 'x');
  return task;
}

class SqliteTaskStoreBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "baton_batch_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/baton.db";
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::unique_ptr<SqliteTaskStore> Open() {
    auto store = SqliteTaskStore::Open(path_);
    EXPECT_TRUE(store.has_value()) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }

  // A real failed flush: RLIMIT_FSIZE makes the WAL append fail with EFBIG
  // (root is subject to it too), as a full disk would with ENOSPC.
  Status FlushWithNoRoom() {
    rlimit old_limit{};
    getrlimit(RLIMIT_FSIZE, &old_limit);
    rlimit limit = old_limit;
    limit.rlim_cur =
        std::max(fs::file_size(path_), fs::exists(path_ + "-wal")
                                           ? fs::file_size(path_ + "-wal")
                                           : uintmax_t{0});
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &limit);
    auto flushed = store_->Flush();
    setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    return flushed;
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<SqliteTaskStore> store_;
};

TEST_F(SqliteTaskStoreBatchTest, DroppingABatchThatMadeATaskLeavesNothing) {
  ASSERT_EQ(*store_->NextTaskNumber(TaskKind::kShell), 1);
  ASSERT_TRUE(store_->PutTask(BatchTask(1, TaskStatus::kQueued)));
  ASSERT_FALSE(FlushWithNoRoom());
  store_->DropBatch();
  EXPECT_EQ(*store_->GetTask(TaskId{TaskKind::kShell, 1}), std::nullopt);
  EXPECT_TRUE(store_->ListTasks({.owner = "a"})->empty());
  EXPECT_FALSE(store_->HasPendingWrites());
  // The number stays used in this store.
  EXPECT_EQ(*store_->NextTaskNumber(TaskKind::kShell), 2);
}

TEST_F(SqliteTaskStoreBatchTest, DropKeepsWhatEarlierBatchesLeftBuffered) {
  const TaskId one{TaskKind::kShell, 1};
  const TaskId two{TaskKind::kShell, 2};
  ASSERT_EQ(*store_->NextTaskNumber(TaskKind::kShell), 1);
  TaskRecord running = BatchTask(1, TaskStatus::kRunning);
  running.detail.clear();
  ASSERT_TRUE(store_->PutTask(running));
  ASSERT_TRUE(store_->SetCursor(one, "a", 5));
  ASSERT_TRUE(store_->Flush());

  // A batch that fails: an end, which stays buffered.
  TaskRecord ended = BatchTask(1, TaskStatus::kFailed);
  ASSERT_TRUE(store_->PutTask(ended));
  ASSERT_FALSE(FlushWithNoRoom());
  // The next batch fails too, and is dropped: its task, cursor, session,
  // queue, budget and audit record go; the end of the batch before stays.
  ASSERT_EQ(*store_->NextTaskNumber(TaskKind::kShell), 2);
  ASSERT_TRUE(store_->PutTask(BatchTask(2, TaskStatus::kQueued)));
  ASSERT_TRUE(store_->SetCursor(one, "a", 9));
  TaskRecord seen = ended;
  seen.end_seen = true;
  ASSERT_TRUE(store_->PutTask(seen));
  ASSERT_TRUE(store_->MarkSessionLeased("s"));
  ASSERT_TRUE(store_->PutQueue({.name = "q", .max_running = 1}));
  ASSERT_TRUE(store_->PutSessionBudget("s", {.max_turns = 3}));
  uint64_t key = 0;
  ASSERT_TRUE(store_->AppendAudit({.action = "kill", .task = "shell-1"}, &key));
  ASSERT_FALSE(FlushWithNoRoom());
  store_->DropBatch();
  EXPECT_TRUE(store_->LoadLeasedSessions()->empty());
  EXPECT_TRUE(store_->LoadQueues()->empty());
  EXPECT_TRUE(store_->LoadSessionBudgets()->empty());
  EXPECT_TRUE(store_->ListAudit({})->empty());

  EXPECT_EQ(*store_->GetTask(two), std::nullopt);
  auto task = store_->GetTask(one);
  ASSERT_TRUE(task && *task);
  EXPECT_EQ((*task)->status, TaskStatus::kFailed);
  EXPECT_FALSE((*task)->end_seen);
  EXPECT_EQ(*store_->GetCursor(one, "a"), 5u);
  EXPECT_TRUE(store_->HasPendingWrites());

  ASSERT_TRUE(store_->Flush());
  store_ = Open();
  task = store_->GetTask(one);
  ASSERT_TRUE(task && *task);
  EXPECT_EQ((*task)->status, TaskStatus::kFailed);
  EXPECT_FALSE((*task)->end_seen);
  EXPECT_EQ(*store_->GetTask(two), std::nullopt);
  EXPECT_EQ(*store_->GetCursor(one, "a"), 5u);
  // shell-2 never existed and no reply named it: a restarted store may
  // hand its number out (doc/schema.md, "counters").
  EXPECT_EQ(*store_->NextTaskNumber(TaskKind::kShell), 2);
}

}  // namespace
}  // namespace baton
