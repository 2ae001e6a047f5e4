// A full disk under batond's database (issue #12, finding 1): nothing is
// answered before the state it depends on is durable, a task whose commit
// failed does not exist, an end is never lost, and no id a client was told
// is ever reused. The disk-full window is the LD_PRELOAD fault library
// (tests/support/fault_inject.c) on batond's database files.
#include <gmock/gmock.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

class DiskFullTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    control_ = home_ + "/disk-full";
    faults_ = home_ + "/faults.log";
    // batond (and the supervisor it starts) load the library; only writes
    // to the database, its WAL and its shared-memory index fail.
    std::map<std::string, std::string> env = {
        {"LD_PRELOAD", BATON_FAULT_INJECT_LIB},
        {"BATON_FAULT_CONTROL", control_},
        {"BATON_FAULT_PATH", FaultPath()},
        {"BATON_FAULT_ERRNO", "ENOSPC"},
        {"BATON_FAULT_LOG", faults_},
        {"ASAN_OPTIONS", "verify_asan_link_order=0"}};
    auto started = Baton({"daemon", "start"}, env);
    ASSERT_EQ(started.exit_code, 0) << started.err;
  }
  void TearDown() override {
    CloseWindow();
    BatonTest::TearDown();
  }

  // The files whose writes fail while the window is open.
  virtual std::string FaultPath() const { return "*/baton.db*"; }
  void OpenWindow() { std::ofstream{control_}; }
  void CloseWindow() { ::unlink(control_.c_str()); }
  std::string Log() { return ReadFile(home_ + "/batond.log").value_or(""); }

  std::string control_;
  std::string faults_;
};

TEST_F(DiskFullTest, ARunIsRefusedClearlyAndItsTaskNeverExists) {
  EXPECT_EQ(Run("true"), "shell-1");
  // Its end committed before the window opens: then nothing else waits to
  // be saved, and reads go on being served.
  ASSERT_EQ(Baton({"wait", "shell-1"}).exit_code, 0);
  std::this_thread::sleep_for(milliseconds(100));
  OpenWindow();
  std::string marker = home_ + "/ran";
  auto run = Baton({"run", "--", "touch " + marker});
  EXPECT_NE(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, HasSubstr("cannot save state: disk full (ENOSPC)"));
  EXPECT_THAT(run.err, HasSubstr("free space and retry"));
  // `run --wait` gets the error too instead of waiting for a task that
  // never starts.
  auto waited = Baton({"run", "--wait", "--", "true"}, {}, seconds(20));
  EXPECT_FALSE(waited.timed_out) << "run --wait hung while the disk was full";
  EXPECT_NE(waited.exit_code, 0);
  EXPECT_THAT(waited.err, HasSubstr("disk full"));
  ASSERT_NE(ReadFile(faults_).value_or(""), "") << "the window was not hit";
  // Reads that change nothing are still served.
  EXPECT_EQ(Status("shell-1")["status"], "completed");

  CloseWindow();
  // Numbers of runs that failed are not handed out again by this batond.
  std::string after = Run("echo after");
  EXPECT_EQ(after, "shell-4");
  std::this_thread::sleep_for(milliseconds(1500));  // Any retry is done.
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a refused task ran";
  for (const char* lost : {"shell-2", "shell-3"}) {
    auto status = Baton({"status", lost});
    EXPECT_NE(status.exit_code, 0) << lost << " exists: " << status.out;
    EXPECT_THAT(status.err, HasSubstr("no task"));
  }

  // What a client was told survives a crash, and its id is not reused.
  KillDaemonHard();
  EXPECT_EQ(Status(after)["status"], "completed");
  EXPECT_EQ(Run("true"), "shell-5");
}

TEST_F(DiskFullTest, AnEndWhileTheDiskIsFullIsToldAndSurvivesACrash) {
  std::string gate = home_ + "/gate";
  std::string id =
      Run("while [ ! -e " + gate + " ]; do sleep 0.01; done; exit 7");
  ASSERT_EQ(WaitStarted(id)["status"], "running");
  OpenWindow();
  std::ofstream{gate};
  // The supervisor holds the exit record until batond has committed it,
  // so the waiter may hear of the end now.
  auto waited = Baton({"--json", "wait", id}, {}, seconds(20));
  ASSERT_FALSE(waited.timed_out);
  auto ended = waited.json()["ended"];
  ASSERT_EQ(ended.size(), 1u) << waited.out << waited.err;
  EXPECT_EQ(ended[0]["detail"], "exit code: 7");

  // batond dies before it could commit the end: the supervisor writes the
  // exit record to the task's folder, and the next batond reads it.
  KillDaemonHard();
  CloseWindow();
  auto task = Status(id);
  EXPECT_EQ(task["status"], "failed");
  EXPECT_EQ(task["detail"], "exit code: 7");
}

// The whole disk full, not only the database: the supervisor cannot write
// the exit record either when batond dies (issue 35, finding 2).
class WholeDiskFullTest : public DiskFullTest {
 protected:
  std::string FaultPath() const override { return "*"; }

  // A task that ends `exit 4` while nothing can be written, and whose end
  // batond has told but not committed; its id.
  std::string EndWhileNothingCanBeWritten() {
    std::string gate = home_ + "/gate";
    std::string id =
        Run("while [ ! -e " + gate + " ]; do sleep 0.01; done; exit 4");
    EXPECT_EQ(WaitStarted(id)["status"], "running");
    OpenWindow();
    std::ofstream{gate};
    EXPECT_FALSE(Baton({"wait", id}, {}, seconds(20)).timed_out);
    return id;
  }
  void ExpectExitFour(const std::string& id) {
    auto task = Status(id);
    EXPECT_EQ(task["status"], "failed") << task.dump();
    EXPECT_EQ(task["exit_code"], 4) << task.dump();
  }
};

