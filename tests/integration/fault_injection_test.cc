// Fault injection (issue 12, "Machinery"; doc/faults.md): batond killed at
// each step of a run's life, deterministically (BATON_CRASH_AT), and the
// database locked by another process. Each checks the promises: nothing
// answered is lost, nothing runs twice, no id is reused, no status lies.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class FaultInjectionTest : public BatonTest {
 protected:
  // A home of its own per case (so each batond counts its passes from a
  // fresh start), stopped and removed at the end of the test.
  std::map<std::string, std::string> Home(const std::string& name) {
    std::string home = home_ + "/" + name;
    homes_.push_back(home);
    return {{"BATON_HOME", home}};
  }
  void TearDown() override {
    for (const std::string& home : homes_) {
      Baton({"daemon", "stop", "--kill-tasks"}, {{"BATON_HOME", home}},
            seconds(20));
    }
    BatonTest::TearDown();
  }
  int DaemonPid(const std::map<std::string, std::string>& env) {
    auto doc = Baton({"--json", "daemon", "status"}, env).json();
    return doc.is_object() ? doc.value("daemon_pid", 0) : 0;
  }
  std::vector<std::string> homes_;
};

// Every step a run goes through: its create (pass 1), its start (pass 2,
// the spawn's answer), its end (pass 3); at each, batond dies before the
// commit, after it, after the supervisor's requests left, and after the
// replies left. Then a batond without the crash takes over.
TEST_F(FaultInjectionTest, BatondKilledAtEachStepOfARunLosesAndRepeatsNothing) {
  std::ostringstream table;
  for (const char* point :
       {"before-commit", "after-commit", "after-flush", "after-reply"}) {
    for (int pass = 1; pass <= 3; ++pass) {
      std::string name = fmt::format("{}-{}", point, pass);
      SCOPED_TRACE(name);
      auto env = Home(name);
      std::string ran = home_ + "/ran-" + name;
      auto crashing = env;
      crashing["BATON_CRASH_AT"] = fmt::format("{}:{}", point, pass);
      ASSERT_EQ(Baton({"daemon", "start"}, crashing).exit_code, 0);
      int pid = DaemonPid(env);
      ASSERT_GT(pid, 0);

      auto run = Baton({"--json", "run", "--", "sh", "-c",
                        "echo $BATON_TASK_ID >> " + ran + "; sleep 0.3"},
                       env);
      // Each pass comes, so batond dies at the one armed.
      ASSERT_TRUE(WaitForPidGone(pid, seconds(20)));
      std::string answered;
      if (run.exit_code == 0) {
        answered = run.json()["task"]["id"].get<std::string>();
      } else {
        EXPECT_EQ(run.exit_code, 2) << run.err;
      }

      // A new batond (started by this call) takes over.
      auto all = Baton({"--json", "ls", "--all"}, env).json()["tasks"];
      ASSERT_TRUE(all.is_array()) << all.dump();
      std::vector<std::string> ids;
      for (const auto& task : all)
        ids.push_back(task["id"].get<std::string>());
      if (!ids.empty()) {
        std::vector<std::string> wait = {"wait", "--all", "--timeout", "30s"};
        wait.insert(wait.end(), ids.begin(), ids.end());
        Baton(wait, env, seconds(40));
      }
      std::map<std::string, int> runs;
      std::istringstream lines(ReadFile(ran).value_or(""));
      for (std::string line; std::getline(lines, line);)
        ++runs[line];

      // Answered: it exists, ran once, and completed.
      if (!answered.empty()) {
        ASSERT_EQ(ids, std::vector<std::string>{answered});
      }
      // Whatever exists ran at most once, and says truly whether it ran.
      std::string outcome = answered.empty() ? "not answered" : "answered";
      for (const std::string& id : ids) {
        auto task = Baton({"--json", "status", id}, env).json()["task"];
        std::string status = task["status"];
        EXPECT_LE(runs[id], 1) << id;
        if (status == "completed") {
          EXPECT_EQ(runs[id], 1) << task.dump();
          EXPECT_TRUE(task["pid"].is_number()) << task.dump();
          EXPECT_TRUE(task["started_at"].is_string()) << task.dump();
        } else {
          EXPECT_NE(status, "running") << task.dump();
          EXPECT_EQ(runs[id], 0) << "ran, yet " << task.dump();
        }
        outcome += ", " + id + " " + status;
        if (!answered.empty()) {
          EXPECT_EQ(status, "completed") << task.dump();
        }
      }
      // Nothing ran that does not exist.
      for (const auto& [id, count] : runs) {
        EXPECT_TRUE(std::find(ids.begin(), ids.end(), id) != ids.end())
            << id << " ran and was lost";
      }
      // Before the first commit nothing exists; after it, the task does.
      if (std::string(point) == "before-commit" && pass == 1) {
        EXPECT_TRUE(ids.empty()) << all.dump();
        EXPECT_TRUE(answered.empty());
      } else {
        EXPECT_EQ(ids.size(), 1u) << all.dump();
      }
      // No id is reused: the next run gets a new one.
      auto next = Baton({"--json", "run", "--", "true"}, env).json();
      ASSERT_TRUE(next.is_object()) << next.dump();
      std::string next_id = next["task"]["id"];
      EXPECT_TRUE(std::find(ids.begin(), ids.end(), next_id) == ids.end())
          << next_id;
      table << name << ": " << outcome << "\n";
    }
  }
  std::cout << table.str();
}

