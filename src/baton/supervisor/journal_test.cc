#include "baton/supervisor/journal.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "baton/supervisor/process_info.h"
#include "baton/supervisor/spawn_pool.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/baton-journal-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = dir;
    path_ = root_ + "/supervisor.journal";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  JournalTask Started(const std::string& task, int64_t pid) {
    JournalTask t;
    t.task = task;
    t.started = true;
    t.pid = pid;
    t.start_ticks = 1000 + pid;
    t.started_ms = 5000;
    t.exit_file = "/x/" + task + "/exit.json";
    t.log = "/x/" + task + "/output.log";
    t.deadline_ms = 9000;
    t.grace_ms = 300;
    return t;
  }

  std::string root_;
  std::string path_;
};

TEST_F(JournalTest, ANewSupervisorReadsWhatTheLastOneLeftOpen) {
  {
    auto opened = Journal::Open(path_, "boot-1");
    ASSERT_TRUE(opened) << opened.error().message;
    Journal& journal = *opened->first;
    EXPECT_TRUE(opened->second.open.empty());
    journal.Spawning({.task = "shell-1"});
    journal.Started(Started("shell-1", 11));
    journal.Spawning({.task = "shell-2"});
    journal.Started(Started("shell-2", 12));
    JournalTask stopped = Started("shell-2", 12);
    stopped.cause = ExitCause::kKilled;
    stopped.stopped_ms = 7000;
    stopped.stop_grace_ms = 200;
    journal.Stopped(stopped);
    journal.Spawning({.task = "shell-3"});  // Its child never said "began".
    journal.Spawning({.task = "shell-4"});
    journal.Ended("shell-4");  // Its spawn failed.
    journal.Spawning({.task = "shell-5"});
    journal.Started(Started("shell-5", 15));
    journal.Ended("shell-5");
  }
  ASSERT_TRUE(AppendReapedRecord(path_, {11, 1011, 3 << 8, 8000}));
  {
    // A line cut short by a crash is skipped.
    std::string text = ReadFile(path_).value_or("");
    ASSERT_TRUE(WriteFileAtomic(path_, text + R"({"op":"ended","ta)"));
  }
  auto opened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(opened);
  const JournalState& state = opened->second;
  ASSERT_EQ(state.open.size(), 2u);
  const JournalTask& one = state.open.at("shell-1");
  EXPECT_TRUE(one.started);
  EXPECT_EQ(one.pid, 11);
  EXPECT_EQ(one.start_ticks, 1011u);
  EXPECT_EQ(one.exit_file, "/x/shell-1/exit.json");
  EXPECT_EQ(one.deadline_ms, 9000);
  EXPECT_EQ(one.grace_ms, 300);
  EXPECT_EQ(one.cause, ExitCause::kNatural);
  const JournalTask& two = state.open.at("shell-2");
  EXPECT_EQ(two.cause, ExitCause::kKilled);
  EXPECT_EQ(two.stopped_ms, 7000);
  EXPECT_EQ(two.stop_grace_ms, 200);
  // Never ran: forgotten, so that it may be sent again and run once.
  EXPECT_FALSE(state.open.contains("shell-3"));
  EXPECT_FALSE(state.known.Contains("shell-3"));
  ASSERT_EQ(state.reaped.size(), 1u);
  EXPECT_EQ(state.reaped[0].pid, 11);
  EXPECT_EQ(state.reaped[0].status, 3 << 8);
  for (const char* task : {"shell-1", "shell-4", "shell-5"})
    EXPECT_TRUE(state.known.Contains(task)) << task;
  EXPECT_FALSE(state.known.Contains("shell-6"));

  // Reopened, the file holds only what is open: the same state again.
  auto again = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->second.open.size(), 2u);
  EXPECT_EQ(again->second.open.at("shell-2").cause, ExitCause::kKilled);
  EXPECT_TRUE(again->second.reaped.empty());
  EXPECT_FALSE(again->second.known.Contains("shell-5"));
}

