#include "baton/store/sqlite_task_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <random>

#include "baton/core/sessions.h"
#include "baton/core/task_extra.h"
#include "baton/store/migrations.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

TaskRecord MakeTask(TaskKind kind, int64_t number, std::string owner,
                    TaskStatus status) {
  TaskRecord task;
  task.id = TaskId{kind, number};
  task.spec.kind = kind;
  task.spec.owner = std::move(owner);
  task.spec.shell_command = "make -j2";
  task.spec.cwd = "/src";
  task.status = status;
  task.created_ms = 1000 + number;
  return task;
}

// Every field set to something other than its default.
TaskRecord FullTask() {
  TaskRecord task;
  task.id = TaskId{TaskKind::kAgent, 7};
  task.spec.kind = TaskKind::kAgent;
  task.spec.owner = "session-x";
  task.spec.label = "fix the \"flaky\" test ✓";
  task.spec.argv = {"claude", "-p", "it's a 'quoted' arg", ""};
  task.spec.cwd = "/home/me/project";
  task.spec.env_overrides = {{"A", "1"}, {"EMPTY", ""}, {"PATH", "/x:/y"}};
  task.spec.base_env = {"HOME=/root", "TOKEN=SECRET-DO-NOT-STORE"};
  task.spec.timeout = milliseconds(90'000);
  task.status = TaskStatus::kKilled;
  task.detail = "signal: SIGKILL";
  task.exit_code = 137;
  task.signal = 9;
  task.pid = 4242;
  task.created_ms = 1'700'000'000'001;
  task.started_ms = 1'700'000'000'002;
  task.ended_ms = 1'700'000'000'003;
  task.kill_reason = "budget: max-turns 40 reached";
  task.killed_at_limit = true;
  task.end_seen = true;
  task.notice_delivered = true;
  task.output_path = "/state/tasks/agent-7/output.log";
  task.spec.agent =
      AgentSpec{"claude",          "claude",
                "fix the bug",     "anthropic/claude-sonnet-4-5:high",
                "sess-1",          "agent-3",
                "why this adapter"};
  task.spec.checks = {"make test", "git diff --stat"};
  task.spec.agent->max_turns = 40;
  task.spec.agent->max_tokens = 200000;
  task.spec.agent->max_cost_usd = 2.5;
  task.agent_session = "sess-9";
  task.usage = AgentUsage{.input_tokens = 1200,
                          .output_tokens = 34,
                          .cost_usd = 0.0123,
                          .turns = 3};
  task.evidence =
      Evidence{"git", {"a.cc", "b.h"}, {{"make test", 2, "FAIL"}}, {"shell-4"}};
  return task;
}

void ExpectSameTask(const TaskRecord& got, const TaskRecord& want) {
  EXPECT_EQ(got.id.ToString(), want.id.ToString());
  EXPECT_EQ(got.spec.kind, want.spec.kind);
  EXPECT_EQ(got.spec.owner, want.spec.owner);
  EXPECT_EQ(got.spec.label, want.spec.label);
  EXPECT_EQ(got.spec.shell_command, want.spec.shell_command);
  EXPECT_EQ(got.spec.argv, want.spec.argv);
  EXPECT_EQ(got.spec.cwd, want.spec.cwd);
  EXPECT_EQ(got.spec.env_overrides, want.spec.env_overrides);
  EXPECT_TRUE(got.spec.base_env.empty()) << "base_env must never be stored";
  EXPECT_EQ(got.spec.timeout, want.spec.timeout);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.detail, want.detail);
  EXPECT_EQ(got.exit_code, want.exit_code);
  EXPECT_EQ(got.signal, want.signal);
  EXPECT_EQ(got.pid, want.pid);
  EXPECT_EQ(got.created_ms, want.created_ms);
  EXPECT_EQ(got.started_ms, want.started_ms);
  EXPECT_EQ(got.ended_ms, want.ended_ms);
  EXPECT_EQ(got.kill_reason, want.kill_reason);
  EXPECT_EQ(got.killed_at_limit, want.killed_at_limit);
  EXPECT_EQ(got.end_seen, want.end_seen);
  EXPECT_EQ(got.notice_delivered, want.notice_delivered);
  EXPECT_EQ(got.output_path, want.output_path);
  EXPECT_EQ(EncodeTaskExtra(got), EncodeTaskExtra(want));
}

