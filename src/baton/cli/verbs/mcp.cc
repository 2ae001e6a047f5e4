// `baton mcp`: the MCP server on stdio (doc/mcp.md), which baton_main
// starts when `mcp` is the only argument; and `baton mcp install|uninstall
// CLIENT`, which register it in an MCP client's own config
// (doc/install.md, "Wiring baton into an agent"): Claude Code through its
// `claude mcp add|remove` when that is on PATH, else by editing its file,
// as for Codex, Gemini CLI, Cursor and VS Code (cli/mcp_config.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "baton/cli/mcp_config.h"
#include "baton/cli/verbs.h"
#include "baton/util/detached_process.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/program_path.h"
#include "baton/util/spawn_child.h"

namespace baton {
namespace {

struct McpInstallArgs {
  std::string client;
  std::string scope = "user";
  bool dry_run = false;
};

// Where a client keeps its MCP servers, for a scope.
struct ClientConfig {
  std::string title;      // "Claude Code"
  std::string path;       // The file.
  std::string container;  // "mcpServers"; VS Code: "servers"; Codex: "".
  bool with_type = false;
};

// The build tree (a folder with CMakeCache.txt) that holds `binary`, or
// "": a client pinned to a build's binary loses baton when the tree is
// cleaned or moved.
std::string BuildTreeOf(const std::string& binary) {
  std::filesystem::path dir = std::filesystem::path(binary).parent_path();
  for (; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    std::error_code ignored;
    if (std::filesystem::exists(dir / "CMakeCache.txt", ignored))
      return dir.string();
  }
  return "";
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

Result<ClientConfig> ConfigOf(const std::string& client, bool user) {
  const char* home_env = std::getenv("HOME");
  if (user && (!home_env || !*home_env)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "HOME is not set: the user scope's config lives "
                     "under it; set HOME, or use --scope project");
  }
  std::string home = home_env ? home_env : "";
  std::string here = CurrentDir();
  if (client == "claude") {
    // Claude Code keeps its user servers in ~/.claude.json (or under
    // CLAUDE_CONFIG_DIR), a project's in its .mcp.json.
    return ClientConfig{"Claude Code",
                        user
                            ? EnvOr("CLAUDE_CONFIG_DIR", home) + "/.claude.json"
                            : here + "/.mcp.json",
                        "mcpServers", true};
  }
  if (client == "codex") {
    return ClientConfig{
        "Codex",
        user ? EnvOr("CODEX_HOME", home + "/.codex") + "/config.toml"
             : here + "/.codex/config.toml",
        "", false};
  }
  if (client == "gemini") {
    return ClientConfig{"Gemini CLI",
                        (user ? home : here) + "/.gemini/settings.json",
                        "mcpServers", false};
  }
  if (client == "cursor") {
    return ClientConfig{"Cursor", (user ? home : here) + "/.cursor/mcp.json",
                        "mcpServers", false};
  }
  if (client == "vscode") {
    return ClientConfig{"VS Code",
                        user ? EnvOr("XDG_CONFIG_HOME", home + "/.config") +
                                   "/Code/User/mcp.json"
                             : here + "/.vscode/mcp.json",
                        "servers", true};
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown MCP client '" + client +
                       "'; baton registers itself in claude, codex, gemini, "
                       "cursor and vscode");
}

// Runs `argv` (a found program) here with this environment, its output
// captured; bounded to 60 s. Returns the output, or an error with it.
Result<std::string> RunCaptured(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return std::unexpected(ErrnoError("pipe", errno));
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  auto pid = SpawnChild({.program = argv[0],
                         .argv = argv,
                         .env = ProcessEnvironment(),
                         .cwd = CurrentDir(),
                         .stdout_fd = write_end.get(),
                         .stderr_fd = write_end.get()});
  if (!pid)
    return std::unexpected(pid.error());
  write_end.reset();
  std::string output;
  char buf[4096];
  for (;;) {
    pollfd pfd{read_end.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 60'000) <= 0) {
      ::kill(-*pid, SIGKILL);
      output += "\n(stopped after 60 s)";
      break;
    }
    ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n <= 0)
      break;
    output.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError(ErrorCode::kInternal,
                     "'" + JoinWords(argv) + "' failed: " + output);
  }
  return output;
}

// Claude Code's own `claude mcp add|remove`, when it is on PATH: it knows
// its file best. The edit computed on its file says whether there is
// anything to do, and the backup is taken before it runs.
Result<std::string> ApplyThroughClaude(const std::string& claude,
                                       const ConfigEdit& edit, bool user,
                                       const std::optional<McpEntry>& entry,
                                       bool was_there) {
  std::string scope = user ? "user" : "project";
  std::string backup;
  if (edit.existed) {
    auto old = ReadFile(edit.path);
    if (!old)
      return std::unexpected(old.error());
    backup = edit.path + ".baton.bak";
    if (auto saved = WriteFileAtomic(backup, *old); !saved)
      return std::unexpected(saved.error());
  }
  if (was_there) {
    auto removed = RunCaptured(
        {claude, "mcp", "remove", "--scope", scope, std::string(kServerName)});
    if (!removed)
      return std::unexpected(removed.error());
  }
  if (entry) {
    std::vector<std::string> add = {claude,    "mcp", "add",
                                    "--scope", scope, std::string(kServerName)};
    // After the name: -e takes every word up to the next option.
    for (const auto& [name, value] : entry->env) {
      add.push_back("-e");
      add.push_back(name + "=" + value);
    }
    add.push_back("--");
    add.push_back(entry->command);
    add.insert(add.end(), entry->args.begin(), entry->args.end());
    auto added = RunCaptured(add);
    if (!added)
      return std::unexpected(added.error());
  }
  return backup;
}

int DoMcpInstall(const Context& ctx, const McpInstallArgs& args, bool install) {
  if (args.scope != "user" && args.scope != "project") {
    return ReportError(
        ctx, {ErrorCode::kInvalidArgument,
              "--scope is user or project, not '" + args.scope + "'"});
  }
  bool user = args.scope == "user";
  auto config = ConfigOf(args.client, user);
  if (!config)
    return ReportError(ctx, config.error());
  std::optional<McpEntry> entry;
  std::string build_tree;
  if (install) {
    auto ours = OurMcpEntry();
    if (!ours)
      return ReportError(ctx, ours.error());
    entry = std::move(*ours);
    entry->with_type = config->with_type;
    build_tree = BuildTreeOf(entry->command);
  }
  auto edit = config->container.empty()
                  ? EditCodexConfig(config->path, entry)
                  : EditJsonConfig(config->path, config->container, entry);
  if (!edit)
    return ReportError(ctx, edit.error());
  // Claude Code through its CLI when it is there.
  std::string claude;
  if (args.client == "claude") {
    auto found = ResolveProgram("claude", ProcessEnvironment(), CurrentDir());
    if (found)
      claude = *found;
  }
  std::string via =
      claude.empty() ? "" : fmt::format(" (through {} mcp)", claude);
  std::string backup;
  if (edit->changed && !args.dry_run) {
    bool was_there = install ? edit->summary.starts_with("replaced") : true;
    auto applied = claude.empty() ? ApplyConfigEdit(*edit)
                                  : ApplyThroughClaude(claude, *edit, user,
                                                       entry, was_there);
    if (!applied)
      return ReportError(ctx, applied.error());
    backup = *applied;
  }
  if (ctx.json) {
    nlohmann::json doc = {{"client", args.client},
                          {"scope", args.scope},
                          {"file", config->path},
                          {"changed", edit->changed && !args.dry_run},
                          {"would_change", edit->changed},
                          {"summary", edit->summary},
                          {"backup", backup},
                          {"through_cli", !claude.empty()},
                          {"build_tree", build_tree}};
    PrintJsonLine(
        doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return kExitOk;
  }
  if (!edit->changed) {
    std::printf("%s: %s\n", config->title.c_str(), edit->summary.c_str());
  } else if (args.dry_run) {
    std::printf("%s: would have %s%s (--dry-run: nothing written)\n",
                config->title.c_str(), edit->summary.c_str(), via.c_str());
    if (claude.empty())
      std::printf("---- %s would read:\n%s", config->path.c_str(),
                  edit->text.c_str());
  } else {
    std::printf("%s: %s%s\n", config->title.c_str(), edit->summary.c_str(),
                via.c_str());
    if (!backup.empty())
      std::printf("  the file as it was: %s\n", backup.c_str());
    if (install)
      std::printf("  restart %s to load it\n", config->title.c_str());
    if (install && entry->env.contains("BATON_HOME"))
      std::printf("  with BATON_HOME=%s, as this shell has it\n",
                  entry->env["BATON_HOME"].c_str());
    if (install && args.client == "codex" && !user)
      std::printf(
          "  Codex reads a project's config once the project is "
          "trusted\n");
  }
  if (!build_tree.empty()) {
    std::printf(
        "  note: %s is a build's binary (in %s): the client starts it as "
        "long as that build is there; install baton (doc/install.md) for a "
        "path that stays\n",
        entry->command.c_str(), build_tree.c_str());
  }
  return kExitOk;
}

void DefineMcpChange(CLI::App& command, const Context& ctx, Action& action,
                     bool install) {
  auto args = std::make_shared<McpInstallArgs>();
  command
      .add_option("client", args->client,
                  "claude, codex, gemini, cursor or vscode")
      ->required();
  command.add_option("--scope", args->scope,
                     "user (default: every project) or project (this "
                     "folder's config)");
  command.add_flag("--dry-run", args->dry_run,
                   "Show the change without writing it");
  command.callback([&ctx, &action, args, install] {
    action = [&ctx, args, install] {
      return DoMcpInstall(ctx, *args, install);
    };
  });
}

}  // namespace

void DefineMcp(CLI::App& command, const Context& ctx, Action& action) {
  DefineMcpChange(*command.add_subcommand(
                      "install", "Register baton in an MCP client's config"),
                  ctx, action, /*install=*/true);
  DefineMcpChange(*command.add_subcommand(
                      "uninstall", "Remove baton from an MCP client's config"),
                  ctx, action, /*install=*/false);
  command.callback([&action] {
    if (action)
      return;  // A subcommand chose.
    action = [] {
      std::fprintf(stderr,
                   "baton: error: run 'baton mcp' with no other arguments "
                   "(BATON_SESSION names its session, BATON_HOME its "
                   "state); register it: baton mcp install claude\n");
      return kExitUsage;
    };
  });
}

}  // namespace baton
