#include "baton/executor/local/local_executor.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "baton/ipc/unix_socket.h"
#include "baton/supervisor/protocol.h"
#include "baton/supervisor/supervisor.h"
#include "baton/util/detached_process.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// Waits (bounded) until `pid`, which need not be our child, has ended.
bool WaitGone(pid_t pid, milliseconds timeout) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd)
    return errno == ESRCH;
  pollfd pfd{pidfd.get(), POLLIN, 0};
  return ::poll(&pfd, 1, static_cast<int>(timeout.count())) == 1;
}

bool Alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

class LocalExecutorTest : public ::testing::Test, public ExecutorListener {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/baton-lx-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = dir;
    paths_ = {root_ + "/home", root_ + "/run"};
    ASSERT_TRUE(paths_.Prepare());
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "---- supervisor.log ----\n"
                << ReadFile(paths_.home + "/supervisor.log").value_or("");
    }
    executor_.reset();
    for (pid_t pid : task_pids_)
      ::kill(-pid, SIGKILL);
    for (pid_t pid : supervisor_pids_) {
      ::kill(pid, SIGKILL);
      EXPECT_TRUE(WaitGone(pid, 5s)) << "supervisor " << pid;
    }
    std::filesystem::remove_all(root_);
  }

  // A connected executor whose supervisor is this test binary, forked (no
  // baton binary needed); it still goes through the double fork and the
  // ready pipe.
  std::unique_ptr<LocalExecutor> MakeExecutor(milliseconds grace = 200ms) {
    auto executor =
        std::make_unique<LocalExecutor>(&loop_, paths_, "/nonexistent", grace);
    executor->set_supervisor_entry_for_testing(
        [paths = paths_](int ready) { ::_exit(RunSupervisor(paths, ready)); });
    executor->SetListener(this);
    auto connected = executor->Connect();
    EXPECT_TRUE(connected) << connected.error().message;
    supervisor_pids_.insert(static_cast<pid_t>(executor->supervisor_pid()));
    return executor;
  }

  TaskRecord Shell(int64_t n, std::string command) {
    TaskRecord task;
    task.id = {TaskKind::kShell, n};
    task.spec.shell_command = std::move(command);
    task.spec.cwd = root_;
    return task;
  }

  // Runs the loop (flushing like batond does) until `done` or 10 s.
  bool RunUntil(const std::function<bool()>& done, milliseconds limit = 10s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      if (executor_)
        executor_->Flush();
      EXPECT_TRUE(loop_.RunOnce(20ms));
    }
    return true;
  }
  bool Exited(const std::string& id) {
    return RunUntil([&] { return exited_.contains(id); });
  }
  std::string Output(const TaskRecord& task) {
    return ReadFile(executor_->OutputPath(task.id)).value_or("");
  }
  void Touch(const std::string& name) { std::ofstream(root_ + "/" + name); }

  void OnTaskSpawned(const TaskId& id, int64_t pid, int64_t) override {
    spawned_[id.ToString()] = pid;
    task_pids_.insert(static_cast<pid_t>(pid));
  }
  void OnTaskPlaced(const TaskId&, const Placement&) override {}
  void OnTaskSpawnFailed(const TaskId& id, const Error& error) override {
    failed_[id.ToString()] = error;
  }
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override {
    EXPECT_FALSE(exited_.contains(id.ToString())) << "reported twice";
    exited_[id.ToString()] = exit;
  }

  std::string root_;
  StatePaths paths_;
  EventLoop loop_;
  std::unique_ptr<LocalExecutor> executor_;
  std::map<std::string, int64_t> spawned_;
  std::map<std::string, Error> failed_;
  std::map<std::string, ExitInfo> exited_;
  std::set<pid_t> task_pids_;
  std::set<pid_t> supervisor_pids_;
};