std::vector<std::string> Ids(const std::vector<TaskRecord>& tasks) {
  std::vector<std::string> ids;
  for (const auto& task : tasks)
    ids.push_back(task.id.ToString());
  return ids;
}

// Runs `sql` on `path` through a plain connection, outside the store.
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class SqliteTaskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "baton_store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/baton.db";
  }
  void TearDown() override {
    for (const auto& sub : {dir_, dir_ + "/locked"})
      chmod(sub.c_str(), 0700);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::unique_ptr<SqliteTaskStore> OpenStore() {
    auto store = SqliteTaskStore::Open(path_);
    EXPECT_TRUE(store.has_value()) << store.error().message;
    return store ? std::move(*store) : nullptr;
  }

  std::string dir_;
  std::string path_;
};

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
            "audit audit_by_task counters cursors queues session_budgets "
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

TEST_F(SqliteTaskStoreTest, ListsVisibleTasksNewestFirst) {
  auto store = OpenStore();
  // Created in this order: a1 u2 b3 a4(running) u5(running) a6.
  const struct {
    const char* owner;
    TaskStatus status;
  } kTasks[] = {
      {"a", TaskStatus::kCompleted}, {"", TaskStatus::kFailed},
      {"b", TaskStatus::kCompleted}, {"a", TaskStatus::kRunning},
      {"", TaskStatus::kWaiting},    {"a", TaskStatus::kKilled},
  };
  int64_t number = 0;
  for (const auto& t : kTasks) {
    ASSERT_TRUE(store->PutTask(
        MakeTask(TaskKind::kShell, ++number, t.owner, t.status)));
  }
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a"})),
              (std::vector<std::string>{"shell-6", "shell-5", "shell-4",
                                        "shell-2", "shell-1"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = ""})),
              (std::vector<std::string>{"shell-5", "shell-2"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "b", .include_live = false})),
              (std::vector<std::string>{"shell-3", "shell-2"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .include_terminal = false})),
              (std::vector<std::string>{"shell-5", "shell-4"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .limit = 2})),
              (std::vector<std::string>{"shell-6", "shell-5"}));
    EXPECT_EQ(*store->CountTasks({.owner = "a", .limit = 2}), 5u);
    EXPECT_EQ(*store->CountTasks({.owner = "a", .include_live = false}), 3u);
    EXPECT_EQ(*store->CountTasks({.owner = ""}), 2u);
    EXPECT_TRUE(store
                    ->ListTasks({.owner = "a",
                                 .include_live = false,
                                 .include_terminal = false})
                    ->empty());
  };
  check("pending");
  ASSERT_TRUE(store->Flush());
  check("flushed");
  store.reset();
  store = OpenStore();
  check("reopened");
}

