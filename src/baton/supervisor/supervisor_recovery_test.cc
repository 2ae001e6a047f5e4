// The supervisor across deaths: of batond (what it sent is served), of the
// supervisor itself (a new one adopts its tasks through the journal and
// the keeper), and what a task's leader leaves behind.
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "baton/supervisor/journal.h"
#include "baton/supervisor/process_info.h"
#include "baton/supervisor/supervisor_test_fixture.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

bool Gone(pid_t pid) {
  auto stat = ReadProcStat(pid);
  return !stat || stat->state == 'Z';
}

// Gone, and reaped (by its keeper): only then are its files closed. The
// leader of a process whose other threads still exit already shows 'Z'
// while their descriptor table, and the supervisor's lock with it, lives
// on for a moment; a supervisor started then finds the lock held and
// leaves (batond retries; a test must wait).
bool Reaped(pid_t pid) {
  return !ReadProcStat(pid);
}

bool WaitUntil(const std::function<bool()>& done, milliseconds limit = 5s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class SupervisorRecoveryTest : public SupervisorTest {
 protected:
  SpawnRequest Spawn(const std::string& task, const std::string& command) {
    SpawnRequest spawn;
    spawn.task = task;
    spawn.argv = {"/bin/sh", "-c", command};
    spawn.env = {"PATH=/usr/bin:/bin"};
    spawn.cwd = root_;
    spawn.log = root_ + "/" + task + ".log";
    spawn.exit_file = root_ + "/" + task + ".exit";
    spawn.grace = 100ms;
    return spawn;
  }
  std::optional<ExitedEvent> ExitFile(const std::string& task) {
    auto event = ParseSupervisorEvent(
        ReadFile(root_ + "/" + task + ".exit").value_or(""));
    if (!event || !std::holds_alternative<ExitedEvent>(*event))
      return std::nullopt;
    return std::get<ExitedEvent>(*event);
  }
  // Reads `count` events; exits by task.
  std::map<std::string, ExitedEvent> ReceiveExits(size_t count) {
    std::map<std::string, ExitedEvent> exits;
    while (exits.size() < count) {
      auto exited = ReceiveAs<ExitedEvent>();
      if (exited.task.empty())
        break;
      exits[exited.task] = exited;
    }
    return exits;
  }
};

// Issue 12, finding 8.
TEST_F(SupervisorRecoveryTest, ANewSupervisorAdoptsWhatADeadOneRan) {
  auto [keeper, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  pid_t first = static_cast<pid_t>(ConnectAndGreet().pid);
  auto ends_later = SpawnGated("shell-1", "go1", "exit 3");
  auto ends_meanwhile = SpawnGated("shell-2", "go2", "exit 4");
  SpawnRequest timed = Spawn("shell-3", "sleep 100");
  timed.timeout = 1500ms;
  Send(EncodeMessage(timed));
  task_pids_.push_back(static_cast<pid_t>(ReceiveAs<SpawnedReply>().pid));
  auto killed = SpawnGated("shell-4", "never", "true");

  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return Reaped(first); }));
  client_.reset();
  // Ends while no supervisor runs: its keeper records how.
  Touch("go2");
  ASSERT_TRUE(WaitUntil([&] { return !ReadProcStat(ends_meanwhile.pid); }));

  auto [second_keeper, second_ready] = Fork();
  ASSERT_EQ(second_ready, 'R');
  auto hello = ConnectAndGreet();
  std::map<std::string, LiveTask> live;
  for (const LiveTask& task : hello.live)
    live[task.task] = task;
  EXPECT_EQ(live.size(), 3u);
  EXPECT_EQ(live["shell-1"].pid, ends_later.pid);
  EXPECT_EQ(live["shell-1"].started_ms, ends_later.started_ms);
  EXPECT_TRUE(live.contains("shell-3"));
  EXPECT_TRUE(live.contains("shell-4"));
  auto record = ExitFile("shell-2");
  ASSERT_TRUE(record) << "no exit file for the task that ended meanwhile";
  EXPECT_EQ(record->exit_code, 4);
  EXPECT_EQ(record->pid, ends_meanwhile.pid);
  EXPECT_EQ(record->started_ms, ends_meanwhile.started_ms);

  Touch("go1");
  Send(EncodeMessage(SupervisorKill{"shell-4", 100ms}));
  auto start = std::chrono::steady_clock::now();
  auto exits = ReceiveExits(3);
  EXPECT_EQ(exits["shell-1"].cause, ExitCause::kNatural);
  EXPECT_EQ(exits["shell-1"].exit_code, 3);
  EXPECT_EQ(exits["shell-4"].cause, ExitCause::kKilled);
  EXPECT_EQ(exits["shell-4"].signal, SIGTERM);
  EXPECT_TRUE(Gone(killed.pid));
  EXPECT_EQ(exits["shell-3"].cause, ExitCause::kTimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  // The first keeper leaves once the orphans it kept are gone.
  EXPECT_EQ(WaitExit(keeper), 128 + SIGKILL);
}