TEST_F(LocalExecutorTest, RunsTaskAndReportsExitCode) {
  executor_ = MakeExecutor();
  TaskRecord task = Shell(1, "echo $BATON_TASK_ID $FOO; pwd; exit 3");
  task.spec.env_overrides["FOO"] = "bar";
  executor_->Start(task);
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_GT(spawned_["shell-1"], 0);
  const ExitInfo& exit = exited_["shell-1"];
  EXPECT_EQ(exit.cause, ExitCause::kNatural);
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_FALSE(exit.signal);
  EXPECT_GT(exit.ended_ms, 0);
  EXPECT_EQ(Output(task), "shell-1 bar\n" + root_ + "\n");

  // The supervisor keeps each exit record until batond says the task's end
  // is committed, and writes the exit file only if batond goes away first.
  executor_->Start(Shell(2, "exit 4"));
  ASSERT_TRUE(Exited("shell-2"));
  executor_->AcknowledgeExits([](const TaskId& id, const std::string& run) {
    return id.ToString() == "shell-1" && run == "shell-1";
  });
  executor_->Flush();
  auto supervisor = static_cast<pid_t>(executor_->supervisor_pid());
  executor_.reset();
  ASSERT_TRUE(WaitGone(supervisor, 5s));
  EXPECT_FALSE(
      std::filesystem::exists(paths_.tasks_dir() + "/shell-1/exit.json"));
  auto record = ReadFile(paths_.tasks_dir() + "/shell-2/exit.json");
  ASSERT_TRUE(record) << "the unacknowledged exit has no file";
  auto event = ParseSupervisorEvent(*record);
  ASSERT_TRUE(event);
  EXPECT_EQ(std::get<ExitedEvent>(*event).exit_code, 4);
}

// A retried task runs each attempt under its own name (RunName), so that
// the supervisor's spawn-once rule holds per attempt; each attempt after the
// first opens with a marker in the same log and has its own exit file.
TEST_F(LocalExecutorTest, EachAttemptOfARetriedTaskRunsUnderItsOwnName) {
  executor_ = MakeExecutor();
  TaskRecord task = Shell(1, "echo one; exit 1");
  task.spec.retry.retries = 2;
  executor_->Start(task);
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_EQ(exited_["shell-1"].exit_code, 1);
  executor_->AcknowledgeExits(
      [](const TaskId&, const std::string& run) { return run == "shell-1"; });
  exited_.clear();
  task.attempts.push_back({.exit_code = 1, .detail = "exit code: 1"});
  task.spec.shell_command = "echo two; exit 0";
  executor_->Start(task);
  ASSERT_TRUE(Exited("shell-1")) << "the second attempt was refused";
  EXPECT_EQ(exited_["shell-1"].exit_code, 0);
  EXPECT_EQ(Output(task),
            "one\n[baton: attempt 2 of 3 (attempt 1: exit code: 1)]\ntwo\n");
  EXPECT_TRUE(executor_->HoldsExitRecord(task));
  // batond goes away before it acknowledged attempt 2: its record goes to
  // attempt 2's own file, never to the first attempt's.
  auto supervisor = static_cast<pid_t>(executor_->supervisor_pid());
  executor_.reset();
  ASSERT_TRUE(WaitGone(supervisor, 5s));
  std::string dir = paths_.tasks_dir() + "/shell-1";
  EXPECT_FALSE(std::filesystem::exists(dir + "/exit.json"));
  auto record = ReadFile(dir + "/exit.2.json");
  ASSERT_TRUE(record) << "attempt 2's unacknowledged exit has no file";
  auto event = ParseSupervisorEvent(*record);
  ASSERT_TRUE(event);
  EXPECT_EQ(std::get<ExitedEvent>(*event).task, "shell-1.2");
  EXPECT_EQ(std::get<ExitedEvent>(*event).exit_code, 0);
}