TEST_F(WholeDiskFullTest,
       AnEndKeptThroughABatondDeathWhileNothingCanBeWritten) {
  std::string id = EndWhileNothingCanBeWritten();
  // batond dies before it could commit the end, and the supervisor cannot
  // write the record to the task's folder: it keeps it until it can, or
  // until a batond takes it.
  KillDaemonHard();
  std::this_thread::sleep_for(milliseconds(1500));  // A retry fails too.
  CloseWindow();
  ExpectExitFour(id);
}

// The same, with a batond that comes back while the disk is still full:
// its supervisor hands it the record it holds.
TEST_F(WholeDiskFullTest, ABatondThatComesBackWhileTheDiskIsFullIsToldTheEnd) {
  std::string id = EndWhileNothingCanBeWritten();
  KillDaemonHard();
  // Reads are served by the new batond though it cannot commit.
  auto waited = Baton({"--json", "wait", id}, {}, seconds(30));
  ASSERT_FALSE(waited.timed_out);
  EXPECT_EQ(waited.json()["ended"][0]["detail"], "exit code: 4")
      << waited.out << waited.err;
  CloseWindow();
  std::this_thread::sleep_for(milliseconds(1500));  // Its commit is retried.
  KillDaemonHard();
  ExpectExitFour(id);
}

TEST_F(DiskFullTest, AnEndIsCommittedOnceSpaceIsBackAndTheLogSaysItOnce) {
  std::string gate = home_ + "/gate";
  std::string id =
      Run("while [ ! -e " + gate + " ]; do sleep 0.01; done; exit 3");
  ASSERT_EQ(WaitStarted(id)["status"], "running");
  OpenWindow();
  std::ofstream{gate};
  auto waited = Baton({"--json", "wait", id}, {}, seconds(20));
  ASSERT_EQ(waited.json()["ended"].size(), 1u) << waited.out << waited.err;
  // Several retries fail meanwhile; the log says so once.
  std::this_thread::sleep_for(milliseconds(3500));
  CloseWindow();
  std::this_thread::sleep_for(milliseconds(1500));
  std::string log = Log();
  EXPECT_EQ(Occurrences(log, "cannot save state"), 1u) << log;
  EXPECT_EQ(Occurrences(log, "state saved again"), 1u) << log;

  // Only the database has the end now: without batond and the supervisor
  // a restart must still find it.
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  ASSERT_GT(supervisor_pid, 0);
  ASSERT_EQ(kill(daemon_pid, SIGKILL), 0);
  // With no task left and batond gone, the supervisor may exit (and be
  // reaped) on its own before this line runs.
  ASSERT_TRUE(kill(supervisor_pid, SIGKILL) == 0 || errno == ESRCH)
      << std::strerror(errno);
  ASSERT_TRUE(WaitForPidGone(daemon_pid, seconds(5)));
  ASSERT_TRUE(WaitForPidGone(supervisor_pid, seconds(5)));
  ::unlink((home_ + "/tasks/" + id + "/exit.json").c_str());
  auto task = Status(id);
  EXPECT_EQ(task["status"], "failed");
  EXPECT_EQ(task["detail"], "exit code: 3");
}

// The same promises on a real full file system: the whole state folder on
// a small tmpfs, filled to the brim (needs the right to mount: root with
// CAP_SYS_ADMIN; skipped elsewhere).
class FullTmpfsTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (::mount("tmpfs", home_.c_str(), "tmpfs", 0, "size=16m,mode=0700") !=
        0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    ::unlink(ballast().c_str());
    BatonTest::TearDown();
    if (mounted_)
      ::umount2(home_.c_str(), MNT_DETACH);
    ::rmdir(home_.c_str());
  }
  std::string ballast() const { return home_ + "/ballast"; }

  bool mounted_ = false;
};

TEST_F(FullTmpfsTest, EveryIdToldSurvivesAndNoneIsReused) {
  std::set<std::string> told = {Run("true")};
  // Fill the file system: what batond writes next finds no room.
  auto filled = RunProcess(
      {"/bin/sh", "-c", "cat /dev/zero > " + ballast() + " 2>/dev/null; :"}, {},
      seconds(30));
  ASSERT_FALSE(filled.timed_out);
  int refused = 0;
  for (int i = 0; i < 60 && refused < 3; ++i) {
    auto run = Baton({"run", "--", "true"});
    if (run.exit_code == 0) {
      std::string id = run.out.substr(0, run.out.find('\n'));
      EXPECT_TRUE(told.insert(id).second) << id << " was told twice";
      continue;
    }
    EXPECT_THAT(run.err, HasSubstr("cannot save state: disk full (ENOSPC)"));
    ++refused;
  }
  EXPECT_GT(refused, 0) << "no run failed on a full file system";

  // A crash while the disk is still full, then space back: every id a
  // client was told is there.
  KillDaemonHard();
  ::unlink(ballast().c_str());
  for (const std::string& id : told) {
    auto status = Baton({"--json", "status", id});
    EXPECT_EQ(status.exit_code, 0) << id << " was told but is lost";
  }
  std::string next = Run("true");
  EXPECT_FALSE(told.contains(next)) << next << " was handed out again";
}

}  // namespace
}  // namespace baton::testing
