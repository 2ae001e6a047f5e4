// A task's sandbox (doc/sandbox.md): its profile (what it may write, see and
// reach), the built-in profiles, and the bubblewrap command line that puts a
// task's whole process tree in it. Pure: what exists on disk is found by the
// caller (executor/local) and handed in.
#ifndef BATON_CORE_SANDBOX_H_
#define BATON_CORE_SANDBOX_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/util/json_fields.h"
#include "baton/util/result.h"

namespace baton {

// What a sandboxed task reaches of the network. bubblewrap's own network
// namespace has a loopback of its own and nothing else, so `none` means:
// nothing of the host's (not even its loopback), nothing outside; the
// task's own processes may still talk to each other on 127.0.0.1. A mode
// that reaches the host's loopback only is not built (doc/sandbox.md).
enum class SandboxNetwork { kNone, kFull };
template <>
struct JsonEnum<SandboxNetwork> {
  static constexpr std::pair<SandboxNetwork, std::string_view> kNames[] = {
      {SandboxNetwork::kNone, "none"}, {SandboxNetwork::kFull, "full"}};
};

// One profile, as resolved when the task was submitted and stored with it,
// so that a retry or a restart of batond runs it in the same sandbox.
struct SandboxProfile {
  std::string name;  // "strict", or the config's [sandbox.NAME].
  SandboxNetwork network = SandboxNetwork::kNone;
  // Writable besides the task's folder and its private /tmp: absolute
  // paths or "~/..." (the task's HOME); those that do not exist are left
  // out.
  std::vector<std::string> writable;
  // Hidden places (kCredentialPlaces, "~/.ssh"; or BATON_HOME as
  // "$BATON_HOME") the task may see anyway, read-only.
  std::vector<std::string> grant;
  // Variables of the client's environment the task keeps besides
  // kSandboxEnvironment: names, or prefixes ending in '*' ("LC_*").
  std::vector<std::string> env;
  // Refuse to start rather than run unconfined where bubblewrap is missing
  // or cannot make namespaces. Built-ins: true.
  bool required = true;

  bool operator==(const SandboxProfile&) const = default;
  template <class V>
  void Fields(V& v) {
    v("name", name, {.required = true, .non_empty = true});
    v("network", network);
    v("writable", writable, {.omit_when_empty = true});
    v("grant", grant, {.omit_when_empty = true});
    v("env", env, {.omit_when_empty = true});
    v("required", required);
  }
};

// The places hidden from every sandboxed task unless its profile grants
// them, relative to its HOME (doc/sandbox.md).
inline constexpr std::string_view kCredentialPlaces[] = {
    ".ssh",
    ".aws",
    ".config/gcloud",
    ".netrc",
    ".docker",
    ".kube",
    ".gnupg",
    ".azure",
    ".config/gh",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".password-store",
    ".cargo/credentials.toml",
    ".local/share/keyrings"};

// The variables a sandboxed task keeps of its client's environment; every
// other is dropped, unless its profile names it or the task sets it itself
// (`run --env`, an agent profile's `env`).
inline constexpr std::string_view kSandboxEnvironment[] = {
    "PATH", "HOME", "USER", "LOGNAME",   "LANG",     "LANGUAGE",
    "LC_*", "TERM", "TZ",   "COLORTERM", "NO_COLOR", "SHELL"};

// The built-in profiles: strict, agent, build (doc/sandbox.md).
std::vector<SandboxProfile> BuiltinSandboxProfiles();

// The profile named `name`, of `configured` (the config's, which may
// replace a built-in) or the built-ins. kInvalidArgument naming the known
// ones when there is none.
Result<SandboxProfile> FindSandboxProfile(
    std::string_view name, const std::vector<SandboxProfile>& configured);

// Where a task runs and what of the machine is there, as the caller found
// it: the input of SandboxArgv besides the profile.
struct SandboxSite {
  std::string bwrap;       // bubblewrap's absolute path.
  std::string folder;      // The task's folder (cwd or worktree): writable.
  std::string home;        // The task's HOME ("" for none).
  std::string baton_home;  // batond's state folder: hidden.
  // batond's and the supervisor's sockets: hidden too, or a task could ask
  // batond to start an unconfined one.
  std::string baton_runtime;
  // More writable folders the task needs (a worktree's repository's .git).
  std::vector<std::string> also_writable;
  // The places to hide that exist (the caller checked them, with
  // SandboxHiddenCandidates): a folder gets an empty tmpfs over it, a file
  // /dev/null.
  struct Hidden {
    std::string path;
    bool folder = true;
  };
  std::vector<Hidden> hidden;
};

// The absolute places `profile` hides from a task of `site` (BATON_HOME,
// batond's sockets' folder, and the credential places it does not grant): for
// the caller to look up before SandboxArgv.
std::vector<std::string> SandboxHiddenCandidates(const SandboxProfile& profile,
                                                 const SandboxSite& site);

// The command line that runs a task in `profile`: bubblewrap and its
// options up to and including "--"; the task's argv follows. The root is
// read-only; the task's folder, a private /tmp and the profile's writable
// paths are writable; the hidden places are covered; the task gets its
// own pid namespace (it and all it starts die with its first process) and,
// for network `none`, its own network namespace. Mounts are ordered so
// that a folder comes before anything inside it.
std::vector<std::string> SandboxArgv(const SandboxProfile& profile,
                                     const SandboxSite& site);

// Of `env` ("NAME=value" entries), those kSandboxEnvironment and the
// profile's `env` keep.
std::vector<std::string> SandboxEnvironment(
    const SandboxProfile& profile, const std::vector<std::string>& env);

// "strict (network none)" for people.
std::string SandboxText(const SandboxProfile& profile);

}  // namespace baton

#endif  // BATON_CORE_SANDBOX_H_