TEST_F(JournalTest, AnotherBootsJournalIsIgnored) {
  {
    auto opened = Journal::Open(path_, "boot-1");
    ASSERT_TRUE(opened);
    opened->first->Started(Started("shell-1", 11));
  }
  auto opened = Journal::Open(path_, "boot-2");
  ASSERT_TRUE(opened);
  EXPECT_TRUE(opened->second.open.empty());
  EXPECT_FALSE(opened->second.known.Contains("shell-1"));
}

TEST_F(JournalTest, KeeperRecordsAreReadAsTheyCome) {
  auto opened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(opened);
  Journal& journal = *opened->first;
  journal.Started(Started("shell-1", 11));
  EXPECT_TRUE(journal.ReadReaped().empty());
  ASSERT_TRUE(AppendReapedRecord(path_, {11, 1011, 9, 8000}));
  auto reaped = journal.ReadReaped();
  ASSERT_EQ(reaped.size(), 1u);
  EXPECT_EQ(reaped[0].status, 9);
  EXPECT_TRUE(journal.ReadReaped().empty());
  // Compaction keeps what is open and drops the rest.
  journal.Compact({Started("shell-1", 11)});
  journal.Ended("shell-1");
  EXPECT_TRUE(Journal::Open(path_, "boot-1")->second.open.empty());
}

// Issue 35, finding 1: a keeper's record appended while a new supervisor
// read and rewrote the journal went to the file it replaced, and the task
// that ended in that window came back "interrupted".
TEST_F(JournalTest, NoKeeperRecordIsLostToARewrite) {
  ASSERT_TRUE(Journal::Open(path_, "boot-1"));
  constexpr int kRecords = 2000;
  std::thread keeper([&] {
    for (int pid = 1; pid <= kRecords; ++pid)
      ASSERT_TRUE(AppendReapedRecord(path_, {pid, 7, 0, 8000}));
  });
  std::multiset<int64_t> seen;
  auto take = [&](const std::vector<ReapedRecord>& records) {
    for (const ReapedRecord& record : records)
      seen.insert(record.pid);
  };
  // Supervisors coming one after another, each compacting as it runs.
  for (int round = 0; round < 200; ++round) {
    auto opened = Journal::Open(path_, "boot-1");
    ASSERT_TRUE(opened) << opened.error().message;
    take(opened->second.reaped);
    take(opened->first->ReadReaped());
    opened->first->Compact({});
  }
  keeper.join();
  auto last = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(last);
  take(last->second.reaped);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRecords));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(),
            static_cast<size_t>(kRecords))
      << "a record was read twice";
}

// The supervisor's own records of early exits (a task that ended before
// its spawn's outcome came back) are carried over only while their task is
// open: carried at every compaction they grew the journal without end.
TEST_F(JournalTest, OwnEarlyExitRecordsGoOnceTheirTaskIsDone) {
  auto opened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(opened);
  Journal& journal = *opened->first;
  for (int pid = 1000; pid < 3000; ++pid)
    journal.Reaped({pid, 7, 0, 8000});  // Their tasks are done.
  journal.Reaped({22, 2022, 0, 8000});  // Its task is still open.
  ASSERT_TRUE(AppendReapedRecord(path_, {23, 2023, 0, 8000}));  // A keeper's.
  journal.Compact({Started("shell-2", 22)});
  EXPECT_LT(journal.size(), 1000u);
  auto state = Journal::Open(path_, "boot-1")->second;
  std::set<int64_t> pids;
  for (const ReapedRecord& record : state.reaped)
    pids.insert(record.pid);
  EXPECT_EQ(pids, (std::set<int64_t>{22, 23}));
}

