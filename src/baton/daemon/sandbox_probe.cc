#include "baton/daemon/sandbox_probe.h"

#include <fmt/format.h>

#include <cstdlib>

#include "baton/util/environment.h"
#include "baton/util/program_path.h"

namespace baton {

std::string FindBwrap() {
  if (const char* named = std::getenv("BATON_BWRAP"); named && *named)
    return IsExecutableFile(named) ? named : "";
  auto found = ResolveProgram("bwrap", ProcessEnvironment(), "/");
  return found ? *found : "";
}

SandboxProbe::SandboxProbe(EventLoop* loop, std::string bwrap)
    : bwrap_(std::move(bwrap)), runner_(loop) {}

void SandboxProbe::Check(Done done) {
  if (works_)
    return done(Status());
  if (bwrap_.empty()) {
    return done(MakeError(
        ErrorCode::kUnavailable,
        "no sandbox can be made here: bubblewrap (bwrap) is not installed "
        "(apt install bubblewrap; or set the profile's required = false to "
        "run it unconfined, doc/sandbox.md)"));
  }
  waiting_.push_back(std::move(done));
  if (waiting_.size() > 1)
    return;  // A probe runs already.
  ++probes_started_;
  // The namespaces and mounts every sandbox needs (core/sandbox.h).
  std::vector<std::string> argv = {bwrap_,

                                   "--unshare-pid",
                                   "--unshare-ipc",
                                   "--unshare-net",
                                   "--cap-drop",
                                   "ALL",
                                   "--ro-bind",
                                   "/",
                                   "/",
                                   "--dev",
                                   "/dev",
                                   "--proc",
                                   "/proc",
                                   "--tmpfs",
                                   "/tmp",
                                   "--",
                                   "true"};
  runner_.Run(std::move(argv), {"PATH=/usr/bin:/bin"}, kTimeout,
              [this](CommandResult result) { Finish(result); });
}

void SandboxProbe::Finish(const CommandResult& result) {
  Status verdict;
  if (result.ok()) {
    works_ = true;
  } else {
    std::string said = result.Describe(kTimeout);
    verdict = MakeError(
        ErrorCode::kUnavailable,
        fmt::format("no sandbox can be made here: {} could not make its "
                    "namespaces ({}); user namespaces may be off "
                    "(kernel.unprivileged_userns_clone, a container's "
                    "seccomp). Run `baton doctor`, or set the profile's "
                    "required = false to run it unconfined (doc/sandbox.md)",
                    bwrap_, said));
  }
  std::vector<Done> waiting = std::move(waiting_);
  waiting_.clear();
  for (Done& done : waiting)
    done(verdict);
}

}  // namespace baton
