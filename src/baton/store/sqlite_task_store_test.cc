#include "baton/store/sqlite_task_store_test_fixture.h"

namespace baton {
namespace store_test {
namespace {

TEST_F(SqliteTaskStoreTest, CreatesSchemaInWalMode) {
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(RawQuery(path_, "PRAGMA application_id"),
            std::to_string(kApplicationId));
  EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawQuery(path_,
                     "SELECT group_concat(name, ' ') FROM (SELECT name FROM "
                     "sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY "
                     "name)"),
            "audit audit_by_task counters cursors lands lands_unfinished "
            "queues session_budgets "
            "sessions tasks tasks_by_owner tasks_ended tasks_ended_by_owner "
            "tasks_labels "
            "tasks_live tasks_unnoticed");
}

// The database keeps tasks' environments, secrets among them: only its
// owner reads it, the WAL included, whatever the umask; an older, wider
// database is narrowed when opened (issue 12, finding 11).
TEST_F(SqliteTaskStoreTest, DatabaseAndWalAreOwnerOnly) {
  mode_t old_umask = ::umask(022);
  auto mode = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0u;
  };
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    TaskRecord task = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kQueued);
    task.spec.env_overrides = {{"API_KEY", "sk-secret"}};
    ASSERT_TRUE(store->PutTask(task));
    ASSERT_TRUE(store->Flush());
    EXPECT_EQ(mode(path_), 0600u);
    EXPECT_EQ(mode(path_ + "-wal"), 0600u);
  }
  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(mode(path_), 0600u);
  ::umask(old_umask);
}

TEST_F(SqliteTaskStoreTest, StatusListsAgreeWithIsTerminal) {
  for (int i = 0; i <= static_cast<int>(TaskStatus::kInterrupted); ++i) {
    auto status = static_cast<TaskStatus>(i);
    std::string quoted = fmt::format("'{}'", TaskStatusName(status));
    EXPECT_EQ(kLiveStatuses.find(quoted) != std::string_view::npos,
              !IsTerminal(status))
        << quoted;
    EXPECT_EQ(kTerminalStatuses.find(quoted) != std::string_view::npos,
              IsTerminal(status))
        << quoted;
  }
}

TEST_F(SqliteTaskStoreTest, RoundTripsEveryFieldButBaseEnv) {
  TaskRecord full = FullTask();
  TaskRecord plain = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kQueued);
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutTask(full));
    ASSERT_TRUE(store->PutTask(plain));
    ExpectSameTask(**store->GetTask(full.id), full);  // From the buffer.
    ASSERT_TRUE(store->Flush());
    EXPECT_FALSE(store->HasPendingWrites());
    ExpectSameTask(**store->GetTask(full.id), full);  // From the database.
  }
  auto store = OpenStore();
  ExpectSameTask(**store->GetTask(full.id), full);
  ExpectSameTask(**store->GetTask(plain.id), plain);
  EXPECT_EQ(*store->GetTask(TaskId{TaskKind::kShell, 99}), std::nullopt);

  store.reset();  // Checkpoints the WAL into the main file.
  for (const std::string& file : {path_, path_ + "-wal"}) {
    auto bytes = ReadFile(file);
    if (!bytes)
      continue;
    EXPECT_EQ(bytes->find("SECRET-DO-NOT-STORE"), std::string::npos) << file;
  }
}

TEST_F(SqliteTaskStoreTest, RejectsKindMismatch) {
  auto store = OpenStore();
  TaskRecord task = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kQueued);
  task.spec.kind = TaskKind::kAgent;
  auto put = store->PutTask(task);
  ASSERT_FALSE(put);
  EXPECT_EQ(put.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(store->HasPendingWrites());
}

TEST_F(SqliteTaskStoreTest, NumbersAreNeverReusedAcrossRestarts) {
  {
    auto store = OpenStore();
    EXPECT_EQ(*store->NextTaskNumber(TaskKind::kShell), 1);
    EXPECT_EQ(*store->NextTaskNumber(TaskKind::kShell), 2);
    EXPECT_EQ(*store->NextTaskNumber(TaskKind::kAgent), 1);
    EXPECT_TRUE(store->HasPendingWrites());
    ASSERT_TRUE(store->Flush());
  }
  {
    auto store = OpenStore();
    EXPECT_EQ(*store->NextTaskNumber(TaskKind::kShell), 3);
    EXPECT_EQ(*store->NextTaskNumber(TaskKind::kAgent), 2);
    // A task numbered by its caller moves the counter past it.
    ASSERT_TRUE(store->PutTask(
        MakeTask(TaskKind::kShell, 10, "", TaskStatus::kQueued)));
    EXPECT_EQ(*store->NextTaskNumber(TaskKind::kShell), 11);
    ASSERT_TRUE(store->Flush());
  }
  auto store = OpenStore();
  EXPECT_EQ(*store->NextTaskNumber(TaskKind::kShell), 12);
  EXPECT_EQ(*store->NextTaskNumber(TaskKind::kAgent), 3);
}

