// `baton daemon install-service`: batond as systemd user units, started by
// socket activation on the first connection (doc/install.md). Without it,
// a CLI call starts batond as it always has.
#include <fmt/format.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "baton/cli/verbs.h"
#include "baton/util/detached_process.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/program_path.h"
#include "baton/util/spawn_child.h"
#include "baton/util/state_paths.h"

namespace baton {
namespace {

struct ServiceArgs {
  bool dry_run = false;
  bool no_enable = false;
};

struct Unit {
  std::string path;
  std::string text;
};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// systemd splits ExecStart= and Environment= on blanks and reads quotes,
// backslashes and '%' specifiers: a path holding one is refused rather
// than escaped wrongly.
bool SafeForUnit(const std::string& text) {
  return text.find_first_of(" \t\n\"'\\%$;") == std::string::npos;
}

// The folder of the user's units: $XDG_CONFIG_HOME/systemd/user, else
// ~/.config/systemd/user.
Result<std::string> UnitFolder() {
  std::string config = Env("XDG_CONFIG_HOME");
  if (config.empty() || config[0] != '/') {
    std::string home = Env("HOME");
    if (home.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "HOME is not set: cannot find ~/.config/systemd/user");
    }
    config = home + "/.config";
  }
  return config + "/systemd/user";
}

// The units, with the environment that makes batond find the very state
// folder and socket this CLI uses (a user manager's environment may lack
// BATON_HOME or XDG_STATE_HOME).
Result<std::vector<Unit>> MakeUnits(const StatePaths& paths,
                                    const std::string& folder) {
  std::string baton = SelfExecutable();
  std::vector<std::string> environment;
  std::string unset;
  if (!Env("BATON_HOME").empty()) {
    // The runtime folder is the home then (util/state_paths.h).
    environment.push_back("BATON_HOME=" + paths.home);
  } else {
    // home is $XDG_STATE_HOME/baton (or ~/.local/state/baton).
    environment.push_back("XDG_STATE_HOME=" +
                          paths.home.substr(0, paths.home.rfind('/')));
    std::string runtime = Env("XDG_RUNTIME_DIR");
    if (!runtime.empty() && runtime[0] == '/')
      environment.push_back("XDG_RUNTIME_DIR=" + runtime);
    else
      unset = " XDG_RUNTIME_DIR";
    unset = "UnsetEnvironment=BATON_HOME" + unset + "\n";
  }
  for (const std::string& text : {baton, paths.daemon_socket()}) {
    if (!SafeForUnit(text)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "'" + text +
                           "' holds a blank, a quote, a backslash, '$', ';' or "
                           "'%', which systemd units read specially; install "
                           "baton or set BATON_HOME where the path has none");
    }
  }
  std::string environment_lines;
  for (const std::string& entry : environment) {
    if (!SafeForUnit(entry)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the state folder '" + paths.home +
                           "' holds a character systemd units read specially; "
                           "set BATON_HOME to a plain path");
    }
    environment_lines += "Environment=" + entry + "\n";
  }
  environment_lines += unset;
  const std::string header =
      "# Written by `baton daemon install-service`; written again by it, so "
      "edit\n# with `systemctl --user edit` instead.\n";
  Unit socket{
      folder + "/batond.socket",
      header +
          "[Unit]\nDescription=baton daemon socket (background tasks for "
          "coding agents)\nDocumentation=man:baton(1)\n\n[Socket]\n"
          "ListenStream=" +
          paths.daemon_socket() +
          "\nSocketMode=0600\nDirectoryMode=0700\n\n[Install]\n"
          "WantedBy=sockets.target\n"};
  Unit service{
      folder + "/batond.service",
      header +
          "[Unit]\nDescription=baton daemon (background tasks for coding "
          "agents)\nDocumentation=man:baton(1)\nRequires=batond.socket\n"
          "After=batond.socket\n\n[Service]\nExecStart=" +
          baton + " daemon run\n" + environment_lines +
          "# Only batond itself: the supervisor and the tasks outlive a stop "
          "or a\n# restart of batond, as they do without systemd.\n"
          "KillMode=process\nRestart=on-failure\n\n[Install]\n"
          "Also=batond.socket\n"};
  return std::vector<Unit>{socket, service};
}

