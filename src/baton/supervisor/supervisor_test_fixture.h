// The fixture of the supervisor's process tests: runs RunSupervisor in a
// forked child of the test and speaks the protocol to it over its socket,
// as batond does. Test-only.
#ifndef BATON_SUPERVISOR_SUPERVISOR_TEST_FIXTURE_H_
#define BATON_SUPERVISOR_SUPERVISOR_TEST_FIXTURE_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "baton/ipc/unix_socket.h"
#include "baton/supervisor/protocol.h"
#include "baton/supervisor/supervisor.h"
#include "baton/util/file_util.h"

namespace baton {

// Runs RunSupervisor in a forked child of the test, as its own process.
class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/baton-sv-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = dir;
    paths_ = {root_ + "/home", root_ + "/run"};
    ASSERT_TRUE(paths_.Prepare());
  }

  void TearDown() override {
    client_.reset();
    // A pid of 0 (a reply that was not the one expected) would signal
    // our own process group.
    for (pid_t pid : task_pids_) {
      if (pid > 0)
        ::kill(-pid, SIGKILL);
    }
    for (pid_t pid : supervisors_) {
      if (pid > 0)
        ::kill(pid, SIGKILL);
    }
    for (pid_t pid : children_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(root_);
  }

  // Starts a supervisor; returns the pid of the process forked (the
  // keeper, whose child the supervisor is) and the byte written to the
  // ready pipe ('\0' for none).
  std::pair<pid_t, char> Fork() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      ::_exit(RunSupervisor(paths_, fds[1]));
    }
    children_.push_back(pid);
    ::close(fds[1]);
    UniqueFd ready(fds[0]);
    char byte = 0;
    pollfd pfd{ready.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 5000) == 1 && ::read(ready.get(), &byte, 1) != 1) {
      byte = 0;
    }
    return {pid, byte};
  }

  // The exit status of child `pid`, or -1 if it runs on after `limit`.
  int WaitExit(pid_t pid,
               std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline)
        return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::erase(children_, pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  void Connect() {
    auto fd = ConnectUnix(paths_.supervisor_socket());
    ASSERT_TRUE(fd) << fd.error().message;
    client_ = std::move(*fd);
  }
  // Connects (again) and says hello, as batond does; the reply.
  SupervisorHelloReply ConnectAndGreet() {
    Connect();
    Send(EncodeMessage(SupervisorHello{}));
    auto hello = ReceiveAs<SupervisorHelloReply>();
    if (hello.pid > 0)
      supervisors_.push_back(static_cast<pid_t>(hello.pid));
    return hello;
  }
  void Send(const std::string& line) {
    std::string data = line + "\n";
    ASSERT_EQ(::send(client_.get(), data.data(), data.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(data.size()));
  }
  // The next line from the supervisor, "" on EOF or after 5 s.
  std::string Receive() {
    for (;;) {
      if (size_t nl = in_.find('\n'); nl != std::string::npos) {
        std::string line = in_.substr(0, nl);
        in_.erase(0, nl + 1);
        return line;
      }
      pollfd pfd{client_.get(), POLLIN, 0};
      char buf[4096];
      ssize_t n = ::poll(&pfd, 1, 5000) == 1
                      ? ::read(client_.get(), buf, sizeof buf)
                      : 0;
      if (n <= 0)
        return "";
      in_.append(buf, n);
    }
  }
  template <class T>
  T ReceiveAs() {
    std::string line = Receive();
    auto event = ParseSupervisorEvent(line);
    EXPECT_TRUE(event && std::holds_alternative<T>(*event)) << line;
    return event && std::holds_alternative<T>(*event) ? std::get<T>(*event)
                                                      : T{};
  }

  // Spawns a shell task that runs `command` once the file `gate` exists.
  SpawnedReply SpawnGated(const std::string& task, const std::string& gate,
                          const std::string& command) {
    SpawnRequest spawn;
    spawn.task = task;
    spawn.argv = {
        "/bin/sh", "-c",
        "while [ ! -e " + gate + " ]; do sleep 0.01; done; " + command};
    spawn.env = {"PATH=/usr/bin:/bin"};
    spawn.cwd = root_;
    spawn.log = root_ + "/" + task + ".log";
    spawn.exit_file = root_ + "/" + task + ".exit";
    Send(EncodeMessage(spawn));
    auto spawned = ReceiveAs<SpawnedReply>();
    EXPECT_EQ(spawned.task, task);
    task_pids_.push_back(static_cast<pid_t>(spawned.pid));
    return spawned;
  }
  void Touch(const std::string& name) { std::ofstream(root_ + "/" + name); }

  std::string root_;
  StatePaths paths_;
  UniqueFd client_;
  std::string in_;
  std::vector<pid_t> children_;
  std::vector<pid_t> task_pids_;
  std::vector<pid_t> supervisors_;  // From hellos.
};

}  // namespace baton

#endif  // BATON_SUPERVISOR_SUPERVISOR_TEST_FIXTURE_H_
