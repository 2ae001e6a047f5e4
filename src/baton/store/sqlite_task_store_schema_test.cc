// SqliteTaskStore's schema: migrations from each older version, and the
// databases it refuses or reports as damaged, untouched.
#include "baton/store/sqlite_task_store_test_fixture.h"

namespace baton {
namespace store_test {
namespace {

TEST_F(SqliteTaskStoreTest, ASchema2DatabaseGainsQueuesAndKeepsItsTasks) {
  TaskRecord task = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kCompleted);
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutTask(task));
    ASSERT_TRUE(store->Flush());
  }
  // As schema 2 left it: no queues table, version 2.
  RawExec(path_,
          "DROP TABLE queues; DROP TABLE session_budgets; DROP TABLE audit; "
          "DROP INDEX tasks_ended; DROP INDEX tasks_labels; "
          "DROP INDEX tasks_ended_by_owner; "
          "DROP TABLE lands; PRAGMA user_version = 2;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  ExpectSameTask(**store->GetTask(task.id), task);
  ASSERT_TRUE(store->PutQueue({.name = "q", .max_running = 1}));
  ASSERT_TRUE(store->Flush());
  EXPECT_EQ(store->LoadQueues()->size(), 1u);
}

TEST_F(SqliteTaskStoreTest, ASchema4DatabaseGainsSessionBudgets) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutQueue({.name = "q", .max_running = 1}));
    ASSERT_TRUE(store->Flush());
  }
  RawExec(path_,
          "DROP TABLE session_budgets; DROP TABLE audit; "
          "DROP INDEX tasks_ended; DROP INDEX tasks_labels; "
          "DROP INDEX tasks_ended_by_owner; "
          "DROP TABLE lands; PRAGMA user_version = 4;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(store->LoadQueues()->size(), 1u);
  EXPECT_TRUE(store->LoadSessionBudgets()->empty());
  ASSERT_TRUE(store->PutSessionBudget("s", {.max_turns = 1}));
  ASSERT_TRUE(store->Flush());
}

// A schema-7 history gains the index its counts are ranges of, and counts
// by it at once.
TEST_F(SqliteTaskStoreTest, ASchema7DatabaseGainsTheEndedByOwnerIndex) {
  {
    auto store = OpenStore();
    for (int64_t n = 1; n <= 3; ++n) {
      TaskRecord task = MakeTask(TaskKind::kShell, n, n == 3 ? "a" : "",
                                 TaskStatus::kCompleted);
      task.ended_ms = 100 * n;
      ASSERT_TRUE(store->PutTask(task));
    }
    ASSERT_TRUE(store->Flush());
  }
  RawExec(path_,
          "DROP INDEX tasks_ended_by_owner; DROP TABLE lands; "
          "PRAGMA user_version = 7;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(RawQuery(path_,
                     "SELECT count(*) FROM sqlite_schema "
                     "WHERE name = 'tasks_ended_by_owner'"),
            "1");
  auto page = store->PageEnded({.owner = "a", .counted_since_ms = 200});
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->total, 3u);
  EXPECT_EQ(page->ended_since,
            (std::map<std::string, size_t>{{"completed", 2}}));
}

// A schema-6 history gains the indexes of pages of ended tasks, and pages
// at once.
TEST_F(SqliteTaskStoreTest, ASchema6DatabaseGainsTheEndedTasksIndexes) {
  {
    auto store = OpenStore();
    for (int64_t n = 1; n <= 3; ++n) {
      TaskRecord task =
          MakeTask(TaskKind::kShell, n, "", TaskStatus::kCompleted);
      task.ended_ms = 100 * n;
      ASSERT_TRUE(store->PutTask(task));
    }
    ASSERT_TRUE(store->Flush());
  }
  RawExec(path_,
          "DROP INDEX tasks_ended; DROP INDEX tasks_labels; "
          "DROP INDEX tasks_ended_by_owner; "
          "DROP TABLE lands; PRAGMA user_version = 6;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  auto page = store->PageEnded({.owner = "", .limit = 2});
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(Ids(page->tasks), (std::vector<std::string>{"shell-3", "shell-2"}));
  EXPECT_EQ(page->total, 3u);
}

// A schema-8 task on Slurm kept its request as `slurm` and its job as
// `slurm_job`; schema 9 reads them as the generic RemoteRequest and
// Placement, so a batond of this build adopts the job.
TEST_F(SqliteTaskStoreTest, ASchema8SlurmTaskBecomesARemoteTask) {
  TaskRecord task = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kQueued);
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutTask(task));
    ASSERT_TRUE(store->Flush());
  }
  RawExec(path_,
          "UPDATE tasks SET extra = '{\"slurm\":{\"partition\":\"debug\","
          "\"cpus\":2},\"slurm_job\":{\"job_id\":\"12\",\"state\":"
          "\"PENDING\"},\"held\":true}'; DROP TABLE lands; "
          "PRAGMA user_version = 8;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  auto read = store->GetTask(task.id);
  ASSERT_TRUE(read && *read) << (read ? "none" : read.error().message);
  const TaskRecord& migrated = **read;
  ASSERT_TRUE(migrated.spec.remote);
  EXPECT_EQ(migrated.spec.remote->executor, "slurm");
  EXPECT_EQ(migrated.spec.remote->options,
            Json::parse(R"({"partition":"debug","cpus":2})"));
  ASSERT_TRUE(migrated.placement);
  EXPECT_EQ(migrated.placement->executor, "slurm");
  EXPECT_EQ(migrated.placement->job_id, "12");
  EXPECT_EQ(migrated.placement->state, "PENDING");
  EXPECT_TRUE(migrated.held);
}