TEST_F(SqliteTaskStoreTest, CursorsAndSessionsSurviveReopen) {
  TaskId one{TaskKind::kShell, 1};
  {
    auto store = OpenStore();
    auto orphan = store->SetCursor(TaskId{TaskKind::kShell, 9}, "a", 5);
    ASSERT_FALSE(orphan);
    EXPECT_EQ(orphan.error().code, ErrorCode::kNotFound);

    ASSERT_TRUE(store->PutTask(
        MakeTask(TaskKind::kShell, 1, "a", TaskStatus::kRunning)));
    EXPECT_EQ(*store->GetCursor(one, "a"), 0u);
    ASSERT_TRUE(store->SetCursor(one, "a", 100));  // Task still pending.
    ASSERT_TRUE(store->SetCursor(one, "b", 7));
    EXPECT_EQ(*store->GetCursor(one, "a"), 100u);
    ASSERT_TRUE(store->MarkSessionLeased("s2"));
    ASSERT_TRUE(store->MarkSessionLeased("s1"));
    EXPECT_EQ(*store->LoadLeasedSessions(),
              (std::vector<std::string>{"s1", "s2"}));
    ASSERT_TRUE(store->Flush());
    ASSERT_TRUE(store->SetCursor(one, "a", 250));  // Over a flushed cursor.
    ASSERT_TRUE(store->MarkSessionLeased("s1"));
    EXPECT_EQ(*store->GetCursor(one, "a"), 250u);
    ASSERT_TRUE(store->Flush());
  }
  auto store = OpenStore();
  EXPECT_EQ(*store->GetCursor(one, "a"), 250u);
  EXPECT_EQ(*store->GetCursor(one, "b"), 7u);
  EXPECT_EQ(*store->GetCursor(one, "c"), 0u);
  EXPECT_EQ(*store->LoadLeasedSessions(),
            (std::vector<std::string>{"s1", "s2"}));
}

TEST_F(SqliteTaskStoreTest, QueuesSurviveReopenAndRevertToTheirLastWrite) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutQueue({.name = "build", .max_running = 3}));
    ASSERT_TRUE(store->PutQueue({.name = "", .paused = true}));
    ASSERT_TRUE(store->Flush());
    // A batch whose flush fails: the change is taken back, the new queue
    // is gone.
    ASSERT_TRUE(store->PutQueue({.name = "build", .max_running = 9}));
    ASSERT_TRUE(store->PutQueue({.name = "new"}));
    store->DropBatch();
    EXPECT_FALSE(store->HasPendingWrites());
  }
  auto store = OpenStore();
  auto queues = store->LoadQueues();
  ASSERT_TRUE(queues);
  ASSERT_EQ(queues->size(), 2u);
  EXPECT_EQ((*queues)[0].name, "");
  EXPECT_TRUE((*queues)[0].paused);
  EXPECT_EQ((*queues)[0].max_running, std::nullopt);
  EXPECT_EQ((*queues)[1].name, "build");
  EXPECT_EQ((*queues)[1].max_running, 3);
  EXPECT_FALSE((*queues)[1].paused);
}

TEST_F(SqliteTaskStoreTest, AHeldTaskKeepsItsEnvironmentUntilItStarts) {
  TaskRecord held = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kQueued);
  held.held = true;
  held.spec.base_env = {"TOKEN=held-env-value"};
  held.spec.schedule = {.queue = "q", .priority = 2, .after = {"shell-7"}};
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutTask(held));
    ASSERT_TRUE(store->Flush());
  }
  auto store = OpenStore();
  TaskRecord got = **store->GetTask(held.id);
  EXPECT_TRUE(got.held);
  EXPECT_EQ(got.spec.base_env, held.spec.base_env);
  EXPECT_EQ(got.spec.schedule.after, held.spec.schedule.after);
  EXPECT_EQ(got.spec.schedule.priority, 2);
  got.held = false;  // Started: the environment goes.
  ASSERT_TRUE(store->PutTask(got));
  ASSERT_TRUE(store->Flush());
  EXPECT_TRUE((*store->GetTask(held.id))->spec.base_env.empty());
}