// A person's view (the board): a page of ended tasks, the most recent end
// first, filtered in SQL as TaskFilter::Matches filters in memory, with the
// day's counts and every label; the same whether the tasks are pending,
// flushed, or some of each.
TEST_F(SqliteTaskStoreTest, PagesEndedTasksByTheirEndWithFiltersAndCounts) {
  auto store = OpenStore();
  auto ended = [](TaskKind kind, int64_t number, std::string owner,
                  TaskStatus status, int64_t ended_ms) {
    TaskRecord task = MakeTask(kind, number, std::move(owner), status);
    task.ended_ms = ended_ms;
    return task;
  };
  TaskRecord t1 = ended(TaskKind::kShell, 1, "a", TaskStatus::kCompleted, 5000);
  t1.spec.label = "build";
  TaskRecord t2 = ended(TaskKind::kShell, 2, "", TaskStatus::kFailed, 7000);
  t2.spec.shell_command = "make Test";
  TaskRecord t3 = ended(TaskKind::kAgent, 3, "", TaskStatus::kCompleted, 6000);
  t3.spec.shell_command.reset();
  t3.spec.agent = AgentSpec{.adapter = "claude", .brief = "Fix the LOGIN bug"};
  t3.spec.label = "fix";
  TaskRecord t4 = ended(TaskKind::kShell, 4, "b", TaskStatus::kKilled, 8000);
  t4.spec.label = "secret";
  TaskRecord t5 = ended(TaskKind::kShell, 5, "", TaskStatus::kRunning, 0);
  t5.spec.label = "deploy";
  // Ends in the same millisecond as shell-2: the status name decides.
  TaskRecord t6 =
      ended(TaskKind::kShell, 6, "a", TaskStatus::kInterrupted, 7000);
  TaskRecord t7 = ended(TaskKind::kShell, 7, "", TaskStatus::kCompleted, 9000);
  t7.spec.shell_command.reset();
  t7.spec.argv = {"echo", "Needle"};
  for (const auto& task : {t1, t2, t3, t4, t5, t6, t7})
    ASSERT_TRUE(store->PutTask(task));

  auto page = [&](TaskFilter filter, size_t offset = 0, size_t limit = 50) {
    auto got = store->PageEnded({.owner = "a",
                                 .filter = std::move(filter),
                                 .offset = offset,
                                 .limit = limit,
                                 .counted_since_ms = 6500});
    EXPECT_TRUE(got) << got.error().message;
    return got ? *got : EndedPage{};
  };
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EndedPage all = page({});
    EXPECT_EQ(Ids(all.tasks),
              (std::vector<std::string>{"shell-7", "shell-6", "shell-2",
                                        "agent-3", "shell-1"}));
    EXPECT_EQ(all.total, 5u);
    EXPECT_EQ(all.ended_since,
              (std::map<std::string, size_t>{
                  {"completed", 1}, {"failed", 1}, {"interrupted", 1}}));
    EXPECT_EQ(all.labels, (std::vector<std::string>{"build", "deploy", "fix"}));
    EndedPage second = page({}, 1, 2);
    EXPECT_EQ(Ids(second.tasks),
              (std::vector<std::string>{"shell-6", "shell-2"}));
    EXPECT_EQ(second.total, 5u);
    EXPECT_TRUE(page({}, 5).tasks.empty());
    EXPECT_EQ(Ids(page({.kind = "agent"}).tasks),
              (std::vector<std::string>{"agent-3"}));
    EXPECT_EQ(Ids(page({.status = "failed"}).tasks),
              (std::vector<std::string>{"shell-2"}));
    EXPECT_EQ(Ids(page({.label = "build"}).tasks),
              (std::vector<std::string>{"shell-1"}));
    EXPECT_EQ(page({.label = "secret"}).total, 0u);
    for (const auto& [search, id] :
         std::vector<std::pair<std::string, std::string>>{
             {"needle", "shell-7"},
             {"login", "agent-3"},
             {"make t", "shell-2"},
             {"shell-6", "shell-6"}}) {
      EndedPage found = page({.search = search});
      EXPECT_EQ(Ids(found.tasks), std::vector<std::string>{id}) << search;
      EXPECT_EQ(found.total, 1u) << search;
      // The same rule in memory, for live and pending tasks.
      TaskFilter filter{.search = search};
      EXPECT_TRUE(filter.Matches(*store->GetTask(*TaskId::Parse(id)).value()))
          << search;
    }
    // Without a session: the unowned tasks only.
    auto unowned = store->PageEnded({.owner = ""});
    ASSERT_TRUE(unowned);
    EXPECT_EQ(Ids(unowned->tasks),
              (std::vector<std::string>{"shell-7", "shell-2", "agent-3"}));
    EXPECT_EQ(unowned->labels, (std::vector<std::string>{"deploy", "fix"}));
    EXPECT_TRUE(unowned->owners.empty());
    // The owner filter, within what the session sees: a's own, the
    // unowned (""), and nothing of b's.
    EXPECT_EQ(all.owners, std::vector<std::string>{"a"});
    EndedPage own = page({.owner = "a"});
    EXPECT_EQ(Ids(own.tasks), (std::vector<std::string>{"shell-6", "shell-1"}));
    EXPECT_EQ(own.total, 2u);
    EXPECT_EQ(own.ended_since, all.ended_since);  // Counts are unfiltered.
    EXPECT_EQ(Ids(page({.owner = ""}).tasks),
              (std::vector<std::string>{"shell-7", "shell-2", "agent-3"}));
    EXPECT_EQ(page({.owner = "b"}).total, 0u);
    EXPECT_EQ(page({.owner = "a", .status = "interrupted"}).total, 1u);
    EXPECT_EQ(page({.owner = "", .label = "fix"}).total, 1u);
    // A person's session sees every session's tasks, and every session.
    auto person = store->PageEnded(
        {.owner = std::string(kPersonSession), .counted_since_ms = 6500});
    ASSERT_TRUE(person) << person.error().message;
    EXPECT_EQ(Ids(person->tasks),
              (std::vector<std::string>{"shell-7", "shell-4", "shell-6",
                                        "shell-2", "agent-3", "shell-1"}));
    EXPECT_EQ(person->total, 6u);
    EXPECT_EQ(person->ended_since,
              (std::map<std::string, size_t>{{"completed", 1},
                                             {"failed", 1},
                                             {"interrupted", 1},
                                             {"killed", 1}}));
    EXPECT_EQ(person->labels,
              (std::vector<std::string>{"build", "deploy", "fix", "secret"}));
    EXPECT_EQ(person->owners, (std::vector<std::string>{"a", "b"}));
    auto of_b = store->PageEnded(
        {.owner = std::string(kPersonSession), .filter = {.owner = "b"}});
    ASSERT_TRUE(of_b);
    EXPECT_EQ(Ids(of_b->tasks), std::vector<std::string>{"shell-4"});
    EXPECT_EQ(of_b->total, 1u);
    // And its plain list: every task, newest first, and their count.
    auto listed = store->ListTasks({.owner = std::string(kPersonSession)});
    ASSERT_TRUE(listed);
    EXPECT_EQ(Ids(*listed), (std::vector<std::string>{
                                "shell-7", "shell-6", "shell-5", "shell-4",
                                "agent-3", "shell-2", "shell-1"}));
    EXPECT_EQ(*store->CountTasks({.owner = std::string(kPersonSession)}), 7u);
  };
  check("pending");
  ASSERT_TRUE(store->Flush());
  check("flushed");

  // Some pending, some flushed: a pending end lands in its place on every
  // page, and counts once.
  TaskRecord t8 = ended(TaskKind::kShell, 8, "", TaskStatus::kCompleted, 6500);
  t8.spec.label = "late";
  ASSERT_TRUE(store->PutTask(t8));
  t5.status = TaskStatus::kFailed;  // The running one ends, pending.
  t5.ended_ms = 9500;
  ASSERT_TRUE(store->PutTask(t5));
  for (const char* when : {"mixed", "flushed again"}) {
    SCOPED_TRACE(when);
    EndedPage all = page({});
    EXPECT_EQ(Ids(all.tasks), (std::vector<std::string>{
                                  "shell-5", "shell-7", "shell-6", "shell-2",
                                  "shell-8", "agent-3", "shell-1"}));
    EXPECT_EQ(all.total, 7u);
    EXPECT_EQ(Ids(page({}, 3, 2).tasks),
              (std::vector<std::string>{"shell-2", "shell-8"}));
    EXPECT_EQ(all.ended_since,
              (std::map<std::string, size_t>{
                  {"completed", 2}, {"failed", 2}, {"interrupted", 1}}));
    EXPECT_EQ(all.labels,
              (std::vector<std::string>{"build", "deploy", "fix", "late"}));
    EXPECT_EQ(Ids(page({.status = "failed"}).tasks),
              (std::vector<std::string>{"shell-5", "shell-2"}));
    ASSERT_TRUE(store->Flush());
  }
}