// Runs `systemctl --user ARGS...` with this process's environment (the user
// manager is found through XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS);
// its messages go to our stderr. Returns its exit status, or why not.
Result<int> Systemctl(std::vector<std::string> args) {
  std::vector<std::string> env = ProcessEnvironment();
  auto program = ResolveProgram("systemctl", env, "/");
  if (!program) {
    return MakeError(ErrorCode::kNotFound,
                     "systemctl is not on PATH: this system has no systemd");
  }
  args.insert(args.begin(), {"systemctl", "--user"});
  auto pid = SpawnChild({.program = *program,
                         .argv = args,
                         .env = env,
                         .cwd = "/",
                         .stdout_fd = 2,
                         .stderr_fd = 2});
  if (!pid)
    return std::unexpected(pid.error());
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0) {
    if (errno != EINTR)
      return std::unexpected(ErrnoError("waitpid", errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int DoInstallService(const Context& ctx, const ServiceArgs& args) {
  auto paths = StatePaths::FromEnvironment("");
  if (!paths)
    return ReportError(ctx, paths.error());
  auto folder = UnitFolder();
  if (!folder)
    return ReportError(ctx, folder.error());
  auto units = MakeUnits(*paths, *folder);
  if (!units)
    return ReportError(ctx, units.error());
  if (args.dry_run) {
    for (const Unit& unit : *units)
      std::printf("# %s\n%s\n", unit.path.c_str(), unit.text.c_str());
    std::printf("(--dry-run: nothing written)\n");
    return kExitOk;
  }
  std::error_code error;
  std::filesystem::create_directories(*folder, error);
  if (error) {
    return ReportError(ctx, {ErrorCode::kIo, "cannot create " + *folder + ": " +
                                                 error.message()});
  }
  for (const Unit& unit : *units) {
    if (auto written = WriteFileAtomic(unit.path, unit.text); !written)
      return ReportError(ctx, written.error());
    std::printf("wrote %s\n", unit.path.c_str());
  }
  if (args.no_enable) {
    std::printf(
        "not enabled (--no-enable); to enable: systemctl --user "
        "daemon-reload && systemctl --user enable --now batond.socket\n");
    return kExitOk;
  }
  // 0 once `systemctl --user WORDS...` succeeded, else the exit code of
  // the error it reported.
  auto step = [&ctx](std::vector<std::string> words) -> int {
    auto ran = Systemctl(words);
    if (ran && *ran == 0)
      return 0;
    std::string line;
    for (const std::string& word : words)
      line += (line.empty() ? "" : " ") + word;
    return ReportError(
        ctx, {ErrorCode::kUnavailable,
              fmt::format("systemctl --user {} failed ({}); the units are "
                          "written: enable them in a user session with "
                          "`systemctl --user daemon-reload && systemctl "
                          "--user enable --now batond.socket`",
                          line,
                          ran ? fmt::format("exit code {}", *ran)
                              : ran.error().message)});
  };
  // First whether a user manager answers at all: without one, a running
  // batond is left alone.
  if (int failed = step({"daemon-reload"}))
    return failed;
  // A batond started without systemd holds the socket's path: it stops
  // first (its tasks keep running under the supervisor, and the batond
  // that systemd starts adopts them).
  if (auto client = ctx.Connect(/*autostart=*/false)) {
    if (auto stopped = client->Call(ShutdownRequest{}); stopped) {
      std::printf("stopped the running batond (%lld live tasks kept)\n",
                  static_cast<long long>(stopped->live_tasks));
      while (client->ReadReply(std::chrono::milliseconds(10'000))) {
      }
    }
  }
  if (int failed = step({"enable", "--now", "batond.socket"}))
    return failed;
  std::printf(
      "enabled: batond.socket listens on %s; systemd starts batond on the "
      "first connection\n",
      paths->daemon_socket().c_str());
  return kExitOk;
}

}  // namespace

void DefineDaemonService(CLI::App& daemon_command, const Context& ctx,
                         Action& action) {
  auto args = std::make_shared<ServiceArgs>();
  auto* install = daemon_command.add_subcommand(
      "install-service",
      "Write batond's systemd user units (socket activation) and enable them");
  install->add_flag("--dry-run", args->dry_run,
                    "Print the units; write and enable nothing");
  install->add_flag("--no-enable", args->no_enable,
                    "Write the units, but do not run systemctl");
  install->callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoInstallService(ctx, *args); };
  });
}

}  // namespace baton
