#include "baton/supervisor/supervisor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "baton/ipc/unix_socket.h"
#include "baton/supervisor/process_info.h"
#include "baton/supervisor/protocol.h"
#include "baton/supervisor/supervisor_test_fixture.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

TEST(SupervisorProtocol, RoundTrips) {
  SpawnRequest spawn;
  spawn.task = "shell-1";
  spawn.argv = {"/bin/sh", "-c", "echo hi"};
  spawn.env = {"A=1"};
  spawn.cwd = "/tmp";
  spawn.log = "/tmp/o.log";
  spawn.exit_file = "/tmp/exit.json";
  spawn.timeout = 1500ms;
  spawn.grace = 200ms;
  spawn.stderr_path = "/tmp/e.log";
  spawn.stdin_path = "/tmp/stdin";
  spawn.stdin_fifo = true;
  spawn.limits = ResourceLimits{.memory_bytes = 1 << 26, .pids = 9};
  auto request = ParseSupervisorRequest(EncodeMessage(spawn));
  ASSERT_TRUE(request);
  const auto& parsed = std::get<SpawnRequest>(*request);
  EXPECT_EQ(parsed.argv, spawn.argv);
  EXPECT_EQ(parsed.env, spawn.env);
  EXPECT_EQ(parsed.exit_file, spawn.exit_file);
  EXPECT_EQ(parsed.stderr_path, spawn.stderr_path);
  EXPECT_EQ(parsed.stdin_path, spawn.stdin_path);
  EXPECT_TRUE(parsed.stdin_fifo);
  EXPECT_EQ(parsed.limits, spawn.limits);
  EXPECT_EQ(parsed.timeout, 1500ms);
  EXPECT_EQ(parsed.grace, 200ms);
  spawn.timeout.reset();
  EXPECT_FALSE(
      std::get<SpawnRequest>(*ParseSupervisorRequest(EncodeMessage(spawn)))
          .timeout);

  ExitedEvent exited{"shell-2", 42,   std::nullopt, 9, ExitCause::kTimedOut,
                     1234,      true, 1000,         2, true};
  // The op first, then the fields in the order Fields() lists them.
  EXPECT_EQ(EncodeMessage(exited),
            R"({"op":"exited","task":"shell-2","pid":42,"exit_code":null,)"
            R"("signal":9,"cause":"timeout","ended_ms":1234,)"
            R"("disk_full":true,"started_ms":1000,"leftovers":2,)"
            R"("out_of_memory":true})");
  auto event = ParseSupervisorEvent(EncodeMessage(exited));
  ASSERT_TRUE(event);
  ExitInfo info = ToExitInfo(std::get<ExitedEvent>(*event));
  EXPECT_EQ(info.cause, ExitCause::kTimedOut);
  EXPECT_FALSE(info.exit_code);
  EXPECT_EQ(info.signal, 9);
  EXPECT_TRUE(info.output_disk_full);
  // The start travels with the end (a crash may have lost the spawned).
  EXPECT_EQ(info.pid, 42);
  EXPECT_EQ(info.started_ms, 1000);
  EXPECT_EQ(info.leftovers_stopped, 2);
  EXPECT_TRUE(info.out_of_memory);
  // An adopted task whose end nobody recorded.
  exited.cause = ExitCause::kLost;
  event = ParseSupervisorEvent(EncodeMessage(exited));
  ASSERT_TRUE(event);
  EXPECT_EQ(std::get<ExitedEvent>(*event).cause, ExitCause::kLost);
  // An exit record of protocol 2 has no start.
  event = ParseSupervisorEvent(
      R"({"op":"exited","task":"shell-1","pid":3,"exit_code":0,)"
      R"("signal":null,"cause":"natural","ended_ms":5})");
  ASSERT_TRUE(event);
  EXPECT_EQ(std::get<ExitedEvent>(*event).started_ms, 0);
  EXPECT_EQ(std::get<ExitedEvent>(*event).leftovers, 0);

  SupervisorHelloReply sent;
  sent.pid = 7;
  sent.live = {{"a", 8, 99}};
  sent.unknown_ends = {"shell-4"};
  auto hello = ParseSupervisorEvent(EncodeMessage(sent));
  ASSERT_TRUE(hello);
  EXPECT_EQ(std::get<SupervisorHelloReply>(*hello).live[0].pid, 8);
  EXPECT_EQ(std::get<SupervisorHelloReply>(*hello).live[0].started_ms, 99);
  EXPECT_EQ(std::get<SupervisorHelloReply>(*hello).unknown_ends,
            std::vector<std::string>{"shell-4"});
  EXPECT_EQ(std::get<SupervisorHelloReply>(*hello).version,
            kSupervisorProtocolVersion);

  auto refused = ParseSupervisorEvent(
      EncodeMessage(SpawnFailedReply{"shell-1", "started before", true}));
  ASSERT_TRUE(refused);
  EXPECT_TRUE(std::get<SpawnFailedReply>(*refused).already_started);
  // A supervisor from before versions were told apart says version 1.
  auto old = ParseSupervisorEvent(R"({"op":"hello","pid":7,"live":[]})");
  ASSERT_TRUE(old);
  EXPECT_EQ(std::get<SupervisorHelloReply>(*old).version, 1);

  auto ack = ParseSupervisorRequest(EncodeMessage(AckRequest{{"a", "b"}}));
  ASSERT_TRUE(ack);
  EXPECT_EQ(std::get<AckRequest>(*ack).tasks,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ParseSupervisorRequest(R"({"op":"ack","tasks":"a"})").error().code,
            ErrorCode::kInvalidArgument);

  EXPECT_EQ(ParseSupervisorRequest(R"({"op":"reboot"})").error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(ParseSupervisorRequest("{not json").error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseSupervisorRequest(R"({"op":"kill"})").error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseSupervisorEvent(R"([1,2])").error().code,
            ErrorCode::kInvalidArgument);
}

TEST_F(SupervisorTest, SpeaksTheProtocolAndRecordsExits) {
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  // A second supervisor finds the lock taken and leaves quietly.
  auto [second, second_ready] = Fork();
  EXPECT_EQ(second_ready, '\0');
  EXPECT_EQ(WaitExit(second), 0);

  Connect();
  Send("garbage");
  Send(R"({"op":"from-the-future"})");
  Send(EncodeMessage(SupervisorHello{}));
  auto hello = ReceiveAs<SupervisorHelloReply>();
  // The forked process is the keeper; the supervisor is its child.
  auto stat = ReadProcStat(static_cast<pid_t>(hello.pid));
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->ppid, pid);
  EXPECT_TRUE(hello.live.empty());

  SpawnRequest bad_log;
  bad_log.task = "shell-9";
  bad_log.argv = {"/bin/true"};
  Touch("afile");  // In the way of the log's folder.
  bad_log.log = root_ + "/afile/output.log";
  bad_log.exit_file = root_ + "/exit";
  Send(EncodeMessage(bad_log));
  EXPECT_EQ(ReceiveAs<SpawnFailedReply>().error,
            "open output log " + bad_log.log + ": Not a directory");
  // The log's missing folder, and its parent, are made: batond leaves the
  // task's folder to the spawn thread.
  SpawnRequest fresh;
  fresh.task = "shell-8";
  fresh.argv = {"/bin/sh", "-c", "echo made"};
  fresh.log = root_ + "/tasks/shell-8/output.log";
  fresh.exit_file = root_ + "/tasks/shell-8/exit.json";
  Send(EncodeMessage(fresh));
  EXPECT_EQ(ReceiveAs<SpawnedReply>().task, "shell-8");
  EXPECT_EQ(ReceiveAs<ExitedEvent>().task, "shell-8");
  EXPECT_EQ(ReadFile(fresh.log).value_or(""), "made\n");

  auto spawned = SpawnGated("shell-1", "go", "echo hi; exit 3");
  EXPECT_GT(spawned.started_ms, 0);
  EXPECT_EQ(::getpgid(spawned.pid), spawned.pid);
  EXPECT_EQ(::getsid(spawned.pid), spawned.pid);
  Send(EncodeMessage(SupervisorHello{}));
  hello = ReceiveAs<SupervisorHelloReply>();
  ASSERT_EQ(hello.live.size(), 1u);
  EXPECT_EQ(hello.live[0].task, "shell-1");
  EXPECT_EQ(hello.live[0].pid, spawned.pid);

  Touch("go");
  auto exited = ReceiveAs<ExitedEvent>();
  EXPECT_EQ(exited.task, "shell-1");
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_EQ(exited.cause, ExitCause::kNatural);
  EXPECT_FALSE(exited.disk_full);
  EXPECT_EQ(ReadFile(root_ + "/shell-1.log").value_or(""), "hi\n");
  // batond committed it: no exit file, then or later.
  Send(EncodeMessage(AckRequest{{"shell-1"}}));
  // A kill of an ended task is ignored.
  Send(EncodeMessage(SupervisorKill{"shell-1", 10ms}));

  client_.reset();  // batond goes away with nothing live: the supervisor too.
  EXPECT_EQ(WaitExit(pid), 0);
  EXPECT_FALSE(std::filesystem::exists(paths_.supervisor_socket()));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/shell-1.exit"));
}