TEST_F(SqliteTaskStoreTest, ReadsOverlayPendingWritesOnFlushedRows) {
  auto store = OpenStore();
  for (int64_t n = 1; n <= 4; ++n) {
    ASSERT_TRUE(store->PutTask(
        MakeTask(TaskKind::kShell, n, "a", TaskStatus::kRunning)));
  }
  ASSERT_TRUE(store->Flush());

  // Pending: shell-2 ends, shell-5 starts, shell-3 ends unnoticed.
  TaskRecord two = **store->GetTask(TaskId{TaskKind::kShell, 2});
  two.status = TaskStatus::kCompleted;
  two.end_seen = true;
  ASSERT_TRUE(store->PutTask(two));
  TaskRecord three = **store->GetTask(TaskId{TaskKind::kShell, 3});
  three.status = TaskStatus::kFailed;
  ASSERT_TRUE(store->PutTask(three));
  ASSERT_TRUE(
      store->PutTask(MakeTask(TaskKind::kShell, 5, "a", TaskStatus::kQueued)));

  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ((*store->GetTask(TaskId{TaskKind::kShell, 2}))->status,
              TaskStatus::kCompleted);
    EXPECT_EQ(Ids(*store->LoadLiveTasks()),
              (std::vector<std::string>{"shell-1", "shell-4", "shell-5"}));
    EXPECT_EQ(Ids(*store->LoadUnnoticedTasks()),
              (std::vector<std::string>{"shell-3"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .limit = 3})),
              (std::vector<std::string>{"shell-5", "shell-4", "shell-3"}));
    EXPECT_EQ(Ids(*store->ListTasks({.owner = "a", .include_live = false})),
              (std::vector<std::string>{"shell-3", "shell-2"}));
    EXPECT_EQ(*store->CountTasks({.owner = "a", .include_terminal = false}),
              3u);
  };
  check("pending");
  ASSERT_TRUE(store->Flush());
  check("flushed");
}