// A spawn a thread has begun is the journal's to keep until the loop takes
// it over, also across a compaction.
TEST_F(JournalTest, ACompactionKeepsSpawnsTheLoopHasNotClaimed) {
  auto opened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(opened);
  Journal& journal = *opened->first;
  journal.Spawning({.task = "shell-2"});
  journal.Started(Started("shell-2", 12));
  journal.Spawning({.task = "shell-3"});
  journal.Started(Started("shell-3", 13));
  journal.Claim("shell-3");  // The loop passes it to Compact itself.
  journal.Compact({});
  auto state = Journal::Open(path_, "boot-1")->second;
  ASSERT_EQ(state.open.size(), 1u);
  EXPECT_TRUE(state.open.at("shell-2").started);
  EXPECT_EQ(state.open.at("shell-2").pid, 12);
}

// Issue 35, finding 1: spawns queued behind others were journaled
// "spawning" when they arrived; a supervisor killed then left them
// "interrupted" though they never ran. Only a spawn that begins is named.
TEST_F(JournalTest, ASpawnIsNamedOnlyOnceItBegins) {
  auto opened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(opened);
  SpawnRequest refused;
  refused.task = "shell-1";
  refused.argv = {"/bin/true"};
  refused.cwd = root_ + "/missing";
  refused.log = root_ + "/shell-1/output.log";
  refused.exit_file = root_ + "/shell-1/exit.json";
  EXPECT_FALSE(
      StartTask(refused, nullptr, nullptr, opened->first.get()).error.empty());
  SpawnRequest runs = refused;
  runs.task = "shell-2";
  runs.cwd = root_;
  runs.env = {"BATON_TASK_ID=shell-2"};
  runs.log = root_ + "/shell-2/output.log";
  runs.exit_file = root_ + "/shell-2/exit.json";
  runs.timeout = std::chrono::milliseconds(60000);
  SpawnOutcome started = StartTask(runs, nullptr, nullptr, opened->first.get());
  ASSERT_TRUE(started.error.empty()) << started.error;
  ::waitpid(started.pid, nullptr, 0);
  EXPECT_EQ(started.record.pid, started.pid);

  // The child said so itself, before its exec.
  EXPECT_NE(ReadFile(path_).value_or("").find(
                R"({"op":"began","task":"shell-2","pid":)" +
                std::to_string(started.pid) + "}\n"),
            std::string::npos);
  auto state = Journal::Open(path_, "boot-1")->second;
  EXPECT_FALSE(state.known.Contains("shell-1"));
  ASSERT_EQ(state.open.size(), 1u);
  const JournalTask& two = state.open.at("shell-2");
  EXPECT_TRUE(two.started);
  EXPECT_EQ(two.pid, started.pid);
  EXPECT_NE(two.start_ticks, 0u);
  EXPECT_EQ(two.exit_file, runs.exit_file);
  EXPECT_EQ(two.deadline_ms, two.started_ms + 60000);
}

// An exit told to batond is kept until batond acknowledges it, across
// compactions and reopenings.
TEST_F(JournalTest, AnExitRecordIsHeldUntilAcknowledged) {
  {
    auto opened = Journal::Open(path_, "boot-1");
    ASSERT_TRUE(opened);
    Journal& journal = *opened->first;
    for (const char* task : {"shell-1", "shell-2", "shell-3"}) {
      journal.Spawning({.task = task});
      journal.Started(Started(task, 11));
      journal.Claim(task);
      JournalExit held{std::string("/x/") + task + "/exit.json",
                       std::string("{\"task\":\"") + task + "\"}"};
      journal.Ended(task, &held);
    }
    journal.Acked({"shell-1", "shell-9"});
    journal.Compact({});
    journal.Acked({"shell-2"});
  }
  auto state = Journal::Open(path_, "boot-1")->second;
  ASSERT_EQ(state.held.size(), 1u);
  EXPECT_EQ(state.held.at("shell-3").exit_file, "/x/shell-3/exit.json");
  EXPECT_EQ(state.held.at("shell-3").record, R"({"task":"shell-3"})");
  EXPECT_TRUE(state.open.empty());
  // Still held after that reopening's rewrite.
  EXPECT_EQ(Journal::Open(path_, "boot-1")->second.held.size(), 1u);
}

