// Whether a codex CLI has `app-server` (doc/agents.md, "Codex: app-server or
// exec"). batond asks before it starts a task with the `codex` adapter; a
// codex without app-server runs through `codex exec --json` instead.
//
// The question is `<codex> app-server --help`, run through a CommandRunner
// (loop/command_runner.h: batond's own child in its own session, stdin
// /dev/null, stdout and stderr kept, killed with its process group at a
// deadline): the loop never waits for it. Answers are cached by the
// program file the PATH names (path, device, inode, size, mtime, ctime)
// and the rest of the command line, so a codex is asked once per install;
// a delegate that comes while the same question runs waits for the same
// probe. Single-threaded.
#ifndef BATON_DAEMON_APP_SERVER_PROBE_H_
#define BATON_DAEMON_APP_SERVER_PROBE_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "baton/loop/command_runner.h"
#include "baton/loop/event_loop.h"

namespace baton {

enum class CodexMode {
  kAppServer,  // `app-server --help` succeeded: the codex adapter.
  kExec,       // It failed: run the codex-exec adapter.
  kUnknown,    // No answer (no spawn, a timeout, a signal): keep codex.
};

struct ProbeVerdict {
  CodexMode mode = CodexMode::kUnknown;
  // Why, for people: e.g. "exit code 2: error: unrecognized subcommand
  // 'app-server'", "timed out after 5 s".
  std::string reason;
  // Worth remembering for this program file: an answer that does not
  // change until the file does (exit 0, or clap's "unrecognized
  // subcommand").
  bool lasting = false;
};

// How one probe process ended.
struct ProbeRun {
  enum class End { kExited, kSignaled, kTimedOut, kSpawnFailed };
  End end = End::kSpawnFailed;
  int code = 0;        // The exit code, the signal, or the spawn's errno.
  std::string output;  // Its stdout and stderr, the first 16 KiB.
};

// The decision, without I/O. Exit 0 -> app-server, unless the help's
// "Usage:" line is not app-server's (a codex that took the word for its
// [PROMPT] and printed the top-level help) -> exec; both lasting. Another
// exit code -> exec (lasting only with clap's "unrecognized subcommand").
// Anything else -> unknown.
ProbeVerdict JudgeProbe(const ProbeRun& run, std::chrono::milliseconds timeout);

class AppServerProbe {
 public:
  static constexpr std::chrono::milliseconds kTimeout{5000};

  using Done = std::function<void(const ProbeVerdict&)>;

  explicit AppServerProbe(EventLoop* loop,
                          std::chrono::milliseconds timeout = kTimeout);
  // Kills the probes still running (their waiters are not called).
  ~AppServerProbe();
  AppServerProbe(const AppServerProbe&) = delete;
  AppServerProbe& operator=(const AppServerProbe&) = delete;

  // Whether `command` (a profile's argv prefix: the program, then options
  // such as -c key=value) has app-server, with `env` ("NAME=value"; the
  // task's environment) and `cwd` as the task will have them. `done` runs
  // at once on a cached answer or when the program cannot be found
  // (unknown), else when the probe ends.
  void Check(const std::vector<std::string>& command,
             const std::vector<std::string>& env, const std::string& cwd,
             Done done);

  // Probe processes started so far (for tests).
  int probes_started() const { return probes_started_; }

 private:
  // The resolved program file's identity, and the argv.
  using Key = std::tuple<std::string, dev_t, ino_t, off_t, int64_t, int64_t,
                         std::vector<std::string>>;

  void Finish(const Key& key, ProbeRun run);

  std::chrono::milliseconds timeout_;
  std::map<Key, ProbeVerdict> cache_;
  // The probes running, each with the delegates waiting for its answer.
  std::map<Key, std::vector<Done>> running_;
  int probes_started_ = 0;
  CommandRunner runner_;  // Last: destroyed first, killing what runs.
};

}  // namespace baton

#endif  // BATON_DAEMON_APP_SERVER_PROBE_H_