TEST_F(SqliteTaskStoreTest, UnnoticedTasksAreOwnedEndedAndUnseen) {
  auto store = OpenStore();
  auto put = [&](int64_t n, const char* owner, TaskStatus status, bool seen,
                 bool told) {
    TaskRecord task = MakeTask(TaskKind::kShell, n, owner, status);
    task.end_seen = seen;
    task.notice_delivered = told;
    ASSERT_TRUE(store->PutTask(task));
  };
  put(1, "a", TaskStatus::kCompleted, false, false);   // Yes.
  put(2, "", TaskStatus::kCompleted, false, false);    // Unowned.
  put(3, "a", TaskStatus::kRunning, false, false);     // Live.
  put(4, "a", TaskStatus::kFailed, true, false);       // Seen.
  put(5, "b", TaskStatus::kInterrupted, false, true);  // Told.
  put(6, "b", TaskStatus::kKilled, false, false);      // Yes.
  EXPECT_EQ(Ids(*store->LoadUnnoticedTasks()),
            (std::vector<std::string>{"shell-1", "shell-6"}));
  ASSERT_TRUE(store->Flush());
  EXPECT_EQ(Ids(*store->LoadUnnoticedTasks()),
            (std::vector<std::string>{"shell-1", "shell-6"}));
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
    store->RevertQueue("build");
    store->RevertQueue("new");
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
          "PRAGMA user_version = 2;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  ExpectSameTask(**store->GetTask(task.id), task);
  ASSERT_TRUE(store->PutQueue({.name = "q", .max_running = 1}));
  ASSERT_TRUE(store->Flush());
  EXPECT_EQ(store->LoadQueues()->size(), 1u);
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
    store->RevertSessionBudget("build");
    store->RevertSessionBudget("docs");
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
          "PRAGMA user_version = 4;");
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
  RawExec(path_, "DROP INDEX tasks_ended_by_owner; PRAGMA user_version = 7;");
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
          "PRAGMA user_version = 6;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"),
            std::to_string(kSchemaVersion));
  auto page = store->PageEnded({.owner = "", .limit = 2});
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(Ids(page->tasks), (std::vector<std::string>{"shell-3", "shell-2"}));
  EXPECT_EQ(page->total, 3u);
}

AuditRecord AuditOf(std::string action, std::string task, int64_t at_ms) {
  return AuditRecord{.at_ms = at_ms,
                     .action = std::move(action),
                     .task = std::move(task),
                     .session = "build",
                     .client = "cli",
                     .uid = 1000,
                     .pid = 42,
                     .detail = "sleep 30",
                     .reason = "stuck"};
}

