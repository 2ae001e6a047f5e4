#include "baton/util/spawn_child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <string>
#include <thread>
#include <vector>

#include "baton/util/unique_fd.h"

namespace baton {
namespace {

struct Ran {
  std::string out;
  int status = -1;
};

// Spawns `spec` with stdout on a pipe; reads it to EOF and reaps the child.
Ran RunToEnd(ChildSpec spec) {
  Ran ran;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << errno;
    return ran;
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  spec.stdout_fd = write_end.get();
  auto pid = SpawnChild(spec);
  write_end.reset();
  if (!pid) {
    ADD_FAILURE() << pid.error().message;
    return ran;
  }
  char buf[4096];
  for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    ran.out.append(buf, static_cast<size_t>(n));
  }
  while (::waitpid(*pid, &ran.status, 0) < 0 && errno == EINTR) {
  }
  return ran;
}

ChildSpec Command(std::string program, std::vector<std::string> argv) {
  ChildSpec spec;
  spec.program = std::move(program);
  spec.argv = std::move(argv);
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  return spec;
}

TEST(SpawnChild, RunsWithExactlyTheGivenEnvironmentAndFolder) {
  ::setenv("BATON_SPAWN_TEST_LEAK", "1", 1);  // Ours: must not reach it.
  ChildSpec spec = Command("/usr/bin/env", {"env"});
  spec.env = {"A=1", "B=two words"};
  EXPECT_EQ(RunToEnd(spec).out, "A=1\nB=two words\n");
  ::unsetenv("BATON_SPAWN_TEST_LEAK");

  spec = Command("/bin/pwd", {"pwd"});
  spec.cwd = "/usr";
  EXPECT_EQ(RunToEnd(spec).out, "/usr\n");
}

TEST(SpawnChild, StartsInItsOwnSessionAndProcessGroup) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  ChildSpec spec = Command("/bin/sh", {"sh", "-c", "read x"});
  spec.stdin_fd = read_end.get();  // Blocks until we close the write end.
  auto pid = SpawnChild(spec);
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(::getpgid(*pid), *pid);
  EXPECT_EQ(::getsid(*pid), *pid);
  EXPECT_NE(::getsid(*pid), ::getsid(0));
  write_end.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFEXITED(status));
}

// The bits of `field` ("SigBlk", "SigIgn") in /proc/<pid>/status text.
unsigned long long SignalBits(const std::string& status,
                              const std::string& field) {
  size_t at = status.find(field + ":");
  if (at == std::string::npos)
    return ~0ull;
  return std::strtoull(status.c_str() + at + field.size() + 1, nullptr, 16);
}

TEST(SpawnChild, StartsWithNoBlockedOrIgnoredSignalsOfOurs) {
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGCHLD);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
  auto old_int = ::signal(SIGINT, SIG_IGN);
  auto old_pipe = ::signal(SIGPIPE, SIG_IGN);
  Ran ran = RunToEnd(Command("/bin/cat", {"cat", "/proc/self/status"}));
  ::signal(SIGINT, old_int);
  ::signal(SIGPIPE, old_pipe);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);

  EXPECT_EQ(SignalBits(ran.out, "SigBlk"), 0u) << ran.out;
  unsigned long long ignored = SignalBits(ran.out, "SigIgn");
  EXPECT_EQ(ignored & (1ull << (SIGINT - 1)), 0u) << ran.out;
  EXPECT_EQ(ignored & (1ull << (SIGPIPE - 1)), 0u) << ran.out;
}

TEST(SpawnChild, InheritsOnlyItsStdio) {
  // An fd opened without close-on-exec, as a careless library might.
  UniqueFd leaky(::open("/dev/null", O_RDONLY));
  ASSERT_TRUE(leaky);
  ASSERT_EQ(::fcntl(leaky.get(), F_GETFD) & FD_CLOEXEC, 0);
  // ls opens the listed folder as fd 3 itself.
  EXPECT_EQ(RunToEnd(Command("/bin/ls", {"ls", "/proc/self/fd"})).out,
            "0\n1\n2\n3\n");
  // Unset stdin and stderr are /dev/null.
  EXPECT_EQ(RunToEnd(Command("/bin/readlink", {"readlink", "/proc/self/fd/0",
                                               "/proc/self/fd/2"}))
                .out,
            "/dev/null\n/dev/null\n");
}

