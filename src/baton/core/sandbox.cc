#include "baton/core/sandbox.h"

#include <fmt/format.h>

#include <algorithm>

namespace baton {
namespace {

// "~/x" under `home` ("" when there is no home to put it under); other
// paths as they are.
std::string UnderHome(const std::string& path, const std::string& home) {
  if (path == "~")
    return home;
  if (!path.starts_with("~/"))
    return path;
  return home.empty() ? "" : home + path.substr(1);
}

bool Named(const std::vector<std::string>& patterns, std::string_view name) {
  return std::ranges::any_of(patterns, [&](std::string_view pattern) {
    if (pattern.ends_with('*'))
      return name.starts_with(pattern.substr(0, pattern.size() - 1));
    return name == pattern;
  });
}

}  // namespace

std::vector<SandboxProfile> BuiltinSandboxProfiles() {
  // The proxies a client set, for the profiles with network.
  std::vector<std::string> proxies = {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                                      "http_proxy", "https_proxy", "no_proxy"};
  SandboxProfile strict{.name = "strict"};
  SandboxProfile agent{
      .name = "agent",
      .network = SandboxNetwork::kFull,
      // The agent CLIs' own state: sessions, settings, their login.
      .writable = {"~/.claude", "~/.claude.json", "~/.codex", "~/.gemini",
                   "~/.qwen", "~/.config/opencode", "~/.local/share/opencode",
                   "~/.cache"},
      .env = {"ANTHROPIC_*", "CLAUDE_*", "OPENAI_*", "CODEX_*", "GEMINI_*",
              "GOOGLE_API_KEY", "GOOGLE_GENAI_*", "QWEN_*", "DASHSCOPE_*",
              "OPENCODE_*"}};
  agent.env.insert(agent.env.end(), proxies.begin(), proxies.end());
  SandboxProfile build{
      .name = "build",
      .network = SandboxNetwork::kFull,
      .writable = {"~/.cache", "~/.ccache", "~/.cargo/registry", "~/.cargo/git",
                   "~/.npm", "~/.m2", "~/.gradle", "~/go/pkg"},
      .env = {"CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
              "MAKEFLAGS", "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOFLAGS",
              "GOCACHE", "CCACHE_DIR", "PKG_CONFIG_PATH"}};
  build.env.insert(build.env.end(), proxies.begin(), proxies.end());
  return {std::move(strict), std::move(agent), std::move(build)};
}

Result<SandboxProfile> FindSandboxProfile(
    std::string_view name, const std::vector<SandboxProfile>& configured) {
  for (const SandboxProfile& profile : configured) {
    if (profile.name == name)
      return profile;
  }
  std::vector<SandboxProfile> builtins = BuiltinSandboxProfiles();
  std::vector<std::string> names;
  for (SandboxProfile& profile : builtins) {
    if (profile.name == name)
      return std::move(profile);
    names.push_back(profile.name);
  }
  for (const SandboxProfile& profile : configured) {
    if (std::ranges::find(names, profile.name) == names.end())
      names.push_back(profile.name);
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("no sandbox profile '{}'; the profiles are {} "
                               "(a config file adds its own as "
                               "[sandbox.NAME], doc/sandbox.md)",
                               name, fmt::join(names, ", ")));
}

std::vector<std::string> SandboxHiddenCandidates(const SandboxProfile& profile,
                                                 const SandboxSite& site) {
  std::vector<std::string> granted;
  for (const std::string& path : profile.grant) {
    if (path == "$BATON_HOME") {
      granted.push_back(site.baton_home);
      granted.push_back(site.baton_runtime);
    } else {
      granted.push_back(UnderHome(path, site.home));
    }
  }
  std::vector<std::string> places;
  auto add = [&](std::string path) {
    if (!path.empty() && std::ranges::find(granted, path) == granted.end())
      places.push_back(std::move(path));
  };
  add(site.baton_home);
  if (site.baton_runtime != site.baton_home)
    add(site.baton_runtime);
  if (!site.home.empty()) {
    for (std::string_view place : kCredentialPlaces)
      add(fmt::format("{}/{}", site.home, place));
  }
  return places;
}

std::vector<std::string> SandboxArgv(const SandboxProfile& profile,
                                     const SandboxSite& site) {
  // Its own pid namespace, the task's first process its pid 1: when that
  // ends, the kernel kills everything left in the namespace before the
  // outer bubblewrap (the task's leader for the supervisor) sees it end
  // (doc/sandbox.md). Not --die-with-parent: the task outlives a dead
  // supervisor as every task does (doc/supervisor.md). --cap-drop ALL: a
  // task of root keeps no capability to undo its mounts.
  std::vector<std::string> argv = {site.bwrap,   "--unshare-pid",
                                   "--as-pid-1", "--unshare-ipc",
                                   "--cap-drop", "ALL"};
  if (profile.network == SandboxNetwork::kNone)
    argv.push_back("--unshare-net");
  for (const char* part :
       {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}) {
    argv.push_back(part);
  }
  // Each mount over a path, ordered so that a folder's comes before those
  // inside it: a hidden BATON_HOME, then the worktree inside it bound
  // writable again; a writable folder, then the ~/.ssh inside it hidden.
  struct Mount {
    std::string path;
    std::vector<std::string> options;
  };
  std::vector<Mount> mounts;
  mounts.push_back({"/tmp", {"--tmpfs", "/tmp"}});
  for (const SandboxSite::Hidden& hidden : site.hidden) {
    if (hidden.folder) {
      mounts.push_back({hidden.path, {"--tmpfs", hidden.path}});
    } else {
      mounts.push_back({hidden.path, {"--ro-bind", "/dev/null", hidden.path}});
    }
  }
  mounts.push_back({site.folder, {"--bind", site.folder, site.folder}});
  std::vector<std::string> writable = site.also_writable;
  for (const std::string& path : profile.writable)
    writable.push_back(UnderHome(path, site.home));
  for (const std::string& path : writable) {
    if (path.starts_with('/'))
      mounts.push_back({path, {"--bind-try", path, path}});
  }
  std::ranges::stable_sort(mounts, {}, &Mount::path);
  for (Mount& mount : mounts) {
    for (std::string& option : mount.options)
      argv.push_back(std::move(option));
  }
  for (const char* part : {"--chdir", site.folder.c_str(), "--"})
    argv.push_back(part);
  return argv;
}

std::vector<std::string> SandboxEnvironment(
    const SandboxProfile& profile, const std::vector<std::string>& env) {
  std::vector<std::string> kept;
  std::vector<std::string> allowed(std::begin(kSandboxEnvironment),
                                   std::end(kSandboxEnvironment));
  for (const std::string& entry : env) {
    std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (Named(allowed, name) || Named(profile.env, name))
      kept.push_back(entry);
  }
  return kept;
}

std::string SandboxText(const SandboxProfile& profile) {
  return fmt::format("{} (network {}{})", profile.name,
                     EnumName(profile.network),
                     profile.required ? "" : "; not required");
}

}  // namespace baton
