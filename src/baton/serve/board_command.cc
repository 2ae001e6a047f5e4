#include "baton/serve/board_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "baton/serve/login_code.h"
#include "baton/serve/serve.h"
#include "baton/util/detached_process.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/program_path.h"
#include "baton/util/spawn_child.h"
#include "baton/util/state_paths.h"

namespace baton::serve {
namespace {

constexpr char kUsage[] =
    "usage: baton board [--listen HOST:PORT] [--no-open]\n"
    "  Prints the board's login URL, which works once, within 2 minutes,\n"
    "  and opens it in your browser (xdg-open, when there is a display).\n"
    "  Starts baton serve in the background when none runs for this state\n"
    "  folder (--listen: where; default 127.0.0.1:7420).\n";

constexpr auto kServeStartTimeout = std::chrono::seconds(30);

int Fail(const std::string& message) {
  std::fprintf(stderr, "baton board: error: %s\n", message.c_str());
  return 1;
}

// The board URL of the `baton serve` of this state folder, from its
// serve.json, when that process still runs.
std::optional<std::string> RunningBoard(const StatePaths& paths) {
  auto text = ReadFile(paths.home + "/serve.json");
  if (!text)
    return std::nullopt;
  auto parsed = ParseJson(*text);
  if (!parsed)
    return std::nullopt;
  std::string board = StringAt(parsed->value, "board");
  int64_t pid = IntAt(parsed->value, "pid");
  if (board.empty() || pid <= 0)
    return std::nullopt;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM)
    return std::nullopt;  // A file left by a serve that died.
  return board;
}

// Opens `url` with xdg-open through a page in the state folder that
// forwards to it, so that the token never shows in a process list (other
// users can read every process's arguments). False when there is no
// display or no xdg-open.
bool OpenInBrowser(const StatePaths& paths, const std::string& url) {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland))
    return false;
  std::vector<std::string> env = ProcessEnvironment();
  auto program = ResolveProgram("xdg-open", env, "/");
  if (!program)
    return false;
  std::string page = paths.home + "/board-login.html";
  std::string html = fmt::format(
      "<!doctype html><meta charset=\"utf-8\">"
      "<meta name=\"referrer\" content=\"no-referrer\">"
      "<meta http-equiv=\"refresh\" content=\"0;url={}\">"
      "<title>baton board</title>\n",
      url);
  if (!WriteFileAtomic(page, html))
    return false;
  ChildSpec spec;
  spec.program = *program;
  spec.argv = {"xdg-open", page};
  spec.env = std::move(env);
  spec.cwd = "/";
  // Not waited for: some browsers keep xdg-open until they exit.
  return SpawnChild(spec).has_value();
}

}  // namespace

int RunBoardMain(int argc, char** argv) {
  std::string listen;
  bool open = true;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--no-open") {
      open = false;
    } else if (arg == "--listen" && i + 1 < argc) {
      listen = argv[++i];
    } else if (arg.rfind("--listen=", 0) == 0) {
      listen = arg.substr(9);
    } else {
      std::fprintf(stderr,
                   "baton board: error: unknown argument '%s' (see baton "
                   "board --help)\n",
                   arg.c_str());
      return 2;
    }
  }
  if (!listen.empty()) {
    if (auto parsed = ParseListenAddress(listen); !parsed) {
      std::fprintf(stderr, "baton board: error: %s\n",
                   parsed.error().message.c_str());
      return 2;
    }
  }
  auto paths = StatePaths::FromEnvironment("");
  if (!paths)
    return Fail(paths.error().message);
  if (auto prepared = paths->Prepare(); !prepared)
    return Fail(prepared.error().message);
  auto board = RunningBoard(*paths);
  if (!board) {
    std::vector<std::string> command = {SelfExecutable(), "serve", "--ready-fd",
                                        "{ready_fd}"};
    if (!listen.empty())
      command.insert(command.end(), {"--listen", listen});
    if (auto started = StartDetached(command, kServeStartTimeout); !started) {
      return Fail(fmt::format("cannot start baton serve: {} (see {}/serve.log)",
                              started.error().message, paths->home));
    }
    board = RunningBoard(*paths);
    if (!board)
      return Fail("baton serve started but wrote no serve.json");
    std::printf("baton board: started baton serve in the background\n");
  }
  auto code = MintLoginCode(paths->home);
  if (!code)
    return Fail("cannot make a login code: " + code.error().message);
  std::string url = *board + "?login=" + *code;
  std::printf("baton board: %s (works once, within 2 minutes)\n", url.c_str());
  if (open && OpenInBrowser(*paths, url))
    std::printf("baton board: opened in your browser\n");
  else if (open)
    std::printf("baton board: open the URL above in your browser\n");
  return 0;
}

}  // namespace baton::serve
