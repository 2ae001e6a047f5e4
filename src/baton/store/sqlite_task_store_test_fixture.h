// What the tests of SqliteTaskStore share: tasks to store, a raw look at
// the database file, and the fixture (a temp folder per test). The tests are
// split as the store is: sqlite_task_store_test.cc (opening, writing, one
// task, reopening), _lists_test.cc, _schema_test.cc (migrations, refusals,
// damage), _audit_test.cc.
#ifndef BATON_STORE_SQLITE_TASK_STORE_TEST_FIXTURE_H_
#define BATON_STORE_SQLITE_TASK_STORE_TEST_FIXTURE_H_

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
#include "baton/store/sqlite_task_store.h"
#include "baton/util/file_util.h"

namespace baton {
namespace store_test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

inline TaskRecord MakeTask(TaskKind kind, int64_t number, std::string owner,
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
inline TaskRecord FullTask() {
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
      AgentSpec{"claude",          AdapterKind::kClaude,
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

inline void ExpectSameTask(const TaskRecord& got, const TaskRecord& want) {
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

inline std::vector<std::string> Ids(const std::vector<TaskRecord>& tasks) {
  std::vector<std::string> ids;
  for (const auto& task : tasks)
    ids.push_back(task.id.ToString());
  return ids;
}

// Runs `sql` on `path` through a plain connection, outside the store.
inline void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

inline std::string RawQuery(const std::string& path, const std::string& sql) {
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

}  // namespace store_test
}  // namespace baton

#endif  // BATON_STORE_SQLITE_TASK_STORE_TEST_FIXTURE_H_