TEST_F(SqliteTaskStoreTest, ARetriedTaskKeepsItsAttemptsAndItsEnvironment) {
  TaskRecord task = MakeTask(TaskKind::kShell, 1, "", TaskStatus::kRunning);
  task.spec.retry = {.retries = 3, .delay_ms = 2000};
  task.spec.base_env = {"PATH=/retry"};
  task.attempts.push_back({.started_ms = 10,
                           .ended_ms = 20,
                           .exit_code = 1,
                           .detail = "exit code: 1",
                           .output_from = 0,
                           .output_to = 7});
  task.attempts.push_back({.started_ms = 30,
                           .ended_ms = 40,
                           .signal = 9,
                           .detail = "signal: SIGKILL",
                           .output_from = 7,
                           .output_to = 9});
  task.retry_at_ms = 1234;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutTask(task));
    ASSERT_TRUE(store->Flush());
  }
  auto store = OpenStore();
  TaskRecord got = **store->GetTask(task.id);
  EXPECT_EQ(got.spec.retry, task.spec.retry);
  ASSERT_EQ(got.attempts.size(), 2u);
  EXPECT_EQ(got.attempts[0].exit_code, 1);
  EXPECT_FALSE(got.attempts[0].signal);
  EXPECT_EQ(got.attempts[1].signal, 9);
  EXPECT_EQ(got.attempts[1].output_from, 7);
  EXPECT_EQ(got.attempts[1].output_to, 9);
  EXPECT_EQ(got.attempts[1].detail, "signal: SIGKILL");
  EXPECT_EQ(got.retry_at_ms, 1234);
  // Running with a retry left: a restarted batond may need its environment.
  EXPECT_EQ(got.spec.base_env, task.spec.base_env);
  got.status = TaskStatus::kFailed;  // Ended: the environment goes.
  ASSERT_TRUE(store->PutTask(got));
  ASSERT_TRUE(store->Flush());
  EXPECT_TRUE((*store->GetTask(task.id))->spec.base_env.empty());
}

TEST_F(SqliteTaskStoreTest, AQueuesLimitsSurviveAReopen) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutQueue(
        {.name = "big", .limits = {.memory_bytes = 1 << 30, .pids = 64}}));
    ASSERT_TRUE(store->Flush());
  }
  auto queues = OpenStore()->LoadQueues();
  ASSERT_TRUE(queues);
  ASSERT_EQ(queues->size(), 1u);
  EXPECT_EQ((*queues)[0].limits,
            (ResourceLimits{.memory_bytes = 1 << 30, .pids = 64}));
  // A row of schema 3 has no limits: '{}', none.
  RawExec(path_, "UPDATE queues SET limits = '{}'");
  EXPECT_FALSE(OpenStore()->LoadQueues()->at(0).limits.any());
}

TEST_F(SqliteTaskStoreTest, SessionBudgetsSurviveReopenRevertAndRemoval) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->PutSessionBudget("build", {.max_tokens = 200000}));
    ASSERT_TRUE(
        store->PutSessionBudget("docs", {.max_turns = 3, .max_cost_usd = 1.5}));
    ASSERT_TRUE(store->Flush());
    // A batch whose flush fails: the change and the removal are taken back.
    ASSERT_TRUE(store->PutSessionBudget("build", {.max_tokens = 5}));
    ASSERT_TRUE(store->PutSessionBudget("docs", {}));
    EXPECT_FALSE(store->LoadSessionBudgets()->contains("docs"));
    store->DropBatch();
    EXPECT_FALSE(store->HasPendingWrites());
  }
  auto store = OpenStore();
  auto budgets = store->LoadSessionBudgets();
  ASSERT_TRUE(budgets);
  EXPECT_EQ(*budgets, (std::map<std::string, AgentBudget>{
                          {"build", {.max_tokens = 200000}},
                          {"docs", {.max_turns = 3, .max_cost_usd = 1.5}}}));
  // An empty budget removes the row.
  ASSERT_TRUE(store->PutSessionBudget("docs", {}));
  ASSERT_TRUE(store->Flush());
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM session_budgets"), "1");
  EXPECT_EQ(OpenStore()->LoadSessionBudgets()->size(), 1u);
}