TEST_F(SqliteTaskStoreTest, TheAuditTrailKeepsItsOrderFiltersAndReverts) {
  {
    auto store = OpenStore();
    uint64_t key = 0;
    ASSERT_TRUE(store->AppendAudit(AuditOf("run", "shell-1", 1000), &key));
    ASSERT_TRUE(store->AppendAudit(AuditOf("run", "shell-2", 2000), &key));
    ASSERT_TRUE(store->Flush());
    ASSERT_TRUE(store->AppendAudit(AuditOf("kill", "shell-1", 3000), &key));
    // Pending records are read too, newest last.
    auto all = store->ListAudit({});
    ASSERT_TRUE(all);
    ASSERT_EQ(all->size(), 3u);
    EXPECT_EQ((*all)[2].action, "kill");
    EXPECT_EQ((*all)[2].seq, 3);
    // A failed batch takes its record back; its seq is not used again.
    store->RevertAudit(key);
    EXPECT_FALSE(store->HasPendingWrites());
    ASSERT_TRUE(store->AppendAudit(AuditOf("kill", "shell-2", 4000), &key));
    ASSERT_TRUE(store->Flush());
  }
  auto store = OpenStore();
  auto all = store->ListAudit({});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  const AuditRecord& kill = (*all)[2];
  EXPECT_EQ(kill.seq, 4);
  EXPECT_EQ(kill.at_ms, 4000);
  EXPECT_EQ(kill.action, "kill");
  EXPECT_EQ(kill.task, "shell-2");
  EXPECT_EQ(kill.session, "build");
  EXPECT_EQ(kill.client, "cli");
  EXPECT_EQ(kill.uid, 1000);
  EXPECT_EQ(kill.pid, 42);
  EXPECT_EQ(kill.detail, "sleep 30");
  EXPECT_EQ(kill.reason, "stuck");

  auto two = store->ListAudit({.task = "shell-2"});
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].action, "run");
  EXPECT_EQ(store->ListAudit({.since_ms = 2000})->size(), 2u);
  auto newest = store->ListAudit({.limit = 1});
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ((*newest)[0].seq, 4);
}

TEST_F(SqliteTaskStoreTest, TheAuditTrailKeepsItsNewestRecordsAtStart) {
  ASSERT_NE(OpenStore(), nullptr);
  // Past what it keeps, written the fast way.
  RawExec(path_, fmt::format("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                             "SELECT i + 1 FROM n WHERE i < {}) "
                             "INSERT INTO audit SELECT i, i, 'run', "
                             "'shell-' || i, '', 'cli', 0, 0, '', '' FROM n;",
                             kAuditRecordsKept + 5));
  auto store = OpenStore();
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM audit"),
            std::to_string(kAuditRecordsKept));
  EXPECT_EQ(RawQuery(path_, "SELECT min(seq) FROM audit"), "6");
  uint64_t key = 0;
  ASSERT_TRUE(store->AppendAudit(AuditOf("kill", "shell-1", 1), &key));
  EXPECT_EQ(key, static_cast<uint64_t>(kAuditRecordsKept + 6));
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