// A re-adopted task that ends after the hello but before Adopt() gets no
// exit file (batond is connected): Adopt() takes the event it kept.
TEST_F(LocalExecutorTest, AnExitBetweenHelloAndAdoptIsKept) {
  executor_ = MakeExecutor();
  TaskRecord task = Shell(1, "while [ ! -e go ]; do sleep 0.01; done; exit 9");
  executor_->Start(task);
  ASSERT_TRUE(RunUntil([&] { return spawned_.contains("shell-1"); }));
  auto pid = static_cast<pid_t>(spawned_["shell-1"]);
  executor_.reset();           // batond dies.
  executor_ = MakeExecutor();  // Its hello lists shell-1.
  Touch("go");
  ASSERT_TRUE(WaitGone(pid, 5s));
  for (int i = 0; i < 10; ++i)  // Read the exited event.
    ASSERT_TRUE(loop_.RunOnce(20ms));
  EXPECT_FALSE(exited_.contains("shell-1"));
  executor_->Adopt({task});
  ASSERT_TRUE(exited_.contains("shell-1"));
  EXPECT_EQ(exited_["shell-1"].exit_code, 9);
  EXPECT_FALSE(
      std::filesystem::exists(paths_.tasks_dir() + "/shell-1/exit.json"));
}

TEST_F(LocalExecutorTest, TaskStartsWithCleanSignalsAndFds) {
  executor_ = MakeExecutor();
  // No shell: sh would clear its inherited mask and hide a leak of ours.
  TaskRecord task = Shell(1, "");
  task.spec.shell_command.reset();
  task.spec.argv = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"};
  TaskRecord fds = task;
  fds.id.number = 2;
  fds.spec.argv = {"ls", "/proc/self/fd"};
  executor_->Start(task);
  executor_->Start(fds);
  ASSERT_TRUE(Exited("shell-1"));
  ASSERT_TRUE(Exited("shell-2"));
  // stdio, and the directory ls reads: no supervisor or batond fd.
  EXPECT_EQ(Output(fds), "0\n1\n2\n3\n");
  unsigned long long blocked = 1, ignored = 1;
  ASSERT_EQ(std::sscanf(Output(task).c_str(), "SigBlk: %llx SigIgn: %llx",
                        &blocked, &ignored),
            2)
      << Output(task);
  EXPECT_EQ(blocked, 0u);
  // glibc's posix_spawn leaves its own internal signals (32, 33: bits 31
  // and 32) ignored; applications cannot use them through glibc anyway.
  EXPECT_EQ(ignored & ~(3ull << 31), 0u);
}

TEST_F(LocalExecutorTest, ReportsDeathBySignal) {
  executor_ = MakeExecutor();
  executor_->Start(Shell(1, "kill -USR1 $$"));
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_EQ(exited_["shell-1"].cause, ExitCause::kNatural);
  EXPECT_EQ(exited_["shell-1"].signal, SIGUSR1);
  EXPECT_FALSE(exited_["shell-1"].exit_code);
}

TEST_F(LocalExecutorTest, KillEscalatesToSigkillAfterGrace) {
  executor_ = MakeExecutor();
  TaskRecord task = Shell(1, "trap '' TERM; echo ready; sleep 100");
  executor_->Start(task);
  ASSERT_TRUE(RunUntil([&] { return Output(task) == "ready\n"; }));
  auto killed_at = std::chrono::steady_clock::now();
  executor_->Kill(task.id, 300ms);
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_GE(std::chrono::steady_clock::now() - killed_at, 300ms);
  EXPECT_EQ(exited_["shell-1"].cause, ExitCause::kKilled);
  EXPECT_EQ(exited_["shell-1"].signal, SIGKILL);
}

TEST_F(LocalExecutorTest, KillReachesTheWholeGroup) {
  executor_ = MakeExecutor();
  // A plain grandchild, and one that ignores SIGTERM and outlives the
  // leader: only the SIGKILL after the grace reaches it.
  TaskRecord plain = Shell(1, "sleep 100 & echo $!; sleep 100");
  TaskRecord stubborn = Shell(
      2, "trap '' TERM; sleep 100 & pid=$!; trap - TERM; echo $pid; wait");
  for (const TaskRecord& task : {plain, stubborn}) {
    executor_->Start(task);
    ASSERT_TRUE(RunUntil([&] { return Output(task).ends_with("\n"); }));
    pid_t grandchild = std::atoi(Output(task).c_str());
    ASSERT_GT(grandchild, 0);
    auto killed_at = std::chrono::steady_clock::now();
    executor_->Kill(task.id, 500ms);
    std::string id = task.id.ToString();
    ASSERT_TRUE(Exited(id));
    EXPECT_EQ(exited_[id].cause, ExitCause::kKilled);
    EXPECT_EQ(exited_[id].signal, SIGTERM);  // The leader's.
    // The end is told once the group is empty: for shell-2, after the
    // SIGKILL that only the grace brings.
    EXPECT_TRUE(WaitGone(grandchild, 0ms)) << id;
    if (id == "shell-2") {
      EXPECT_GE(std::chrono::steady_clock::now() - killed_at, 500ms);
    }
  }
}

