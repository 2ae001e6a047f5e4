#include "tests/support/baton_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "baton/ipc/unix_socket.h"
#include "baton/util/file_util.h"

extern char** environ;

namespace baton::testing {

nlohmann::json CommandResult::json() const {
  return nlohmann::json::parse(out, nullptr, false);
}

RunningProcess::RunningProcess(const std::vector<std::string>& argv,
                               const std::map<std::string, std::string>& env,
                               const std::string& input) {
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) ||
      pipe2(in_pipe, O_CLOEXEC)) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  out_fd_.reset(out_pipe[0]);
  err_fd_.reset(err_pipe[0]);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    if (!env.count(name))
      env_strings.push_back(entry);
  }
  for (const auto& [name, value] : env) {
    if (value != "<unset>")
      env_strings.push_back(name + "=" + value);
  }
  std::vector<char*> envp, args;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy)
    args.push_back(a.data());
  args.push_back(nullptr);

  pid_ = fork();
  if (pid_ == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(in_pipe[0]);
  if (!input.empty()) {
    ssize_t ignored = write(in_pipe[1], input.data(), input.size());
    (void)ignored;
  }
  close(in_pipe[1]);
}

RunningProcess::~RunningProcess() {
  if (pid_ > 0 && exit_code_ < 0)
    Finish(std::chrono::milliseconds(0));
}

bool RunningProcess::ReadSome(std::chrono::steady_clock::time_point deadline) {
  UniqueFd* fds[2] = {&out_fd_, &err_fd_};
  std::string* texts[2] = {&out_, &err_};
  pollfd polled[2];
  for (int i = 0; i < 2; ++i)
    polled[i] = {fds[i]->get(), POLLIN, 0};
  if (polled[0].fd < 0 && polled[1].fd < 0)
    return false;
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    int n = poll(polled, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;  // The deadline, or a poll error.
    break;
  }
  for (int i = 0; i < 2; ++i) {
    if (polled[i].fd < 0 || !(polled[i].revents & (POLLIN | POLLHUP)))
      continue;
    char buf[65536];
    ssize_t got = read(polled[i].fd, buf, sizeof buf);
    if (got <= 0)
      fds[i]->reset();
    else
      texts[i]->append(buf, static_cast<size_t>(got));
  }
  return true;
}

bool RunningProcess::ReadUntil(const std::string& text,
                               std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_.find(text) == std::string::npos) {
    if (!ReadSome(deadline))
      return out_.find(text) != std::string::npos;
  }
  return true;
}

int RunningProcess::Finish(std::chrono::milliseconds timeout) {
  if (pid_ <= 0)
    return -1;
  if (exit_code_ >= 0)
    return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_fd_ || err_fd_) {
    if (!ReadSome(deadline) && (out_fd_ || err_fd_)) {
      timed_out_ = true;
      kill(pid_, SIGKILL);
      break;
    }
  }
  out_fd_.reset();
  err_fd_.reset();
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

CommandResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout,
                         const std::string& input) {
  RunningProcess process(argv, env, input);
  CommandResult result;
  result.exit_code = process.Finish(timeout);
  result.timed_out = process.timed_out();
  result.out = process.out();
  result.err = process.err();
  return result;
}