// Issue 12, finding 5: whatever batond believes, an id runs once.
TEST_F(SupervisorRecoveryTest, AnIdIsNeverSpawnedTwice) {
  auto [keeper, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  pid_t first = static_cast<pid_t>(ConnectAndGreet().pid);
  Send(EncodeMessage(Spawn("shell-1", "true")));
  EXPECT_EQ(ReceiveAs<SpawnedReply>().task, "shell-1");
  EXPECT_EQ(ReceiveAs<ExitedEvent>().task, "shell-1");
  Send(EncodeMessage(AckRequest{{"shell-1"}}));
  Send(EncodeMessage(Spawn("shell-1", "true")));
  auto refused = ReceiveAs<SpawnFailedReply>();
  EXPECT_TRUE(refused.already_started);
  EXPECT_EQ(refused.error,
            "task shell-1 was started before; it is not run "
            "twice");
  SpawnGated("shell-2", "go", "true");

  // A supervisor that died was starting shell-9: it may run, unseen.
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return Reaped(first); }));
  {
    std::ofstream journal(paths_.home + "/supervisor.journal", std::ios::app);
    // Its child said "began", as pid 1's (which started long before).
    journal << R"({"op":"spawning","task":"shell-9","started_ms":)"
            << WallMillis() << "}\n"
            << R"({"op":"began","task":"shell-9","pid":1})"
            << "\n";
  }
  auto [second_keeper, second_ready] = Fork();
  ASSERT_EQ(second_ready, 'R');
  auto hello = ConnectAndGreet();
  EXPECT_EQ(hello.unknown_ends, std::vector<std::string>{"shell-9"});
  for (const char* task : {"shell-1", "shell-2", "shell-9"}) {
    Send(EncodeMessage(Spawn(task, "true")));
    auto again = ReceiveAs<SpawnFailedReply>();
    EXPECT_EQ(again.task, task);
    EXPECT_TRUE(again.already_started) << task;
  }
  // batond settled shell-9: no later hello names it.
  Send(EncodeMessage(AckRequest{{"shell-9"}}));
  EXPECT_TRUE(ConnectAndGreet().unknown_ends.empty());
}

// Issue 35, finding 1: a supervisor that died inside spawns. A child that
// said "began" is adopted by its pid; one that did not never ran, and its
// id may be sent again; one that began and is gone with no record (its
// keeper died too) cannot be told.
TEST_F(SupervisorRecoveryTest, SpawnsADeadSupervisorWasMakingAreToldApart) {
  int64_t began_ms = WallMillis();
  pid_t began = ::fork();
  ASSERT_GE(began, 0);
  if (began == 0) {
    ::setsid();
    char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"),
                    nullptr};
    ::execv("/bin/sleep", argv);
    ::_exit(127);
  }
  struct KillAtEnd {
    pid_t pid;
    ~KillAtEnd() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, WNOHANG);
    }
  } kill_at_end{began};
  {
    std::filesystem::create_directories(paths_.home);
    std::ofstream journal(paths_.home + "/supervisor.journal");
    journal << R"({"op":"journal","version":2,"boot_id":")" << BootId()
            << "\"}\n";
    for (const char* task : {"shell-7", "shell-8", "shell-9"}) {
      journal << R"({"op":"spawning","task":")" << task << R"(","started_ms":)"
              << began_ms << R"(,"exit_file":")" << root_ << "/" << task
              << R"(.exit","log":")" << root_ << "/" << task
              << R"(.log","grace_ms":100})"
              << "\n";
    }
    journal << R"({"op":"began","task":"shell-7","pid":)" << began << "}\n";
    // A pid no process of this spawn has (its own keeper's, long before).
    journal << R"({"op":"began","task":"shell-9","pid":1})"
            << "\n";
  }
  auto [keeper, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  auto hello = ConnectAndGreet();
  ASSERT_EQ(hello.live.size(), 1u);
  EXPECT_EQ(hello.live[0].task, "shell-7");
  EXPECT_EQ(hello.live[0].pid, began);
  EXPECT_EQ(hello.unknown_ends, std::vector<std::string>{"shell-9"});
  // shell-8 never ran: sent again, it runs.
  Send(EncodeMessage(Spawn("shell-8", "exit 4")));
  EXPECT_EQ(ReceiveAs<SpawnedReply>().task, "shell-8");
  auto exited = ReceiveAs<ExitedEvent>();
  EXPECT_EQ(exited.task, "shell-8");
  EXPECT_EQ(exited.exit_code, 4);
  // shell-7 is adopted: its kill reaches it.
  Send(EncodeMessage(SupervisorKill{"shell-7", 100ms}));
  int status = 0;
  EXPECT_EQ(::waitpid(began, &status, 0), began);
  EXPECT_TRUE(WIFSIGNALED(status));
}

