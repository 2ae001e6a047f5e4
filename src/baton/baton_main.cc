// The one binary: the CLI, batond ("baton daemon run"), the supervisor
// ("baton internal-supervisor"), the MCP server on stdio ("baton mcp") and
// over HTTP ("baton serve"). Kept outside the libraries (as ninja.cc).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifdef BATON_SANITIZER_LOG_DIR
#include <sanitizer/common_interface_defs.h>
#endif

#include "baton/cli/cli.h"
#include "baton/daemon/daemon.h"
#include "baton/daemon/malloc_tuning.h"
#include "baton/mcp/mcp_server.h"
#include "baton/serve/board_command.h"
#include "baton/serve/serve.h"
#include "baton/supervisor/supervisor.h"
#include "baton/util/detached_process.h"
#include "baton/util/duration.h"
#include "baton/util/log.h"

namespace {

// Flags of the two internal modes: --name value pairs only.
const char* Flag(int argc, char** argv, const char* name) {
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0)
      return argv[i + 1];
  }
  return nullptr;
}

int DaemonMain(int argc, char** argv) {
  baton::ReexecWithMallocTunables(argv);
  auto paths = baton::StatePaths::FromEnvironment("");
  int ready_fd = -1;
  if (const char* fd = Flag(argc, argv, "--ready-fd"))
    ready_fd = std::atoi(fd);
  if (!paths) {
    baton::ReportStartFailure(ready_fd, paths.error().message);
    std::fprintf(stderr, "baton: error: %s\n", paths.error().message.c_str());
    return 1;
  }
  baton::DaemonOptions options;
  options.paths = *paths;
  options.ready_fd = ready_fd;
  const char* lease = Flag(argc, argv, "--lease");
  if (!lease)
    lease = std::getenv("BATON_LEASE");
  if (lease) {
    auto parsed = baton::ParseDuration(lease);
    if (!parsed) {
      std::string message = "BATON_LEASE: " + parsed.error().message;
      baton::ReportStartFailure(ready_fd, message);
      std::fprintf(stderr, "baton: error: %s\n", message.c_str());
      return 1;
    }
    options.lease = *parsed;
  }
  return baton::RunDaemon(options);
}

int SupervisorMain(int argc, char** argv) {
  const char* home = Flag(argc, argv, "--home");
  const char* runtime = Flag(argc, argv, "--runtime");
  const char* ready = Flag(argc, argv, "--ready-fd");
  if (!home || !runtime) {
    std::fprintf(stderr,
                 "baton: internal-supervisor needs --home and "
                 "--runtime\n");
    return 2;
  }
  baton::StatePaths paths{home, runtime};
  return baton::RunSupervisor(paths, ready ? std::atoi(ready) : -1);
}

}  // namespace

int main(int argc, char** argv) {
#ifdef BATON_SANITIZER_LOG_DIR
  // A sanitizer build (cmake/sanitizers.cmake): batond and the supervisor
  // run detached with stderr on /dev/null, so every process of this binary
  // reports into the build's folder, where ctest's fixture looks.
  __sanitizer_set_report_path(BATON_SANITIZER_LOG_DIR "/baton");
#endif
  if (argc >= 2 && std::strcmp(argv[1], "internal-supervisor") == 0) {
    return SupervisorMain(argc, argv);
  }
  if (argc >= 3 && std::strcmp(argv[1], "daemon") == 0 &&
      std::strcmp(argv[2], "run") == 0) {
    return DaemonMain(argc, argv);
  }
  // `baton mcp` alone is the server; `baton mcp install ...` and the rest
  // are the CLI's (cli/verbs/mcp.cc).
  if (argc == 2 && std::strcmp(argv[1], "mcp") == 0)
    return baton::mcp::RunMcpServerFromEnvironment();
  if (argc >= 2 && std::strcmp(argv[1], "serve") == 0)
    return baton::serve::RunServeMain(argc - 2, argv + 2);
  if (argc >= 2 && std::strcmp(argv[1], "board") == 0)
    return baton::serve::RunBoardMain(argc - 2, argv + 2);
  return baton::RunCli(argc, argv);
}