bool WaitForPidGone(int pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (kill(pid, 0) != 0 && errno == ESRCH)
      return true;
    // Our own zombie children count as gone.
    std::string stat_path = "/proc/" + std::to_string(pid) + "/stat";
    FILE* f = fopen(stat_path.c_str(), "r");
    if (f) {
      char state = 0;
      int ignored = fscanf(f, "%*d %*s %c", &state);
      (void)ignored;
      fclose(f);
      if (state == 'Z')
        return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

void BatonTest::SetUp() {
  char tmpl[] = "/tmp/baton-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  home_ = tmpl;
}

void BatonTest::TearDown() {
  // A failure is easier to read with what batond and the supervisor said.
  if (HasFailure()) {
    for (const char* log : {"/batond.log", "/supervisor.log"}) {
      std::string text = ReadFile(home_ + log).value_or("");
      if (text.size() > 8000)
        text = "..." + text.substr(text.size() - 8000);
      std::cerr << "---- " << home_ << log << " ----\n" << text;
    }
  }
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  Baton({"daemon", "stop", "--kill-tasks"}, {}, std::chrono::seconds(20));
  for (int pid : {daemon_pid, supervisor_pid}) {
    if (pid > 0 && !WaitForPidGone(pid, std::chrono::seconds(5))) {
      kill(pid, SIGKILL);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(home_, ignored);
}

void BatonTest::ForThisHome(std::vector<std::string>& args,
                            std::map<std::string, std::string>& env) {
  args.insert(args.begin(), binary_);
  if (!env.count("BATON_HOME"))
    env["BATON_HOME"] = home_;
  if (!env.count("BATON_SESSION"))
    env["BATON_SESSION"] = "<unset>";
}

CommandResult BatonTest::Baton(std::vector<std::string> args,
                               std::map<std::string, std::string> env,
                               std::chrono::milliseconds timeout) {
  ForThisHome(args, env);
  return RunProcess(args, env, timeout);
}

std::unique_ptr<RunningProcess> BatonTest::StartBaton(
    std::vector<std::string> args, std::map<std::string, std::string> env) {
  ForThisHome(args, env);
  return std::make_unique<RunningProcess>(args, env);
}

std::string BatonTest::Run(const std::string& command,
                           std::vector<std::string> flags,
                           std::map<std::string, std::string> env) {
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.push_back(command);
  auto result = Baton(args, env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::string id = result.out;
  while (!id.empty() && id.back() == '\n')
    id.pop_back();
  return id;
}

nlohmann::json BatonTest::Status(const std::string& id,
                                 std::map<std::string, std::string> env) {
  auto result = Baton({"--json", "status", id}, env);
  EXPECT_EQ(result.exit_code, 0) << result.err << result.out;
  auto doc = result.json();
  return doc.is_object() ? doc["task"] : nlohmann::json();
}

nlohmann::json BatonTest::WaitStarted(const std::string& id,
                                      std::map<std::string, std::string> env) {
  nlohmann::json task;
  for (int i = 0; i < 500; ++i) {
    task = Status(id, env);
    // A task whose spawn is on its way is `running` with detail
    // `starting` (doc/tasks.md, "Statuses"): started once that is gone.
    if (task.is_object() && task.value("status", "") != "queued" &&
        task.value("detail", "") != "starting")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return task;
}

std::pair<int, int> BatonTest::DaemonPids() {
  auto result = Baton({"--json", "daemon", "status"});
  auto doc = result.json();
  if (!doc.is_object() || !doc.value("running", false))
    return {0, 0};
  return {doc.value("daemon_pid", 0), doc.value("supervisor_pid", 0)};
}

Result<DaemonClient> BatonTest::ConnectToDaemon() {
  DaemonClient::Options options;
  options.paths = StatePaths{home_, home_};
  options.autostart = false;
  return DaemonClient::Connect(options);
}

void BatonTest::AttachAndLeave(const std::string& session) {
  DaemonClient::Options options;
  options.paths = StatePaths{home_, home_};
  options.session = session;
  options.autostart = false;
  auto client = DaemonClient::Connect(options);
  ASSERT_TRUE(client) << client.error().message;
  ASSERT_TRUE(client->Call(AttachRequest{}));
}

std::string BatonTest::RawRequest(const std::string& line,
                                  bool then_half_close) {
  auto fd = ConnectUnix(StatePaths{home_, home_}.daemon_socket());
  EXPECT_TRUE(fd) << fd.error().message;
  if (!fd)
    return "";
  EXPECT_TRUE(WriteAll(fd->get(), then_half_close ? line : line + "\n"));
  if (then_half_close)
    ::shutdown(fd->get(), SHUT_WR);
  std::string in;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (in.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pfd{fd->get(), POLLIN, 0};
    if (left.count() <= 0 ||
        ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
      break;
    }
    char buf[65536];
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n <= 0)
      break;
    in.append(buf, static_cast<size_t>(n));
  }
  return in.substr(0, in.find('\n'));
}

void BatonTest::KillDaemonHard() {
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  ASSERT_GT(daemon_pid, 0);
  ASSERT_EQ(kill(daemon_pid, SIGKILL), 0);
  ASSERT_TRUE(WaitForPidGone(daemon_pid, std::chrono::seconds(5)));
}

}  // namespace baton::testing
