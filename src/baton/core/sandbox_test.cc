#include "baton/core/sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace baton {
namespace {

SandboxProfile Strict() {
  auto strict = FindSandboxProfile("strict", {});
  EXPECT_TRUE(strict);
  return *strict;
}

// Where `options` (e.g. {"--tmpfs", "/tmp"}) starts in `argv`; -1 if not.
long ArgvIndex(const std::vector<std::string>& argv,
               const std::vector<std::string>& options) {
  auto at =
      std::search(argv.begin(), argv.end(), options.begin(), options.end());
  return at == argv.end() ? -1 : at - argv.begin();
}

TEST(SandboxArgvTest, StrictIsAReadOnlyRootWithItsFolderAndTmpWritable) {
  SandboxSite site{.bwrap = "/usr/bin/bwrap",
                   .folder = "/work/repo",
                   .home = "/home/u",
                   .baton_home = "/home/u/.local/state/baton"};
  std::vector<std::string> argv = SandboxArgv(Strict(), site);
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_EQ(argv.back(), "--");
  for (const char* flag :
       {"--unshare-pid", "--as-pid-1", "--unshare-net", "--unshare-ipc"}) {
    EXPECT_NE(ArgvIndex(argv, {flag}), -1) << flag;
  }
  EXPECT_NE(ArgvIndex(argv, {"--cap-drop", "ALL"}), -1);
  EXPECT_NE(ArgvIndex(argv, {"--ro-bind", "/", "/"}), -1);
  EXPECT_NE(ArgvIndex(argv, {"--tmpfs", "/tmp"}), -1);
  EXPECT_NE(ArgvIndex(argv, {"--bind", "/work/repo", "/work/repo"}), -1);
  EXPECT_NE(ArgvIndex(argv, {"--chdir", "/work/repo", "--"}), -1);
  // Nothing else is writable: no other bind.
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--bind"), 1);
  EXPECT_EQ(ArgvIndex(argv, {"--bind-try"}), -1);
}

TEST(SandboxArgvTest, FullNetworkSharesTheHostsNetwork) {
  auto build = FindSandboxProfile("build", {});
  ASSERT_TRUE(build);
  SandboxSite site{.bwrap = "bwrap", .folder = "/w", .home = "/home/u"};
  std::vector<std::string> argv = SandboxArgv(*build, site);
  EXPECT_EQ(ArgvIndex(argv, {"--unshare-net"}), -1);
  // Its caches, under the task's HOME, if they exist.
  EXPECT_NE(ArgvIndex(argv, {"--bind-try", "/home/u/.cache", "/home/u/.cache"}),
            -1);
}

TEST(SandboxArgvTest, AFolderIsMountedBeforeWhatIsInsideIt) {
  // The task's folder holds its HOME (with a key) and batond's state; its
  // worktree-like folder lies inside the hidden state.
  SandboxSite site{.bwrap = "bwrap",
                   .folder = "/r/state/worktrees/agent-1",
                   .home = "/r/home",
                   .baton_home = "/r/state",
                   .also_writable = {"/r"}};
  site.hidden = {
      {"/r/state", true}, {"/r/home/.ssh", true}, {"/r/home/.netrc", false}};
  std::vector<std::string> argv = SandboxArgv(Strict(), site);
  long writable_root = ArgvIndex(argv, {"--bind-try", "/r", "/r"});
  long state = ArgvIndex(argv, {"--tmpfs", "/r/state"});
  long worktree = ArgvIndex(argv, {"--bind", site.folder, site.folder});
  long ssh = ArgvIndex(argv, {"--tmpfs", "/r/home/.ssh"});
  long netrc = ArgvIndex(argv, {"--ro-bind", "/dev/null", "/r/home/.netrc"});
  ASSERT_NE(writable_root, -1);
  ASSERT_NE(netrc, -1);
  EXPECT_LT(writable_root, state);
  EXPECT_LT(state, worktree);
  EXPECT_LT(writable_root, ssh);
}

TEST(SandboxArgvTest, HiddenCandidatesAreStateAndCredentialsButNotGranted) {
  SandboxProfile profile = Strict();
  profile.grant = {"~/.ssh", "$BATON_HOME"};
  SandboxSite site{.folder = "/w",
                   .home = "/h",
                   .baton_home = "/state",
                   .baton_runtime = "/run/user/1/baton"};
  std::vector<std::string> places = SandboxHiddenCandidates(profile, site);
  EXPECT_EQ(std::ranges::count(places, "/h/.ssh"), 0);
  EXPECT_EQ(std::ranges::count(places, "/state"), 0);
  EXPECT_EQ(std::ranges::count(places, "/run/user/1/baton"), 0);
  EXPECT_EQ(std::ranges::count(places, "/h/.aws"), 1);
  EXPECT_EQ(std::ranges::count(places, "/h/.netrc"), 1);
  EXPECT_EQ(std::ranges::count(places, "/h/.config/gcloud"), 1);
  // Without a grant, the state folder and batond's sockets are hidden
  // too: else a task could ask batond for an unconfined one.
  std::vector<std::string> strict = SandboxHiddenCandidates(Strict(), site);
  EXPECT_EQ(std::ranges::count(strict, "/state"), 1);
  EXPECT_EQ(std::ranges::count(strict, "/run/user/1/baton"), 1);
}

TEST(SandboxEnvironmentTest, KeepsTheAllowlistAndTheProfilesNames) {
  std::vector<std::string> env = {"PATH=/bin",        "HOME=/h",
                                  "LC_ALL=C",         "AWS_SECRET=x",
                                  "GITHUB_TOKEN=y",   "ANTHROPIC_API_KEY=k",
                                  "SSH_AUTH_SOCK=/s", "TERM=xterm"};
  EXPECT_EQ(SandboxEnvironment(Strict(), env),
            (std::vector<std::string>{"PATH=/bin", "HOME=/h", "LC_ALL=C",
                                      "TERM=xterm"}));
  auto agent = FindSandboxProfile("agent", {});
  ASSERT_TRUE(agent);
  std::vector<std::string> kept = SandboxEnvironment(*agent, env);
  EXPECT_EQ(std::ranges::count(kept, "ANTHROPIC_API_KEY=k"), 1);
  EXPECT_EQ(std::ranges::count(kept, "GITHUB_TOKEN=y"), 0);
}

TEST(SandboxProfileTest, AnUnknownNameIsRefusedNamingTheKnownOnes) {
  SandboxProfile mine{.name = "mine", .network = SandboxNetwork::kFull};
  auto missing = FindSandboxProfile("nosuch", {mine});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.error().message.find(
                "no sandbox profile 'nosuch'; the profiles are strict, "
                "agent, build, mine"),
            std::string::npos)
      << missing.error().message;
  // The config's profile is found, and may replace a built-in.
  EXPECT_EQ(FindSandboxProfile("mine", {mine})->network, SandboxNetwork::kFull);
  SandboxProfile loose{.name = "strict", .required = false};
  EXPECT_FALSE(FindSandboxProfile("strict", {loose})->required);
  EXPECT_TRUE(Strict().required);
  EXPECT_EQ(SandboxText(Strict()), "strict (network none)");
}

}  // namespace
}  // namespace baton