// An exit batond has not acknowledged lives only in the supervisor until
// batond goes away: then it is written to the exit file, before a new
// batond's hello can miss the task from the live list.
TEST_F(SupervisorTest, WritesTheExitFilesBatondDidNotAcknowledge) {
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  ConnectAndGreet();
  SpawnGated("shell-1", "go1", "exit 5");
  SpawnGated("shell-2", "go2", "exit 6");
  SpawnGated("shell-3", "go3", "exit 7");
  Touch("go1");
  Touch("go2");
  EXPECT_EQ(ReceiveAs<ExitedEvent>().exit_code.value_or(-1) +
                ReceiveAs<ExitedEvent>().exit_code.value_or(-1),
            11);
  Send(EncodeMessage(AckRequest{{"shell-2", "shell-99"}}));
  // The ack is read before this hello; shell-1 waits for its ack.
  Send(EncodeMessage(SupervisorHello{}));
  ASSERT_EQ(ReceiveAs<SupervisorHelloReply>().live.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/shell-1.exit"));

  // A new batond connects: the old one's unacknowledged exit goes to its
  // file before the new hello is answered.
  UniqueFd old_client = std::move(client_);
  auto hello = ConnectAndGreet();
  ASSERT_EQ(hello.live.size(), 1u);
  EXPECT_EQ(hello.live[0].task, "shell-3");
  auto record =
      ParseSupervisorEvent(ReadFile(root_ + "/shell-1.exit").value_or(""));
  ASSERT_TRUE(record) << "no exit file for the unacknowledged exit";
  EXPECT_EQ(std::get<ExitedEvent>(*record).exit_code, 5);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/shell-2.exit"));

  // batond dies with shell-3's exit unacknowledged.
  Touch("go3");
  EXPECT_EQ(ReceiveAs<ExitedEvent>().task, "shell-3");
  EXPECT_FALSE(std::filesystem::exists(root_ + "/shell-3.exit"));
  client_.reset();
  old_client.reset();
  EXPECT_EQ(WaitExit(pid), 0);
  record = ParseSupervisorEvent(ReadFile(root_ + "/shell-3.exit").value_or(""));
  ASSERT_TRUE(record) << "no exit file after batond went away";
  EXPECT_EQ(std::get<ExitedEvent>(*record).exit_code, 7);
}

TEST_F(SupervisorTest, OutlivesBatondWhileTasksLive) {
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  ConnectAndGreet();
  SpawnGated("shell-1", "go", "exit 0");
  // Neither SIGTERM nor batond's death stops it while a task lives.
  ::kill(pid, SIGTERM);
  client_.reset();
  EXPECT_EQ(WaitExit(pid, 300ms), -1);
  Touch("go");
  EXPECT_EQ(WaitExit(pid), 0);  // The last task ended while batond was away.
  auto record =
      ParseSupervisorEvent(ReadFile(root_ + "/shell-1.exit").value_or(""));
  ASSERT_TRUE(record);
  EXPECT_EQ(std::get<ExitedEvent>(*record).exit_code, 0);
}

TEST(SupervisorProtocol, EnvironmentsAreSentOnceAndSetOver) {
  EnvRequest env{3, {"PATH=/bin", "HOME=/root", "A=base"}};
  auto parsed = ParseSupervisorRequest(EncodeMessage(env));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(std::get<EnvRequest>(*parsed).id, 3u);
  EXPECT_EQ(std::get<EnvRequest>(*parsed).env, env.env);

  SpawnRequest spawn;
  spawn.task = "shell-1";
  spawn.argv = {"/bin/true"};
  spawn.env = {"A=set", "BATON_TASK_ID=shell-1"};
  spawn.env_id = 3;
  spawn.log = "/tmp/o.log";
  spawn.exit_file = "/tmp/exit.json";
  auto request = ParseSupervisorRequest(EncodeMessage(spawn));
  ASSERT_TRUE(request);
  SpawnRequest got = std::get<SpawnRequest>(*request);
  EXPECT_EQ(got.env_id, 3u);
  EXPECT_EQ(SpawnEnvironment(got), got.env);  // No base known: exact.
  got.base_env = std::make_shared<const std::vector<std::string>>(env.env);
  EXPECT_EQ(SpawnEnvironment(got),
            (std::vector<std::string>{"PATH=/bin", "HOME=/root", "A=set",
                                      "BATON_TASK_ID=shell-1"}));
}

TEST_F(SupervisorTest, SpawnsOverADefinedEnvironmentPerConnection) {
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  ConnectAndGreet();
  Send(EncodeMessage(EnvRequest{5, {"PATH=/usr/bin:/bin", "A=base", "B=b"}}));
  SpawnRequest spawn;
  spawn.task = "shell-1";
  spawn.argv = {"sh", "-c", "echo $A $B $C"};  // Found through the base PATH.
  spawn.env = {"A=set", "C=c"};
  spawn.env_id = 5;
  spawn.cwd = root_;
  spawn.log = root_ + "/shell-1.log";
  spawn.exit_file = root_ + "/shell-1.exit";
  Send(EncodeMessage(spawn));
  task_pids_.push_back(static_cast<pid_t>(ReceiveAs<SpawnedReply>().pid));
  EXPECT_EQ(ReceiveAs<ExitedEvent>().exit_code, 0);
  EXPECT_EQ(ReadFile(spawn.log).value_or(""), "set b c\n");

  spawn.task = "shell-2";
  spawn.env_id = 6;
  Send(EncodeMessage(spawn));
  EXPECT_EQ(ReceiveAs<SpawnFailedReply>().error,
            "environment 6 was never defined on this connection");

  // A new connection starts with none.
  ConnectAndGreet();
  spawn.task = "shell-3";
  spawn.env_id = 5;
  Send(EncodeMessage(spawn));
  EXPECT_EQ(ReceiveAs<SpawnFailedReply>().error,
            "environment 5 was never defined on this connection");
}

TEST_F(SupervisorTest, EventsWaitForHello) {
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  Connect();
  SpawnGated("shell-1", "go", "exit 0");
  Touch("go");
  for (auto limit = std::chrono::steady_clock::now() + 5s;
       !std::filesystem::exists(root_ + "/shell-1.exit") &&
       std::chrono::steady_clock::now() < limit;) {
    std::this_thread::sleep_for(10ms);
  }
  // batond reads the hello reply first, so the exit was not sent before it.
  Send(EncodeMessage(SupervisorHello{}));
  EXPECT_TRUE(ReceiveAs<SupervisorHelloReply>().live.empty());
}

// Spawns run on worker threads: whatever batond sends while they are under
// way must still apply, and each task's spawned must come before its exit.
TEST_F(SupervisorTest, ABurstOfSpawnsKeepsOrderKillsAndHello) {
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  ConnectAndGreet();
  constexpr int kTasks = 60;
  std::string burst;
  for (int i = 0; i < kTasks; ++i) {
    SpawnRequest spawn;
    spawn.task = "shell-" + std::to_string(i);
    // Every third sleeps until killed; the rest end at once.
    spawn.argv = i % 3 == 0 ? std::vector<std::string>{"/bin/sleep", "30"}
                            : std::vector<std::string>{"/bin/true"};
    spawn.cwd = root_;
    spawn.log = root_ + "/" + spawn.task + ".log";
    spawn.exit_file = root_ + "/" + spawn.task + ".exit";
    burst += EncodeMessage(spawn) + "\n";
    if (i == 0)  // The same id again while it starts or sleeps.
      burst += EncodeMessage(spawn) + "\n";
    if (i % 3 == 0)
      burst += EncodeMessage(SupervisorKill{spawn.task, 10ms}) + "\n";
  }
  burst += EncodeMessage(SupervisorHello{}) + "\n";
  ASSERT_EQ(::send(client_.get(), burst.data(), burst.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(burst.size()));

  std::map<std::string, int> spawned, exited;
  int refused = 0, hellos = 0;
  while (static_cast<int>(exited.size()) < kTasks || hellos == 0) {
    std::string line = Receive();
    ASSERT_FALSE(line.empty())
        << "timed out with " << exited.size() << " exits";
    auto event = ParseSupervisorEvent(line);
    ASSERT_TRUE(event) << line;
    if (auto* s = std::get_if<SpawnedReply>(&*event)) {
      EXPECT_EQ(spawned[s->task]++, 0) << s->task;
      task_pids_.push_back(static_cast<pid_t>(s->pid));
    } else if (auto* e = std::get_if<ExitedEvent>(&*event)) {
      EXPECT_EQ(spawned[e->task], 1) << e->task << " exited before spawned";
      EXPECT_EQ(exited[e->task]++, 0) << e->task;
      int n = -1;
      std::from_chars(e->task.data() + 6, e->task.data() + e->task.size(), n);
      if (n % 3 == 0) {
        EXPECT_EQ(e->cause, ExitCause::kKilled) << e->task;
      } else {
        EXPECT_EQ(e->exit_code, 0) << e->task;
      }
    } else if (auto* f = std::get_if<SpawnFailedReply>(&*event)) {
      EXPECT_EQ(f->task, "shell-0");
      EXPECT_EQ(f->error, "task shell-0 is already live");
      ++refused;
    } else if (auto* h = std::get_if<SupervisorHelloReply>(&*event)) {
      // Answered once nothing was starting: every task is spawned by now.
      EXPECT_EQ(static_cast<int>(spawned.size()), kTasks);
      for (const LiveTask& live : h->live)
        EXPECT_EQ(exited.count(live.task), 0u) << live.task;
      ++hellos;
    }
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(hellos, 1);
  client_.reset();
  EXPECT_EQ(WaitExit(pid), 0);
}

TEST_F(SupervisorTest, SigtermWithoutTasksExits) {
#if defined(__SANITIZE_THREAD__)
  // Under TSan the forked supervisor does not exit on this SIGTERM within
  // 5 s (it does in 74 ms under ASan and in the dev build); not yet
  // understood: doc/sanitizers.md, "Open".
  GTEST_SKIP() << "hangs under TSan: doc/sanitizers.md, Open";
#endif
  auto [pid, ready] = Fork();
  ASSERT_EQ(ready, 'R');
  Connect();
  ::kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid), 0);
}

}  // namespace
}  // namespace baton