// The store at 100,000 tasks: each read the daemon and the board make goes
// by an index, not a scan. A check of the indexes, not a benchmark: held to
// SQLite's own count of its work (steps, and steps in full scans), not to
// milliseconds, so it fails on a lost index on any machine and never on a
// busy one. The times are printed for a person reading the log.
TEST_F(SqliteTaskStoreTest, StaysFastWithHundredThousandTasks) {
  using Clock = std::chrono::steady_clock;
  constexpr int64_t kTasks = 100'000;
  {
    auto store = OpenStore();
    for (int64_t n = 1; n <= kTasks; ++n) {
      // Ten sessions and unowned tasks; one in a thousand still live, one
      // in five hundred ended unnoticed.
      std::string owner = n % 11 == 0 ? "" : fmt::format("session-{}", n % 10);
      TaskStatus status =
          n % 1000 == 0 ? TaskStatus::kRunning : TaskStatus::kCompleted;
      TaskRecord task = MakeTask(TaskKind::kShell, n, owner, status);
      task.end_seen = n % 500 != 7;
      task.output_path = fmt::format("/state/tasks/shell-{}/output.log", n);
      ASSERT_TRUE(store->PutTask(task));
    }
    ASSERT_TRUE(store->Flush());
  }

  // The work and the time of one read (or of a run of them).
  std::unique_ptr<SqliteTaskStore> store;
  std::string times;
  auto measure = [&](const char* name, auto&& read) {
    QueryWork before = store ? store->read_work() : QueryWork{};
    auto start = Clock::now();
    read();
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    QueryWork work = store->read_work();
    work.steps -= before.steps;
    work.scan_steps -= before.scan_steps;
    times += fmt::format(" {} {:.2f} ms ({} steps, {} in scans);", name, ms,
                         work.steps, work.scan_steps);
    return work;
  };

  QueryWork open = measure("open", [&] { store = OpenStore(); });
  ASSERT_NE(store, nullptr);
  std::mt19937 rng(7);
  QueryWork gets = measure("1000 gets", [&] {
    for (int i = 0; i < 1000; ++i) {
      TaskId id{TaskKind::kShell, static_cast<int64_t>(rng() % kTasks) + 1};
      auto task = store->GetTask(id);
      ASSERT_TRUE(task && task->has_value());
    }
  });
  QueryWork lists;
  for (const char* owner : {"session-3", "", "session-9"}) {
    for (bool live_only : {false, true}) {
      Result<std::vector<TaskRecord>> tasks;
      QueryWork list = measure("list(20)", [&] {
        tasks = store->ListTasks(
            {.owner = owner, .include_terminal = !live_only, .limit = 20});
      });
      lists.steps = std::max(lists.steps, list.steps);
      lists.scan_steps += list.scan_steps;
      ASSERT_TRUE(tasks);
      EXPECT_EQ(tasks->size(),
                std::min<size_t>(
                    20, *store->CountTasks(
                            {.owner = owner, .include_terminal = !live_only})));
    }
  }
  Result<std::vector<TaskRecord>> live;
  QueryWork live_work = measure("live", [&] { live = store->LoadLiveTasks(); });
  Result<std::vector<TaskRecord>> unnoticed;
  QueryWork unnoticed_work =
      measure("unnoticed", [&] { unnoticed = store->LoadUnnoticedTasks(); });
  Result<size_t> count;
  QueryWork count_work = measure(
      "count", [&] { count = store->CountTasks({.owner = "session-3"}); });
  // The board's first load: a page of the history, its total, the day's
  // counts and the labels.
  decltype(store->PageEnded({})) page;
  QueryWork page_work = measure("ended page", [&] {
    page = store->PageEnded({.owner = "", .limit = 50});
  });
  std::printf("  100k tasks:%s\n", times.c_str());

  // Full scans only of the partial indexes, which hold just what the read
  // wants (the 100 live tasks, the 200 unnoticed ends), and for the board's
  // totals, of the index of ended tasks: never of the table.
  EXPECT_EQ(open.scan_steps, 0) << times;
  EXPECT_EQ(gets.scan_steps, 0) << times;
  EXPECT_EQ(count_work.scan_steps, 0) << times;
  EXPECT_LE(lists.scan_steps, 3 * 200) << times;
  EXPECT_LE(live_work.scan_steps, 100) << times;
  EXPECT_LE(unnoticed_work.scan_steps, 200) << times;
  EXPECT_LE(page_work.scan_steps, 100'000) << times;
  // And each stays near the work it does now (SQLite 3.40, Debian 12), with
  // room for another SQLite's plans: a read takes a few dozen steps a row
  // it returns, a count a few dozen per index entry it counts.
  EXPECT_LT(open.steps, 1'000) << times;
  EXPECT_LT(gets.steps, 100 * 1000) << times;        // now 36 a get
  EXPECT_LT(lists.steps, 6'000) << times;            // now 2,928 at most
  EXPECT_LT(live_work.steps, 8'000) << times;        // now 3,615
  EXPECT_LT(unnoticed_work.steps, 14'000) << times;  // now 6,567
  EXPECT_LT(count_work.steps, 450'000) << times;     // 9,091 entries
  EXPECT_LT(page_work.steps, 1'600'000) << times;    // ~100,000 entries

  ASSERT_TRUE(live && unnoticed && count && page);
  EXPECT_EQ(live->size(), 100u);
  EXPECT_GT(unnoticed->size(), 100u);
  EXPECT_GT(*count, 9000u);
  EXPECT_EQ(page->tasks.size(), 50u);
  EXPECT_GT(page->total, 9000u);
}

}  // namespace
}  // namespace baton