// Issue 35, finding 1: batond was told an end and died before its commit,
// and the supervisor died before it could write the record to its file.
// The next supervisor writes it from the journal.
TEST_F(SupervisorRecoveryTest, AnEndBatondNeverCommittedSurvivesBothDeaths) {
  auto [keeper, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  pid_t first = static_cast<pid_t>(ConnectAndGreet().pid);
  Send(EncodeMessage(Spawn("shell-1", "exit 5")));
  EXPECT_EQ(ReceiveAs<SpawnedReply>().task, "shell-1");
  EXPECT_EQ(ReceiveAs<ExitedEvent>().exit_code, 5);
  // No ack: this batond "dies" with the supervisor.
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return Reaped(first); }));
  EXPECT_FALSE(ExitFile("shell-1"));
  auto [second_keeper, second_ready] = Fork();
  ASSERT_EQ(second_ready, 'R');
  auto recorded = ExitFile("shell-1");
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->exit_code, 5);
  // The new batond finds the file: the task is in no list.
  auto hello = ConnectAndGreet();
  EXPECT_TRUE(hello.live.empty());
  EXPECT_TRUE(hello.unknown_ends.empty());
}

// batond sent more lines than a loop turn serves, then died; the new
// batond connects at once. Nothing the old one sent may be dropped.
TEST_F(SupervisorRecoveryTest, WhatADeadBatondSentIsServedBeforeANewHello) {
  auto [keeper, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  ConnectAndGreet();
  auto gated = SpawnGated("shell-0", "never", "true");
  constexpr int kTasks = 150;
  std::string burst;
  for (int i = 1; i <= kTasks; ++i)
    burst += EncodeMessage(Spawn("shell-" + std::to_string(i), "true")) + "\n";
  burst += EncodeMessage(SupervisorKill{"shell-0", 50ms}) + "\n";
  ASSERT_EQ(::send(client_.get(), burst.data(), burst.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(burst.size()));
  UniqueFd old_client = std::move(client_);
  in_.clear();
  auto hello = ConnectAndGreet();
  std::set<std::string> live;
  for (const LiveTask& task : hello.live)
    live.insert(task.task);
  old_client.reset();
  for (int i = 1; i <= kTasks; ++i) {
    std::string task = "shell-" + std::to_string(i);
    EXPECT_TRUE(live.contains(task) || ExitFile(task)) << task << " dropped";
  }
  // The kill came after the spawns: it reached shell-0, which ended before
  // the hello (exit file) or after it (event).
  ExitedEvent exited;
  if (live.contains("shell-0")) {
    do {
      exited = ReceiveAs<ExitedEvent>();
    } while (!exited.task.empty() && exited.task != "shell-0");
  } else if (auto record = ExitFile("shell-0")) {
    exited = *record;
  }
  EXPECT_EQ(exited.task, "shell-0") << "shell-0 was never killed";
  EXPECT_EQ(exited.cause, ExitCause::kKilled);
  EXPECT_TRUE(Gone(gated.pid));
}

// Issue 13: the processes a leader leaves in its group are stopped as a
// kill stops them, and the end is told once the group is empty.
TEST_F(SupervisorRecoveryTest, ALeaderLeavesNothingBehind) {
  auto [keeper, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  ConnectAndGreet();
  SpawnRequest plain = Spawn("shell-1", "sleep 100 & echo $!");
  SpawnRequest stubborn =
      Spawn("shell-2", "trap '' TERM; sleep 100 & echo $!; exit 3");
  stubborn.grace = 300ms;
  for (const SpawnRequest& spawn : {plain, stubborn}) {
    auto start = std::chrono::steady_clock::now();
    Send(EncodeMessage(spawn));
    task_pids_.push_back(static_cast<pid_t>(ReceiveAs<SpawnedReply>().pid));
    auto exited = ReceiveAs<ExitedEvent>();
    EXPECT_EQ(exited.task, spawn.task);
    EXPECT_EQ(exited.cause, ExitCause::kNatural);
    EXPECT_EQ(exited.exit_code, spawn.task == "shell-1" ? 0 : 3);
    EXPECT_EQ(exited.leftovers, 1);
    pid_t left = std::atoi(ReadFile(spawn.log).value_or("0").c_str());
    ASSERT_GT(left, 0);
    EXPECT_TRUE(Gone(left)) << spawn.task << ": the leftover runs on";
    if (spawn.task == "shell-2") {
      // It ignored SIGTERM: only the grace's SIGKILL ended it.
      EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
    }
  }
}

}  // namespace
}  // namespace baton