TEST(SpawnChild, FailuresSayWhatFailedAndWhy) {
  auto missing = SpawnChild(Command("/nonexistent/tool", {"tool"}));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kSpawnFailed);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
  EXPECT_EQ(missing.error().message,
            "spawn \"tool\": No such file or directory");

  // A set-up call that fails is reported, not skipped.
  ChildSpec bad_fd = Command("/bin/true", {"true"});
  bad_fd.stdout_fd = INT_MAX;
  auto refused = SpawnChild(bad_fd);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().sys_errno, EBADF);
  EXPECT_EQ(refused.error().message,
            "spawn \"true\": posix_spawn_file_actions_adddup2: Bad file "
            "descriptor");

  ChildSpec gone_folder = Command("/bin/true", {"true"});
  gone_folder.cwd = "/nonexistent-folder";
  auto no_folder = SpawnChild(gone_folder);
  ASSERT_FALSE(no_folder);
  EXPECT_EQ(no_folder.error().sys_errno, ENOENT);

  ChildSpec empty = Command("/bin/true", {});
  EXPECT_EQ(SpawnChild(empty).error().code, ErrorCode::kInvalidArgument);
}

// With rlimits or cgroups to join, SpawnChild vforks instead of
// posix_spawn: the child must start just the same.
ChildSpec Limited(ChildSpec spec) {
  spec.rlimits.emplace_back(RLIMIT_CORE, 0);
  return spec;
}

TEST(SpawnChild, ALimitedChildStartsAsASpawnedOneDoes) {
  ChildSpec env = Limited(Command("/usr/bin/env", {"env"}));
  env.env = {"A=1"};
  EXPECT_EQ(RunToEnd(env).out, "A=1\n");
  ChildSpec pwd = Limited(Command("/bin/pwd", {"pwd"}));
  pwd.cwd = "/usr";
  EXPECT_EQ(RunToEnd(pwd).out, "/usr\n");
  UniqueFd leaky(::open("/dev/null", O_RDONLY));
  ASSERT_TRUE(leaky);
  EXPECT_EQ(RunToEnd(Limited(Command("/bin/ls", {"ls", "/proc/self/fd"}))).out,
            "0\n1\n2\n3\n");
  // Its own session; no signal of ours blocked or ignored.
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
  auto old_pipe = ::signal(SIGPIPE, SIG_IGN);
  Ran ran =
      RunToEnd(Limited(Command("/bin/cat", {"cat", "/proc/self/status"})));
  // The vfork blocked every signal of ours around it, and no longer.
  sigset_t after;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
  for (int sig = 1; sig < NSIG; ++sig)
    EXPECT_EQ(sigismember(&after, sig), sig == SIGTERM ? 1 : 0) << sig;
  ::signal(SIGPIPE, old_pipe);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  EXPECT_EQ(SignalBits(ran.out, "SigBlk"), 0u) << ran.out;
  EXPECT_EQ(SignalBits(ran.out, "SigIgn") & (1ull << (SIGPIPE - 1)), 0u);
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  ChildSpec reader = Limited(Command("/bin/sh", {"sh", "-c", "read x"}));
  reader.stdin_fd = read_end.get();
  auto pid = SpawnChild(reader);
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(::getpgid(*pid), *pid);
  EXPECT_EQ(::getsid(*pid), *pid);
  write_end.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
}

TEST(SpawnChild, ALimitedChildHasItsRlimits) {
  ChildSpec spec = Command("/bin/sh", {"sh", "-c", "ulimit -n; ulimit -v"});
  spec.rlimits = {{RLIMIT_NOFILE, 64}, {RLIMIT_AS, 512ull << 20}};
  EXPECT_EQ(RunToEnd(spec).out, "64\n524288\n");
}

TEST(SpawnChild, ALimitedChildsFailuresSayWhatFailed) {
  auto missing = SpawnChild(Limited(Command("/nonexistent/tool", {"tool"})));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
  EXPECT_EQ(missing.error().message,
            "spawn \"tool\": No such file or directory");
  ChildSpec join = Command("/bin/true", {"true"});
  join.join_cgroups = {"/nonexistent/baton/cgroup.procs"};
  auto refused = SpawnChild(join);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "spawn \"true\": join cgroup /nonexistent/baton/cgroup.procs: No "
            "such file or directory");
  ChildSpec nofolder = Limited(Command("/bin/true", {"true"}));
  nofolder.cwd = "/nonexistent";
  auto no_cwd = SpawnChild(nofolder);
  ASSERT_FALSE(no_cwd);
  EXPECT_EQ(no_cwd.error().message,
            "spawn \"true\": chdir: No such file or directory");
}

// The supervisor starts tasks on several threads at once: each vforked
// child runs on its own thread's stack and reports to its own pipe.
TEST(SpawnChild, LimitedChildrenStartFromSeveralThreadsAtOnce) {
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::string> failures[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < kEach; ++i) {
        std::string word = std::to_string(t * kEach + i);
        Ran ran = RunToEnd(Limited(Command("/bin/echo", {"echo", word})));
        if (ran.out != word + "\n" || ran.status != 0)
          failures[t].push_back(word + ": \"" + ran.out + "\"");
      }
      auto missing = SpawnChild(Limited(Command("/nonexistent", {"x"})));
      if (missing || missing.error().sys_errno != ENOENT)
        failures[t].push_back("a missing program did not fail with ENOENT");
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[t].empty()) << failures[t].front();
}

}  // namespace
}  // namespace baton
