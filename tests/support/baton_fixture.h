// Integration-test support: each test gets its own BATON_HOME (and so its
// own batond, supervisor, socket and database, as watchman's
// WatchmanInstance) and drives the real `baton` binary. TearDown stops the
// daemon with --kill-tasks and then kills, by pid, whatever is left.
#ifndef BATON_TESTS_SUPPORT_BATON_FIXTURE_H_
#define BATON_TESTS_SUPPORT_BATON_FIXTURE_H_

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/ipc/daemon_client.h"
#include "baton/util/unique_fd.h"

namespace baton::testing {

// Whether this build runs under ASan or TSan (presets ci, tsan, fuzz). The
// daemon's resident memory means little there: shadow memory and ASan's
// quarantine of freed blocks count in it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

struct CommandResult {
  int exit_code = -1;  // 128+N when killed by signal N.
  std::string out;
  std::string err;
  bool timed_out = false;
  // stdout parsed as one JSON document (null when it is not JSON).
  nlohmann::json json() const;
};

// A process started with `env` added to our environment (a value
// "<unset>" removes the variable), `input` on its stdin, and its stdout and
// stderr read by the test while it runs. Killed (SIGKILL) and reaped when
// destroyed, if still running.
class RunningProcess {
 public:
  RunningProcess(const std::vector<std::string>& argv,
                 const std::map<std::string, std::string>& env,
                 const std::string& input = "");
  ~RunningProcess();
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;

  // Reads until stdout holds `text` (true), or both pipes are at EOF or
  // `timeout` passed (false).
  bool ReadUntil(const std::string& text, std::chrono::milliseconds timeout);
  // Reads to EOF and reaps it; kills it after `timeout` (then timed_out()).
  // Its exit code, 128+N when killed by signal N.
  int Finish(std::chrono::milliseconds timeout);

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  bool timed_out() const { return timed_out_; }

 private:
  // Reads what the pipes hold, waiting until `deadline` for some; false at
  // EOF of both or at the deadline.
  bool ReadSome(std::chrono::steady_clock::time_point deadline);

  int pid_ = -1;
  UniqueFd out_fd_, err_fd_;
  std::string out_, err_;
  bool timed_out_ = false;
  int exit_code_ = -1;  // Set once reaped.
};

// Runs `argv` as RunningProcess does, to its end; kills it after `timeout`.
CommandResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout,
                         const std::string& input = "");

class BatonTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Runs `baton ARGS...` against this test's home.
  CommandResult Baton(
      std::vector<std::string> args,
      std::map<std::string, std::string> env = {},
      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Starts `baton ARGS...` against this test's home, to read its output as
  // it comes.
  std::unique_ptr<RunningProcess> StartBaton(
      std::vector<std::string> args,
      std::map<std::string, std::string> env = {});
  // `baton run ... -- COMMAND` expecting success; returns the task id.
  std::string Run(const std::string& command,
                  std::vector<std::string> flags = {},
                  std::map<std::string, std::string> env = {});
  // `baton status --json ID`'s task object.
  nlohmann::json Status(const std::string& id,
                        std::map<std::string, std::string> env = {});
  // Polls `status` (bounded) until the task left "queued" and is not
  // "starting" any more (its process is there); its record.
  nlohmann::json WaitStarted(const std::string& id,
                             std::map<std::string, std::string> env = {});
  // Pids of batond and the supervisor, from `baton daemon status --json`.
  std::pair<int, int> DaemonPids();
  // SIGKILLs batond (not the supervisor) and waits until it is gone.
  void KillDaemonHard();
  // A protocol client of this test's running batond (none is started).
  Result<DaemonClient> ConnectToDaemon();
  // An MCP-like client of `session` attaches, then goes away: the
  // session's lease starts (BATON_LEASE).
  void AttachAndLeave(const std::string& session);
  // Writes `line` (a '\n' is added, unless `then_half_close`: then the
  // line goes without it, and the writing side is shut) on a new connection
  // to the running batond, and returns the first line it answers ("" when
  // it closed or said nothing within 10 s).
  std::string RawRequest(const std::string& line, bool then_half_close = false);

  std::string home_;
  std::string binary_ = BATON_BINARY;

 private:
  // `args` as a command line of the baton binary, `env` with this test's
  // home and no session unless the test set one.
  void ForThisHome(std::vector<std::string>& args,
                   std::map<std::string, std::string>& env);
};

// Waits until `pid` no longer exists (true) or `timeout` passes (false).
bool WaitForPidGone(int pid, std::chrono::milliseconds timeout);

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_BATON_FIXTURE_H_