// Another process holds the database's write lock (a `sqlite3` shell, a
// backup): a run waits out SQLite's busy timeout, is refused clearly and
// changes nothing; a task that ends meanwhile is committed once the lock
// goes; batond serves on.
TEST_F(FaultInjectionTest, ALockedDatabaseRefusesClearlyAndLosesNothing) {
  std::string gate = home_ + "/gate";
  std::string first = Run("while [ ! -e " + gate + " ]; do sleep 0.02; done");
  // Hold an exclusive lock until told to stop (bounded: 30 s).
  std::string unlock = home_ + "/unlock";
  RunningProcess holder(
      {"/usr/bin/env", "python3", "-c",
       "import os, sqlite3, sys, time\n"
       "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
       "c.execute('BEGIN EXCLUSIVE')\n"
       "print('locked', flush=True)\n"
       "end = time.time() + 30\n"
       "while not os.path.exists(sys.argv[2]) and time.time() < end:\n"
       "    time.sleep(0.02)\n"
       "c.execute('ROLLBACK')\n",
       home_ + "/baton.db", unlock},
      {});
  ASSERT_TRUE(holder.ReadUntil("locked", seconds(10)));

  auto refused = Baton({"run", "--", "true"});
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("locked"), std::string::npos) << refused.err;
  // The first task ends while the lock is held: its end waits for it.
  std::ofstream(gate) << "";
  std::this_thread::sleep_for(milliseconds(500));
  std::ofstream(unlock) << "";
  auto waited = Baton({"--json", "wait", "--timeout", "20s", first});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_EQ(waited.json()["ended"][0]["status"], "completed") << waited.out;

  // The refused run never existed; the next one gets the next id.
  auto all = Baton({"--json", "ls", "--all"}).json()["tasks"];
  ASSERT_EQ(all.size(), 1u) << all.dump();
  // As after a full disk (disk_full_test.cc), the refused run's number is
  // not handed out again by this batond.
  EXPECT_EQ(Run("true"), "shell-3");
  // The end survives a crash: it was committed, not only told.
  KillDaemonHard();
  EXPECT_EQ(Status(first)["status"], "completed");
}

// EIO under the database (a failing disk, the LD_PRELOAD fault library of
// disk_full_test.cc): a run is refused with what to do, nothing of it
// exists, and batond goes on once the disk answers again.
TEST_F(FaultInjectionTest, AnIoErrorUnderTheDatabaseRefusesClearly) {
  std::string control = home_ + "/failing";
  std::string faults = home_ + "/faults.log";
  auto started = Baton({"daemon", "start"},
                       {{"LD_PRELOAD", BATON_FAULT_INJECT_LIB},
                        {"BATON_FAULT_CONTROL", control},
                        {"BATON_FAULT_PATH", "*/baton.db*"},
                        {"BATON_FAULT_ERRNO", "EIO"},
                        {"BATON_FAULT_LOG", faults},
                        {"ASAN_OPTIONS", "verify_asan_link_order=0"}});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  EXPECT_EQ(Run("true"), "shell-1");
  ASSERT_EQ(Baton({"wait", "shell-1"}).exit_code, 0);
  std::this_thread::sleep_for(milliseconds(100));
  std::ofstream{control};
  std::string marker = home_ + "/ran";
  auto run = Baton({"run", "--", "touch " + marker});
  ::unlink(control.c_str());
  EXPECT_NE(run.exit_code, 0) << run.out;
  EXPECT_NE(run.err.find("cannot save state: I/O error (EIO)"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("check the disk, then retry"), std::string::npos);
  ASSERT_NE(ReadFile(faults).value_or(""), "") << "the window was not hit";
  std::string after = Run("echo after");
  EXPECT_EQ(Baton({"wait", after}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a refused task ran";
  auto all = Baton({"--json", "ls", "--all"}).json()["tasks"];
  EXPECT_EQ(all.size(), 2u) << all.dump();
}

}  // namespace
}  // namespace baton::testing