TEST_F(JournalTest,
       ANegativeStartTimeIsReadAsUnknownAndStaysSoAfterTheRewrite) {
  // fuzz/corpus/supervisor_protocol/nasty-journal-huge-task-ids: -1 was
  // cast to 2^64-1, which the rewrite wrote and the next Open read as 0.
  ASSERT_TRUE(WriteFileAtomic(
      path_,
      "{\"op\":\"journal\",\"version\":1,\"boot_id\":\"boot-1\"}\n"
      "{\"op\":\"started\",\"task\":\"shell-1\",\"pid\":1,"
      "\"start_ticks\":-1,\"started_ms\":1,\"grace_ms\":5}\n"
      "{\"op\":\"reaped\",\"pid\":2,\"start_ticks\":-1,\"status\":0}\n"));
  auto opened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(opened) << opened.error().message;
  ASSERT_TRUE(opened->second.open.contains("shell-1"));
  EXPECT_EQ(opened->second.open["shell-1"].start_ticks, 0u);
  EXPECT_TRUE(opened->second.reaped.empty());
  auto reopened = Journal::Open(path_, "boot-1");
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_EQ(reopened->second.open["shell-1"].start_ticks, 0u);
}

TEST_F(JournalTest, AStopOfATaskNotStartedIsIgnoredAsTheRewriteDoes) {
  // fuzz/corpus/supervisor_protocol/stop-before-started: the first Open
  // kept the stop's cause on a task only being spawned, the rewrite wrote
  // only "spawning", and the next Open read it as not stopped.
  ASSERT_TRUE(WriteFileAtomic(
      path_,
      "{\"op\":\"journal\",\"version\":1,\"boot_id\":\"boot-1\"}\n"
      "{\"op\":\"spawning\",\"task\":\"shell-2\"}\n"
      "{\"op\":\"stop\",\"task\":\"shell-2\",\"cause\":\"killed\","
      "\"stopped_ms\":1,\"grace_ms\":1}\n"));
  for (int open = 0; open < 2; ++open) {
    auto opened = Journal::Open(path_, "boot-1");
    ASSERT_TRUE(opened) << opened.error().message;
    JournalTask& task = opened->second.open["shell-2"];
    EXPECT_FALSE(task.started);
    EXPECT_EQ(task.cause, ExitCause::kNatural) << "open " << open;
  }
}

TEST(TaskIdSetTest, KeepsRunsOfIds) {
  TaskIdSet set;
  for (int n : {5, 3, 4, 1, 9, 2, 7, 8})
    set.Insert("shell-" + std::to_string(n));
  set.Insert("agent-2");
  set.Insert("odd name");
  for (int n : {1, 2, 3, 4, 5, 7, 8, 9})
    EXPECT_TRUE(set.Contains("shell-" + std::to_string(n))) << n;
  EXPECT_FALSE(set.Contains("shell-6"));
  EXPECT_FALSE(set.Contains("shell-10"));
  EXPECT_FALSE(set.Contains("shell-0"));
  EXPECT_TRUE(set.Contains("agent-2"));
  EXPECT_FALSE(set.Contains("agent-1"));
  EXPECT_TRUE(set.Contains("odd name"));
  set.Insert("shell-6");
  EXPECT_TRUE(set.Contains("shell-6"));
}

TEST(ProcessInfoTest, ReadsStatAcrossOddCommandNames) {
  auto stat = ParseProcStat(
      "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
      "123456 1000 200 18446744073709551615");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->pgrp, 42);
  EXPECT_EQ(stat->session, 42);
  EXPECT_EQ(stat->start_ticks, 123456u);
  EXPECT_FALSE(ParseProcStat("42 (x) S 1 2"));
  auto self = ReadProcStat(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->ppid, ::getppid());
  EXPECT_GT(self->start_ticks, 0u);
  EXPECT_FALSE(BootId().empty());
  EXPECT_FALSE(GroupMembers(::getpgrp()).empty());
}

}  // namespace
}  // namespace baton