TEST_F(LocalExecutorTest, TimeoutStopsTheTask) {
  executor_ = MakeExecutor();
  TaskRecord task = Shell(1, "sleep 100");
  task.spec.timeout = 200ms;
  executor_->Start(task);
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_EQ(exited_["shell-1"].cause, ExitCause::kTimedOut);
  EXPECT_EQ(exited_["shell-1"].signal, SIGTERM);
}

TEST_F(LocalExecutorTest, LargeOutputIsCompleteInOrderWithStderrMerged) {
  executor_ = MakeExecutor();
  TaskRecord task = Shell(
      1,
      "seq 1 500000; seq 500001 800000 >&2; printf 'a\\000\\377\\n'; seq 1 3");
  executor_->Start(task);
  ASSERT_TRUE(Exited("shell-1"));
  std::string expected;
  for (int i = 1; i <= 800000; ++i)
    expected += std::to_string(i) + "\n";
  expected += std::string("a\0\377\n", 4) + "1\n2\n3\n";
  ASSERT_GT(expected.size(), 5u << 20);
  std::string output = Output(task);
  EXPECT_EQ(output.size(), expected.size());
  EXPECT_TRUE(output == expected);  // Not EXPECT_EQ: 5 MB diffs.
  EXPECT_EQ(executor_->OutputSize(task), expected.size());
}