// Root ignores file modes, so the check runs in a child that drops to
// nobody; an unprivileged user runs it as itself.
TEST_F(SqliteTaskStoreTest, ReportsUnwritableDatabaseClearly) {
  // A read-only file; a directory where the file cannot be created; a
  // writable file in a directory where SQLite cannot create its -shm.
  std::string empty_dir = dir_ + "/empty";
  std::string locked_dir = dir_ + "/locked";
  ASSERT_EQ(mkdir(empty_dir.c_str(), 0555), 0);
  ASSERT_EQ(mkdir(locked_dir.c_str(), 0755), 0);
  ASSERT_NE(OpenStore(), nullptr);  // Creates the file, then closes it.
  ASSERT_TRUE(SqliteTaskStore::Open(locked_dir + "/baton.db"));
  ASSERT_EQ(chmod((locked_dir + "/baton.db").c_str(), 0666), 0);
  ASSERT_EQ(chmod(locked_dir.c_str(), 0555), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0444), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0555), 0);
  std::fflush(stdout);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(77);
    }
    int failures = 0;
    for (const std::string& path :
         {path_, empty_dir + "/baton.db", locked_dir + "/baton.db"}) {
      auto store = SqliteTaskStore::Open(path);
      if (store) {
        std::fprintf(stderr, "opened %s\n", path.c_str());
        ++failures;
        continue;
      }
      std::printf("  refused: [%s] %s\n",
                  std::string(ErrorCodeName(store.error().code)).c_str(),
                  store.error().message.c_str());
      if (store.error().code != ErrorCode::kPermissionDenied)
        ++failures;
    }
    std::fflush(stdout);
    _exit(failures);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77)
    GTEST_SKIP() << "cannot drop to nobody";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A real write failure: RLIMIT_FSIZE makes the WAL append fail with EFBIG
// (root is subject to it too), as a full disk would with ENOSPC.
TEST_F(SqliteTaskStoreTest, FailedFlushKeepsWritesPendingAndRetries) {
  auto store = OpenStore();
  ASSERT_TRUE(
      store->PutTask(MakeTask(TaskKind::kShell, 1, "a", TaskStatus::kRunning)));
  ASSERT_TRUE(store->Flush());

  TaskRecord big = MakeTask(TaskKind::kShell, 2, "a", TaskStatus::kFailed);
  big.detail = std::string(4 << 20, 'x');  // Larger than the files so far.
  ASSERT_TRUE(store->PutTask(big));
  ASSERT_TRUE(store->SetCursor(big.id, "a", 42));
  ASSERT_EQ(*store->NextTaskNumber(TaskKind::kShell), 3);

  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit limit = old_limit;
  limit.rlim_cur =
      std::max(fs::file_size(path_), fs::file_size(path_ + "-wal"));
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  auto flushed = store->Flush();
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(flushed);
  EXPECT_EQ(flushed.error().code, ErrorCode::kIo);
  EXPECT_NE(flushed.error().message.find("next flush retries"),
            std::string::npos);
  std::printf("  flush failed: %s\n", flushed.error().message.c_str());
  EXPECT_TRUE(store->HasPendingWrites());
  EXPECT_EQ((*store->GetTask(big.id))->detail.size(), big.detail.size());
  EXPECT_EQ(*store->GetCursor(big.id, "a"), 42u);
  {
    auto other = OpenStore();  // Sees only what was committed.
    EXPECT_EQ(*other->GetTask(big.id), std::nullopt);
    EXPECT_EQ(Ids(*other->ListTasks({.owner = "a"})),
              (std::vector<std::string>{"shell-1"}));
  }

  ASSERT_TRUE(store->Flush()) << "retry";
  EXPECT_FALSE(store->HasPendingWrites());
  store.reset();
  store = OpenStore();
  EXPECT_EQ((*store->GetTask(big.id))->detail.size(), big.detail.size());
  EXPECT_EQ(*store->GetCursor(big.id, "a"), 42u);
  EXPECT_EQ(*store->NextTaskNumber(TaskKind::kShell), 4);
}

}  // namespace
}  // namespace store_test
}  // namespace baton
