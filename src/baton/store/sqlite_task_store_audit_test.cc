// SqliteTaskStore's audit trail (sqlite_task_store_audit.cc).
#include "baton/store/sqlite_task_store_test_fixture.h"

namespace baton {
namespace store_test {
namespace {

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
    store->DropBatch();
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

}  // namespace
}  // namespace store_test
}  // namespace baton
