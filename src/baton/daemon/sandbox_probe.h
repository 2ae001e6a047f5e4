// Whether this machine can make a task's sandbox (doc/sandbox.md): is
// bubblewrap there, and can it make the namespaces a sandbox needs? batond
// asks before it stores a sandboxed task, so that a profile that is
// `required` is refused at its start rather than run unconfined.
//
// The question is a tiny sandbox (`bwrap ... -- true`) run through a
// CommandRunner: the loop never waits for it. A success is kept for the
// life of batond; a failure is asked again by the next sandboxed task (one
// may install bubblewrap meanwhile). Starts that come while a probe runs
// wait for the same probe. Single-threaded.
#ifndef BATON_DAEMON_SANDBOX_PROBE_H_
#define BATON_DAEMON_SANDBOX_PROBE_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "baton/loop/command_runner.h"
#include "baton/loop/event_loop.h"
#include "baton/util/result.h"

namespace baton {

// bubblewrap's absolute path for this batond: $BATON_BWRAP when set (tests
// name a missing or a failing one to see a machine without sandboxes),
// else `bwrap` on batond's PATH; "" when there is none.
std::string FindBwrap();

class SandboxProbe {
 public:
  static constexpr std::chrono::milliseconds kTimeout{5000};
  using Done = std::function<void(const Status&)>;

  // `bwrap` as FindBwrap() gives it.
  SandboxProbe(EventLoop* loop, std::string bwrap);
  SandboxProbe(const SandboxProbe&) = delete;
  SandboxProbe& operator=(const SandboxProbe&) = delete;

  // `done` gets success when a sandbox can be made here, else kUnavailable
  // saying why and what to do: at once when it is known to work or there
  // is no bubblewrap, else once the probe ended.
  void Check(Done done);

  const std::string& bwrap() const { return bwrap_; }
  int probes_started() const { return probes_started_; }

 private:
  void Finish(const CommandResult& result);

  std::string bwrap_;
  bool works_ = false;
  std::vector<Done> waiting_;  // Not empty while a probe runs.
  int probes_started_ = 0;
  CommandRunner runner_;  // Last: destroyed first, killing what runs.
};

}  // namespace baton

#endif  // BATON_DAEMON_SANDBOX_PROBE_H_
