// `baton doctor`: checks what a user of baton needs and says, line by
// line, ok / warning / error with the fix (doc/install.md, "baton
// doctor"): the state folder, its free space, batond, the agent CLIs, the
// MCP clients' registration of baton, cgroup delegation, and whether a
// task's sandbox can be made (bubblewrap). Exit code 0
// only when no line is an error.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "baton/cli/mcp_config.h"
#include "baton/cli/verbs.h"
#include "baton/util/cgroups.h"
#include "baton/util/detached_process.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/program_path.h"
#include "baton/util/run_to_end.h"
#include "baton/util/spawn_child.h"
#include "baton/util/state_paths.h"
#include "baton/util/version.h"

namespace baton {
namespace {

enum class Level { kOk, kWarning, kError };

struct Finding {
  Level level;
  std::string check;  // "state folder", "batond", "claude", ...
  std::string message;
  std::string fix;  // Empty when ok.
};

const char* LevelName(Level level) {
  switch (level) {
    case Level::kOk:
      return "ok";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "?";
}

std::string Home() {
  const char* home = std::getenv("HOME");
  return home ? home : "";
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void CheckStateFolder(const StatePaths& paths, std::vector<Finding>& out) {
  for (const auto& [what, dir] : {std::pair{"state folder", paths.home},
                                  std::pair{"socket folder", paths.runtime}}) {
    if (dir == paths.home && what != std::string_view("state folder"))
      continue;  // BATON_HOME holds the sockets too.
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) {
      out.push_back({Level::kOk, what,
                     dir + " is not there yet (batond makes it, 0700)", ""});
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      out.push_back({Level::kError, what, dir + " is not a folder",
                     "move it away, or set BATON_HOME to another folder"});
    } else if (st.st_uid != ::geteuid()) {
      out.push_back({Level::kError, what,
                     fmt::format("{} belongs to uid {}, not to you ({})", dir,
                                 st.st_uid, ::geteuid()),
                     "chown it to yourself, or set BATON_HOME to a folder "
                     "of yours"});
    } else if (st.st_mode & 077) {
      out.push_back({Level::kError, what,
                     fmt::format("{} has mode {:o}: others may read your "
                                 "tasks' output",
                                 dir, st.st_mode & 0777),
                     "chmod 700 " + dir});
    } else if (::access(dir.c_str(), W_OK) != 0) {
      out.push_back({Level::kError, what, dir + " is not writable",
                     "chmod u+rwx " + dir});
    } else {
      out.push_back({Level::kOk, what, dir + " is yours, mode 700", ""});
    }
  }
  struct statvfs fs;
  std::string where = Exists(paths.home) ? paths.home : Home();
  if (!where.empty() && ::statvfs(where.c_str(), &fs) == 0) {
    uint64_t free_mb =
        static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize / (1024 * 1024);
    Level level = free_mb < 100    ? Level::kError
                  : free_mb < 1024 ? Level::kWarning
                                   : Level::kOk;
    out.push_back(
        {level, "free space",
         fmt::format("{} MB free for task output under {}", free_mb, where),
         level == Level::kOk ? ""
                             : "free some space, or set BATON_HOME on a larger "
                               "disk (baton ls --all: old tasks' output)"});
  }
}

// Read-only, as every check here: a batond that is not running is not
// started (the first task starts it), and said so.
// Returns whether batond runs and answers.
bool CheckDaemon(const Context& ctx, std::vector<Finding>& out) {
  auto client = ctx.Connect(/*autostart=*/false);
  if (!client && client.error().code == ErrorCode::kUnavailable) {
    out.push_back({Level::kOk, "batond",
                   "not running: the first task starts it (baton run, "
                   "baton delegate, or an MCP client's), or baton daemon "
                   "start",
                   ""});
    return false;
  }
  if (!client) {
    out.push_back({Level::kError, "batond",
                   "cannot be reached: " + client.error().message,
                   "see the state folder's batond.log; fix what it says"});
    return false;
  }
  auto status = client->Call(DaemonStatusRequest{});
  if (!status) {
    out.push_back({Level::kError, "batond",
                   "does not answer its status: " + status.error().message,
                   "baton daemon stop, then run this again"});
    return false;
  }
  if (status->protocol != kProtocolVersion) {
    out.push_back(
        {Level::kError, "batond",
         fmt::format("speaks protocol {}, this baton {} (pid {})",
                     status->protocol, kProtocolVersion, status->daemon_pid),
         "baton daemon upgrade (tasks keep running)"});
    return false;
  }
  out.push_back(
      {Level::kOk, "batond",
       fmt::format("running (pid {}, protocol {}; baton {}), {} live tasks, "
                   "supervisor {}",
                   status->daemon_pid, status->protocol, kBatonVersion,
                   status->live_tasks,
                   status->supervisor_pid
                       ? fmt::format("pid {}", status->supervisor_pid)
                       : std::string("not connected")),
       ""});
  return true;
}

// The first line of `program --version`, bounded to 10 s.
std::string VersionOf(const std::string& program) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return "";
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  auto pid = SpawnChild({.program = program,
                         .argv = {program, "--version"},
                         .env = ProcessEnvironment(),
                         .cwd = CurrentDir(),
                         .stdout_fd = write_end.get()});
  if (!pid)
    return "";
  write_end.reset();
  std::string output;
  char buf[1024];
  pollfd pfd{read_end.get(), POLLIN, 0};
  while (output.size() < 4096 && ::poll(&pfd, 1, 10'000) > 0) {
    ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n <= 0)
      break;
    output.append(buf, static_cast<size_t>(n));
  }
  ::kill(-*pid, SIGKILL);
  int status;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  return output.substr(0, output.find('\n'));
}

struct AgentCli {
  const char* name;
  const char* install;      // How to get it.
  const char* key_env;      // An API key that logs it in.
  const char* credentials;  // Its login under HOME.
};

void CheckAgents(std::vector<Finding>& out) {
  static const AgentCli kAgents[] = {
      {"claude", "npm install -g @anthropic-ai/claude-code",
       "ANTHROPIC_API_KEY", ".claude/.credentials.json"},
      {"codex", "npm install -g @openai/codex", "OPENAI_API_KEY",
       ".codex/auth.json"},
      {"gemini", "npm install -g @google/gemini-cli", "GEMINI_API_KEY",
       ".gemini/oauth_creds.json"},
  };
  int found = 0;
  for (const AgentCli& agent : kAgents) {
    auto path = ResolveProgram(agent.name, ProcessEnvironment(), CurrentDir());
    if (!path)
      continue;
    ++found;
    std::string version = VersionOf(*path);
    std::string what =
        fmt::format("{} ({})", version.empty() ? "?" : version, *path);
    const char* key = std::getenv(agent.key_env);
    bool logged_in = (key && *key) || Exists(Home() + "/" + agent.credentials);
    if (logged_in) {
      out.push_back({Level::kOk, agent.name, what + ", logged in", ""});
    } else {
      out.push_back({Level::kWarning, agent.name,
                     what + ", no login seen (" + agent.key_env + " or ~/" +
                         agent.credentials + ")",
                     fmt::format("run {} once to log in, or set {}", agent.name,
                                 agent.key_env)});
    }
  }
  if (found == 0) {
    out.push_back({Level::kWarning, "agent CLIs",
                   "none of claude, codex, gemini is on PATH: baton delegate "
                   "has no agent to run (shell tasks work)",
                   "install one, e.g. npm install -g "
                   "@anthropic-ai/claude-code"});
  }
}

void CheckMcpClients(std::vector<Finding>& out) {
  std::string home = Home();
  if (home.empty())
    return;
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::string config = xdg && *xdg ? xdg : home + "/.config";
  const char* codex_home = std::getenv("CODEX_HOME");
  struct Client {
    const char* name;
    std::string path;
    const char* container;  // "" for Codex's TOML.
  };
  const Client clients[] = {
      {"claude", home + "/.claude.json", "mcpServers"},
      {"codex",
       (codex_home && *codex_home ? codex_home : home + "/.codex") +
           std::string("/config.toml"),
       ""},
      {"gemini", home + "/.gemini/settings.json", "mcpServers"},
      {"cursor", home + "/.cursor/mcp.json", "mcpServers"},
      {"vscode", config + "/Code/User/mcp.json", "servers"},
  };
  auto entry = OurMcpEntry();
  if (!entry)
    return;  // The state folder's check says why.
  const McpEntry& ours = *entry;
  std::vector<std::string> absent;
  for (const Client& client : clients) {
    if (!Exists(client.path)) {
      absent.push_back(client.name);  // Not set up for this user.
      continue;
    }
    auto edit = *client.container
                    ? EditJsonConfig(client.path, client.container, ours)
                    : EditCodexConfig(client.path, ours);
    std::string check = fmt::format("MCP in {}", client.name);
    std::string install = fmt::format("baton mcp install {}", client.name);
    if (!edit) {
      out.push_back({Level::kWarning, check, edit.error().message, ""});
    } else if (!edit->changed) {
      out.push_back(
          {Level::kOk, check, "baton is registered in " + client.path, ""});
    } else if (edit->summary.starts_with("replaced")) {
      out.push_back({Level::kWarning, check,
                     "baton in " + client.path + " starts another binary",
                     install});
    } else {
      out.push_back({Level::kWarning, check,
                     "baton is not registered in " + client.path, install});
    }
  }
  // The clients `baton mcp install` knows, each said once: the ones above,
  // and those without a config file here.
  if (!absent.empty()) {
    out.push_back({Level::kOk, "MCP clients",
                   fmt::format("no config file of {} here (baton mcp install "
                               "CLIENT registers baton in one)",
                               fmt::join(absent, ", ")),
                   ""});
  }
}

// "memory by cgroup v1 (/sys/fs/cgroup/memory/x), cpus by nothing, ...":
// the words of the supervisor's own log line (LimitHolder::Describe).
std::string MechanismsText(const std::vector<LimitMechanism>& found) {
  std::vector<std::string> parts;
  for (const LimitMechanism& m : found) {
    if (m.how.empty()) {
      parts.push_back(m.limit + " by nothing");
    } else if (m.dir.empty()) {
      parts.push_back(fmt::format("{} by {}", m.limit, m.how));
    } else {
      parts.push_back(fmt::format("{} by {} ({})", m.limit, m.how, m.dir));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What the running supervisor found at its start: the last "limits: "
// line of its log, "" when there is none (an older supervisor, a log
// removed). Read, never written.
std::string RunningSupervisorLimits(const StatePaths& paths) {
  auto log = ReadFile(paths.home + "/supervisor.log");
  if (!log)
    return "";
  constexpr std::string_view kMark = "limits: memory by ";
  size_t at = log->rfind(kMark);
  if (at == std::string::npos)
    return "";
  at += kMark.size() - std::string_view("memory by ").size();
  return log->substr(at, log->find('\n', at) - at);
}

// Which limits hold here, and how (doc/limits.md, "What holds them"): what
// the running supervisor found, from its log; else what one started from
// this shell would find, judged from the cgroups' permissions without
// touching them.
void CheckLimits(const StatePaths* paths, bool daemon_running,
                 std::vector<Finding>& out) {
  const char* forced = std::getenv("BATON_LIMITS");
  std::vector<LimitMechanism> forecast = ForecastLimits(forced ? forced : "");
  std::string described;
  std::string whose;
  if (daemon_running && paths)
    described = RunningSupervisorLimits(*paths);
  if (!described.empty()) {
    whose = "the running supervisor holds ";
  } else {
    described = MechanismsText(forecast);
    whose = forced && std::string_view(forced) == "rlimit"
                ? "a supervisor started here (BATON_LIMITS=rlimit) would hold "
                : "a supervisor started here would hold ";
  }
  std::vector<std::string> unheld;
  for (std::string_view limit : {"memory", "cpus", "pids"}) {
    if (described.find(fmt::format("{} by nothing", limit)) !=
        std::string::npos)
      unheld.emplace_back(limit);
  }
  std::string message = whose + described;
  if (described.find("memory by rlimit") != std::string::npos) {
    message +=
        "; memory by rlimit is each process's address space (an allocation "
        "past it fails, nothing is killed)";
  }
  if (unheld.empty()) {
    out.push_back({Level::kOk, "limits", message, ""});
    return;
  }
  std::string fix =
      forced && std::string_view(forced) == "rlimit"
          ? "unset BATON_LIMITS (rlimit makes the supervisor use no cgroup), "
            "then baton daemon stop and start again"
          : "run batond under systemd --user (baton daemon "
            "install-service), whose user manager delegates memory, cpu and "
            "pids (cgroup v2), or as a user who may write the cgroup v1 "
            "hierarchies";
  out.push_back(
      {Level::kWarning, "limits",
       fmt::format("{}; {} not held: a task given them runs without them "
                   "(its status says so)",
                   message, fmt::join(unheld, " and ")),
       std::move(fix)});
}

// Whether a sandboxed task can start here (doc/sandbox.md): bubblewrap
// found as batond finds it ($BATON_BWRAP, else PATH), and a tiny sandbox
// with the namespaces every profile needs (daemon/sandbox_probe.cc asks
// the same).
void CheckSandbox(std::vector<Finding>& out) {
  const char* named = std::getenv("BATON_BWRAP");
  std::string bwrap;
  if (named && *named) {
    bwrap = IsExecutableFile(named) ? named : "";
  } else if (auto found = ResolveProgram("bwrap", ProcessEnvironment(), "/")) {
    bwrap = *found;
  }
  std::string refused =
      "a task with --sandbox (a required profile) is refused at its start";
  if (bwrap.empty()) {
    out.push_back({Level::kWarning, "sandbox",
                   "bubblewrap (bwrap) is not installed: " + refused,
                   "apt install bubblewrap"});
    return;
  }
  auto ran =
      RunToEnd(bwrap,
               {bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-net",
                "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev",
                "--proc", "/proc", "--tmpfs", "/tmp", "--", "true"},
               {"PATH=/usr/bin:/bin"}, "/", std::chrono::seconds(5));
  if (!ran || !ran->ok()) {
    std::string why =
        ran ? fmt::format("exit code {}: {}", ran->exit_code, ran->Said())
            : ran.error().message;
    out.push_back({Level::kWarning, "sandbox",
                   fmt::format("{} cannot make its namespaces ({}): {}", bwrap,
                               why, refused),
                   "allow user namespaces (sysctl "
                   "kernel.unprivileged_userns_clone=1; in a container, its "
                   "seccomp and AppArmor profiles)"});
    return;
  }
  out.push_back({Level::kOk, "sandbox",
                 fmt::format("{} makes sandboxes here (pid, ipc and network "
                             "namespaces, read-only root)",
                             bwrap),
                 ""});
}

int DoDoctor(const Context& ctx) {
  std::vector<Finding> findings;
  auto paths = StatePaths::FromEnvironment("");
  if (!paths) {
    findings.push_back({Level::kError, "state folder", paths.error().message,
                        "set BATON_HOME, or HOME and XDG_STATE_HOME"});
  } else {
    CheckStateFolder(*paths, findings);
  }
  bool state_ok = true;
  for (const Finding& f : findings)
    state_ok = state_ok && f.level != Level::kError;
  bool running = false;
  if (state_ok) {
    running = CheckDaemon(ctx, findings);
  } else {
    findings.push_back({Level::kError, "batond",
                        "not checked: it cannot start with the state folder "
                        "above",
                        "fix the state folder first"});
  }
  CheckAgents(findings);
  CheckMcpClients(findings);
  CheckLimits(paths ? &*paths : nullptr, running, findings);
  CheckSandbox(findings);
  bool error = false;
  for (const Finding& f : findings)
    error = error || f.level == Level::kError;
  if (ctx.json) {
    nlohmann::json doc = nlohmann::json::array();
    for (const Finding& f : findings) {
      doc.push_back({{"check", f.check},
                     {"level", LevelName(f.level)},
                     {"message", f.message},
                     {"fix", f.fix}});
    }
    PrintJsonLine(
        doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    for (const Finding& f : findings) {
      std::printf("%-8s %s: %s\n", LevelName(f.level), f.check.c_str(),
                  f.message.c_str());
      if (!f.fix.empty())
        std::printf("         fix: %s\n", f.fix.c_str());
    }
  }
  return error ? kExitFailed : kExitOk;
}

}  // namespace

void DefineDoctor(CLI::App& command, const Context& ctx, Action& action) {
  command.callback(
      [&ctx, &action] { action = [&ctx] { return DoDoctor(ctx); }; });
}

}  // namespace baton