TEST_F(SqliteTaskStoreTest, RefusesNewerSchemaWithoutTouchingIt) {
  RawExec(path_, fmt::format("CREATE TABLE tasks (x); PRAGMA user_version = 99;"
                             "PRAGMA application_id = {};",
                             kApplicationId));
  std::string before = *ReadFile(path_);
  auto store = SqliteTaskStore::Open(path_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(store.error().message,
            fmt::format("database {} was written by a newer baton (schema 99, "
                        "this baton knows {}); upgrade baton or set "
                        "BATON_HOME to another directory",
                        path_, kSchemaVersion));
  EXPECT_EQ(*ReadFile(path_), before);
  std::printf("  refused: %s\n", store.error().message.c_str());
}

TEST_F(SqliteTaskStoreTest, RefusesAnotherApplicationsDatabase) {
  RawExec(path_,
          "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES (1)");
  std::string before = *ReadFile(path_);
  auto store = SqliteTaskStore::Open(path_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kIncompatible);
  EXPECT_NE(store.error().message.find("not baton's"), std::string::npos);
  EXPECT_EQ(*ReadFile(path_), before);
}

TEST_F(SqliteTaskStoreTest, RefusesRandomBytesAsCorruptWithoutTouchingThem) {
  std::mt19937 rng(42);
  std::string garbage(64 * 1024, '\0');
  for (char& c : garbage)
    c = static_cast<char>(rng());
  ASSERT_TRUE(WriteFileAtomic(path_, garbage));
  auto store = SqliteTaskStore::Open(path_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kCorrupt);
  EXPECT_EQ(store.error().message,
            fmt::format("database {} is corrupt (file is not a database); "
                        "move it aside (baton keeps it untouched) and start "
                        "again",
                        path_));
  EXPECT_EQ(*ReadFile(path_), garbage);
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
  std::printf("  refused: %s\n", store.error().message.c_str());
}

TEST_F(SqliteTaskStoreTest, ReportsDamagedPagesAsCorrupt) {
  {
    auto store = OpenStore();
    for (int64_t n = 1; n <= 200; ++n) {
      TaskRecord task = MakeTask(TaskKind::kShell, n, "", TaskStatus::kFailed);
      task.detail = std::string(200, 'd');
      ASSERT_TRUE(store->PutTask(task));
    }
    ASSERT_TRUE(store->Flush());
  }
  // Keep the header page (schema, versions); wreck every table page.
  std::string bytes = *ReadFile(path_);
  ASSERT_GT(bytes.size(), 8192u);
  std::fill(bytes.begin() + 4096, bytes.end(), '\xA5');
  ASSERT_TRUE(WriteFileAtomic(path_, bytes));
  auto store = SqliteTaskStore::Open(path_);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(store.error().message.find("is corrupt"), std::string::npos);
  EXPECT_EQ(*ReadFile(path_), bytes);
  std::printf("  refused: %s\n", store.error().message.c_str());
}

// Schema 10 (doc/land.md): a schema 9 database gains the merge queue; an
// entry put is read back after a reopen, unfinished ones and the last
// finished ones; a dropped batch takes its entries' writes back.
TEST_F(SqliteTaskStoreTest, ASchema9DatabaseGainsTheMergeQueue) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutQueue({.name = "q"}));
    ASSERT_TRUE(store->Flush());
  }
  RawExec(path_, "DROP TABLE lands; PRAGMA user_version = 9;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  for (int64_t id = 1; id <= 4; ++id) {
    ASSERT_TRUE(store->PutLand(
        {.id = id,
         .task = fmt::format("agent-{}", id),
         .target = "main",
         .files = {"f.txt"},
         .state = id <= 2 ? LandState::kLanded : LandState::kQueued}));
  }
  ASSERT_TRUE(store->Flush());
  LandEntry testing{.id = 3, .task = "agent-3", .state = LandState::kTesting};
  ASSERT_TRUE(store->PutLand(testing));
  ASSERT_TRUE(store->Flush());
  store->PutLand({.id = 5, .task = "agent-5"});
  store->DropBatch();
  store = OpenStore();
  // The one finished kept, 2, and the unfinished 3 and 4.
  auto lands = store->LoadLands(1);
  ASSERT_TRUE(lands) << lands.error().message;
  ASSERT_EQ(lands->size(), 3u);
  EXPECT_EQ((*lands)[0].id, 2);
  EXPECT_EQ((*lands)[0].state, LandState::kLanded);
  EXPECT_EQ((*lands)[0].files, std::vector<std::string>{"f.txt"});
  EXPECT_EQ((*lands)[1].state, LandState::kTesting);
  EXPECT_EQ((*lands)[2].task, "agent-4");
}

}  // namespace
}  // namespace store_test
}  // namespace baton
