// `baton run --wait` on a terminal (a pty, as a person's shell gives it):
// the output streams as it comes, then how the task ended, and the exit
// code is the task's own (doc/cli.md, "run").
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Reads `fd` into `all` until it holds `needle` (true), or `timeout`
// passes or the other side closes (false).
bool ReadUntil(int fd, const std::string& needle, milliseconds timeout,
               std::string& all) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (all.find(needle) == std::string::npos) {
    auto left = std::chrono::duration_cast<milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd polled{fd, POLLIN, 0};
    if (::poll(&polled, 1, static_cast<int>(left.count())) <= 0)
      continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0)
      return false;  // EIO: the pty's last user is gone.
    all.append(buf, static_cast<size_t>(n));
  }
  return true;
}

class RunWaitTtyTest : public BatonTest {};

TEST_F(RunWaitTtyTest, OnATerminalTheOutputStreamsThenTheEndAndItsCode) {
  std::string gate = home_ + "/go";
  ASSERT_EQ(::mkfifo(gate.c_str(), 0600), 0);
  std::string line = "echo one; read x < " + gate + "; echo two; exit 3";
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("BATON_HOME", home_.c_str(), 1);
    ::unsetenv("BATON_SESSION");
    ::execl(binary_.c_str(), "baton", "run", "--wait", "--", "sh", "-c",
            line.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string shown;
  // "one" while the task still waits at the gate: it streamed.
  bool streamed = ReadUntil(master, "one", seconds(20), shown);
  EXPECT_TRUE(streamed) << shown;
  EXPECT_EQ(shown.find("two"), std::string::npos) << shown;
  int go = ::open(gate.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(go, 0);
  ASSERT_EQ(::write(go, "\n", 1), 1);
  ::close(go);
  EXPECT_TRUE(ReadUntil(master, "failed (exit code: 3)", seconds(20), shown))
      << shown;
  EXPECT_LT(shown.find("one"), shown.find("two")) << shown;
  EXPECT_LT(shown.find("two"), shown.find("failed (exit code: 3)")) << shown;
  // Not the tail again after the end: "two" is shown once.
  EXPECT_EQ(shown.find("two", shown.find("two") + 1), std::string::npos)
      << shown;
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 400 && reaped == 0; ++i) {
    reaped = ::waitpid(pid, &status, WNOHANG);
    if (reaped == 0)
      std::this_thread::sleep_for(milliseconds(50));
  }
  if (reaped == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(master);
  ASSERT_EQ(reaped, pid) << shown;
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << shown;
}

}  // namespace
}  // namespace baton::testing