TEST_F(LocalExecutorTest, SpawnFailuresAreReported) {
  executor_ = MakeExecutor();
  TaskRecord missing = Shell(1, "");
  missing.spec.shell_command.reset();
  missing.spec.argv = {"/nonexistent/program", "x"};
  TaskRecord not_on_path = missing;
  not_on_path.id.number = 2;
  not_on_path.spec.argv = {"baton-no-such-program"};
  TaskRecord bad_cwd = Shell(3, "true");
  bad_cwd.spec.cwd = root_ + "/no/such/dir";
  TaskRecord empty = missing;
  empty.id.number = 4;
  empty.spec.argv.clear();
  for (const auto& task : {missing, not_on_path, bad_cwd, empty}) {
    executor_->Start(task);
  }
  ASSERT_TRUE(RunUntil([&] { return failed_.size() == 4; }));
  EXPECT_EQ(failed_["shell-1"].message,
            "spawn \"/nonexistent/program\": No such file or directory");
  EXPECT_EQ(failed_["shell-2"].message,
            "spawn \"baton-no-such-program\": No such file or directory");
  EXPECT_EQ(
      failed_["shell-3"].message,
      "working directory " + root_ + "/no/such/dir: No such file or directory");
  EXPECT_EQ(failed_["shell-4"].code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(spawned_.empty());
  EXPECT_TRUE(exited_.empty());
}

TEST_F(LocalExecutorTest, ReadoptsTasksAfterBatondDies) {
  executor_ = MakeExecutor();
  TaskRecord ends = Shell(1, "while [ ! -e go1 ]; do sleep 0.01; done; exit 7");
  TaskRecord lives =
      Shell(2, "while [ ! -e go2 ]; do sleep 0.01; done; exit 4");
  // The store has it and its answer went out; its spawn never left batond.
  TaskRecord never = Shell(3, "echo ran");
  executor_->Start(ends);
  executor_->Start(lives);
  ASSERT_TRUE(RunUntil([&] { return spawned_.size() == 2; }));
  int64_t supervisor = executor_->supervisor_pid();

  executor_.reset();  // batond dies.
  Touch("go1");
  ASSERT_TRUE(RunUntil([&] {
    return FileSize(paths_.tasks_dir() + "/shell-1/exit.json").value_or(0) > 0;
  }));
  EXPECT_TRUE(Alive(supervisor));

  executor_ = MakeExecutor();  // batond restarts.
  EXPECT_EQ(executor_->supervisor_pid(), supervisor);
  executor_->Adopt({ends, lives, never});
  EXPECT_EQ(exited_["shell-1"].exit_code, 7);
  EXPECT_EQ(exited_["shell-1"].cause, ExitCause::kNatural);
  EXPECT_FALSE(exited_.contains("shell-2"));
  // Never started: it is started now, once (issue 12, finding 5).
  ASSERT_TRUE(Exited("shell-3"));
  EXPECT_EQ(exited_["shell-3"].cause, ExitCause::kNatural);
  EXPECT_EQ(exited_["shell-3"].exit_code, 0);
  EXPECT_GT(spawned_["shell-3"], 0);
  EXPECT_EQ(Output(never), "ran\n");

  Touch("go2");
  ASSERT_TRUE(Exited("shell-2"));
  EXPECT_EQ(exited_["shell-2"].exit_code, 4);
}

// batond answered a run and died with the spawn unsent, or sent and not
// yet answered: after the restart each task has run exactly once, and one
// whose start batond never heard of still gets its pid and start from the
// exit record (issue 12, findings 5 and 12).
TEST_F(LocalExecutorTest, AnAnsweredTaskRunsExactlyOnceAcrossARestart) {
  executor_ = MakeExecutor();
  std::string ran = root_ + "/ran";
  std::vector<TaskRecord> tasks;
  for (int64_t n = 1; n <= 20; ++n) {
    tasks.push_back(Shell(n, "echo $BATON_TASK_ID >> " + ran));
    executor_->Start(tasks.back());
    if (n == 10)
      executor_->Flush();  // The first ten reach the supervisor.
  }
  executor_.reset();  // batond dies: no spawned reply was read.
  ASSERT_TRUE(RunUntil([&] {
    for (int n = 1; n <= 10; ++n) {
      std::string file =
          paths_.tasks_dir() + "/shell-" + std::to_string(n) + "/exit.json";
      if (FileSize(file).value_or(0) == 0)
        return false;
    }
    return true;
  }));

  executor_ = MakeExecutor();  // batond restarts; the store says queued.
  executor_->Adopt(tasks);
  for (const TaskRecord& task : tasks) {
    std::string id = task.id.ToString();
    ASSERT_TRUE(Exited(id)) << id;
    EXPECT_EQ(exited_[id].exit_code, 0) << id;
    if (task.id.number <= 10) {
      // Ran before the restart: told through its exit record.
      EXPECT_FALSE(spawned_.contains(id)) << id;
      EXPECT_GT(exited_[id].pid, 0) << id;
      EXPECT_GT(exited_[id].started_ms, 0) << id;
    }
  }
  std::string lines = ReadFile(ran).value_or("");
  for (const TaskRecord& task : tasks) {
    std::string line = task.id.ToString() + "\n";
    size_t first = lines.find(line);
    ASSERT_NE(first, std::string::npos) << "never ran: " << line;
    EXPECT_EQ(lines.find(line, first + 1), std::string::npos)
        << "ran twice: " << line;
  }
}

// Environments go to the supervisor once per connection, in a few slots
// reused in turn: with more distinct ones than slots, and one coming back
// after its slot was taken, each task still runs with its own.
TEST_F(LocalExecutorTest, EachTaskRunsWithItsOwnEnvironment) {
  executor_ = MakeExecutor();
  std::vector<TaskRecord> tasks;
  for (int64_t n = 1; n <= 24; ++n) {
    TaskRecord task = Shell(n, "echo $WHICH $BATON_TASK_ID $SET");
    int64_t which = n == 24 ? 1 : n;  // The first one's again, at the end.
    task.spec.base_env = {"PATH=/usr/bin:/bin", "SET=base",
                          "WHICH=" + std::to_string(which)};
    if (n % 2 == 0)
      task.spec.env_overrides["SET"] = "over";
    executor_->Start(task);
    tasks.push_back(task);
  }
  for (const TaskRecord& task : tasks) {
    std::string id = task.id.ToString();
    ASSERT_TRUE(Exited(id)) << id;
    int64_t which = task.id.number == 24 ? 1 : task.id.number;
    EXPECT_EQ(Output(task), std::to_string(which) + " " + id + " " +
                                (task.id.number % 2 ? "base" : "over") + "\n");
  }
}

// A supervisor still running from before an upgrade speaks protocol 1: it
// would ignore env_id and run the task with only its own entries, so it
// gets whole environments.
TEST_F(LocalExecutorTest, ASupervisorOfProtocolOneGetsWholeEnvironments) {
  std::string record = root_ + "/requests";
  auto executor =
      std::make_unique<LocalExecutor>(&loop_, paths_, "/nonexistent", 200ms);
  // A stand-in: answers hello as version 1, writes down every other line,
  // and leaves after the first spawn.
  executor->set_supervisor_entry_for_testing(
      [paths = paths_, record](int ready) {
        auto listen = ListenUnix(paths.supervisor_socket());
        if (!listen)
          ::_exit(1);
        ReportReady(ready);
        pollfd pfd{listen->get(), POLLIN, 0};
        if (::poll(&pfd, 1, 5000) != 1)
          ::_exit(1);
        auto client = AcceptSameUid(listen->get());
        if (!client || !SetNonBlocking(client->get(), false))
          ::_exit(1);
        std::ofstream out(record);
        std::string in;
        char chunk[65536];
        for (;;) {
          ssize_t n = ::read(client->get(), chunk, sizeof chunk);
          if (n <= 0)
            ::_exit(0);
          in.append(chunk, static_cast<size_t>(n));
          for (size_t nl; (nl = in.find('\n')) != std::string::npos;
               in.erase(0, nl + 1)) {
            std::string line = in.substr(0, nl);
            if (line.find(R"("op":"hello")") != std::string::npos) {
              std::string hello = R"({"op":"hello","version":1,"pid":)" +
                                  std::to_string(::getpid()) +
                                  R"(,"live":[]})" + "\n";
              (void)!::write(client->get(), hello.data(), hello.size());
              continue;
            }
            out << line << "\n" << std::flush;
            if (line.find(R"("op":"spawn")") != std::string::npos)
              ::_exit(0);
          }
        }
      });
  executor->SetListener(this);
  auto connected = executor->Connect();
  ASSERT_TRUE(connected) << connected.error().message;
  auto stand_in = static_cast<pid_t>(executor->supervisor_pid());
  supervisor_pids_.insert(stand_in);

  TaskRecord task = Shell(1, "true");
  task.spec.base_env = {"PATH=/usr/bin:/bin", "WHICH=1", "SET=base"};
  task.spec.env_overrides["SET"] = "over";
  executor->Start(task);
  executor->Flush();
  ASSERT_TRUE(WaitGone(stand_in, 5s));
  std::string lines = ReadFile(record).value_or("");
  ASSERT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << lines;
  auto request = ParseSupervisorRequest(lines.substr(0, lines.size() - 1));
  ASSERT_TRUE(request && std::holds_alternative<SpawnRequest>(*request))
      << lines;
  const auto& spawn = std::get<SpawnRequest>(*request);
  EXPECT_FALSE(spawn.env_id);
  EXPECT_EQ(spawn.env,
            (std::vector<std::string>{"PATH=/usr/bin:/bin", "WHICH=1",
                                      "BATON_TASK_ID=shell-1", "SET=over"}));
}

// The supervisor dies: a new one, started at once, adopts what the dead one
// ran. Those tasks stay killable and under their deadlines, and their exit
// codes are learned through the keeper (issue 12, finding 8).
TEST_F(LocalExecutorTest, ASupervisorsDeathLosesNoTask) {
  executor_ = MakeExecutor();
  TaskRecord gated =
      Shell(1, "while [ ! -e go1 ]; do sleep 0.01; done; exit 7");
  TaskRecord sleeper = Shell(2, "sleep 100");
  TaskRecord timed = Shell(3, "sleep 100");
  timed.spec.timeout = 1500ms;
  TaskRecord over = Shell(4, "exit 5");
  for (const TaskRecord& task : {gated, sleeper, timed, over})
    executor_->Start(task);
  // Spawns run in parallel: shell-4 may be over before the others started.
  ASSERT_TRUE(RunUntil(
      [&] { return spawned_.size() == 4 && exited_.contains("shell-4"); }));
  pid_t first = static_cast<pid_t>(executor_->supervisor_pid());
  ::kill(first, SIGKILL);
  ASSERT_TRUE(WaitGone(first, 5s));
  supervisor_pids_.erase(first);
  EXPECT_EQ(executor_->supervisor_pid(), 0) << "a dead supervisor's pid";
  ASSERT_TRUE(RunUntil([&] {
    return executor_->supervisor_pid() != 0 &&
           executor_->supervisor_pid() != first;
  }));
  supervisor_pids_.insert(static_cast<pid_t>(executor_->supervisor_pid()));
  EXPECT_EQ(exited_["shell-4"].exit_code, 5);
  for (const char* id : {"shell-1", "shell-2", "shell-3"})
    EXPECT_FALSE(exited_.contains(id)) << id << " reported before its end";

  Touch("go1");
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_EQ(exited_["shell-1"].cause, ExitCause::kNatural);
  EXPECT_EQ(exited_["shell-1"].exit_code, 7);

  executor_->Kill(sleeper.id, 200ms);
  ASSERT_TRUE(Exited("shell-2"));
  EXPECT_EQ(exited_["shell-2"].cause, ExitCause::kKilled);
  EXPECT_FALSE(Alive(static_cast<pid_t>(spawned_["shell-2"])));

  ASSERT_TRUE(Exited("shell-3"));
  EXPECT_EQ(exited_["shell-3"].cause, ExitCause::kTimedOut);
  EXPECT_EQ(exited_["shell-3"].signal, SIGTERM);

  // New tasks run under the new supervisor.
  executor_->Start(Shell(5, "exit 0"));
  ASSERT_TRUE(Exited("shell-5"));
  EXPECT_EQ(exited_["shell-5"].exit_code, 0);
}

TEST_F(LocalExecutorTest, SupervisorExitsWhenIdleAndAlone) {
  executor_ = MakeExecutor();
  pid_t supervisor = static_cast<pid_t>(executor_->supervisor_pid());
  executor_->Start(Shell(1, "exit 0"));
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_TRUE(Alive(supervisor));  // batond is still connected.
  executor_.reset();
  EXPECT_TRUE(WaitGone(supervisor, 5s));
  supervisor_pids_.erase(supervisor);
}

TEST_F(LocalExecutorTest, StartsTheBatonBinary) {
  if (::access(BATON_BINARY, X_OK) != 0) {
    GTEST_SKIP() << BATON_BINARY << " is not built";
  }
  executor_ = std::make_unique<LocalExecutor>(&loop_, paths_, BATON_BINARY);
  executor_->SetListener(this);
  auto connected = executor_->Connect();
  ASSERT_TRUE(connected) << connected.error().message;
  supervisor_pids_.insert(static_cast<pid_t>(executor_->supervisor_pid()));
  TaskRecord task = Shell(1, "");
  task.spec.shell_command.reset();
  task.spec.argv = {"ls", "/proc/self/fd"};
  executor_->Start(task);
  ASSERT_TRUE(Exited("shell-1"));
  EXPECT_EQ(exited_["shell-1"].exit_code, 0);
  EXPECT_EQ(Output(task), "0\n1\n2\n3\n");  // Nothing of batond's.
}

}  // namespace
}  // namespace baton
