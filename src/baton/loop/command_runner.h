// Runs short commands to their end on an EventLoop without ever blocking
// it: each is batond's own child in its own session (util/spawn_child.h),
// stdin /dev/null, its stdout and stderr kept (the first kMaxOutput bytes of
// each), watched by a pidfd and killed, with its whole process group, at a
// deadline. What Slurm's commands (sbatch, squeue, scancel, ...) run
// through (doc/slurm.md). Single-threaded.
#ifndef BATON_LOOP_COMMAND_RUNNER_H_
#define BATON_LOOP_COMMAND_RUNNER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/loop/event_loop.h"

namespace baton {

// How one command ended.
struct CommandResult {
  enum class End { kExited, kSignaled, kTimedOut, kSpawnFailed };
  End end = End::kSpawnFailed;
  int code = 0;  // The exit code, the signal, or the spawn's errno.
  std::string out;
  std::string err;

  bool ok() const { return end == End::kExited && code == 0; }
  // For people: "exit code 1: sbatch: error: invalid partition", "timed
  // out after 10 s", "could not start: No such file or directory".
  std::string Describe(std::chrono::milliseconds timeout) const;
};

class CommandRunner {
 public:
  static constexpr size_t kMaxOutput = size_t{1} << 20;

  using Done = std::function<void(CommandResult)>;

  explicit CommandRunner(EventLoop* loop);
  // Kills the commands still running; their callbacks are not called.
  ~CommandRunner();
  CommandRunner(const CommandRunner&) = delete;
  CommandRunner& operator=(const CommandRunner&) = delete;

  // Runs `argv` (argv[0] found on env's PATH) with `env` ("NAME=value", the
  // whole environment) in `cwd`. `done` runs on the loop once it ended and
  // its output is read, or at once when it cannot be started; never from
  // inside Run().
  void Run(std::vector<std::string> argv, std::vector<std::string> env,
           std::chrono::milliseconds timeout, Done done, std::string cwd = "/");

  // Commands started so far (for tests and the controller-call count).
  int64_t started() const { return started_; }
  size_t running() const { return running_.size(); }

 private:
  struct Command;
  void OnExit(Command* command);
  void Finish(Command* command, CommandResult result);

  EventLoop* loop_;
  std::map<Command*, std::unique_ptr<Command>> running_;
  int64_t started_ = 0;
};

}  // namespace baton

#endif  // BATON_LOOP_COMMAND_RUNNER_H_
