// The `baton` command line: the verbs of doc/cli.md for people and
// scripts, each a client call to batond. Uses only ipc and util.
#ifndef BATON_CLI_CLI_H_
#define BATON_CLI_CLI_H_

namespace baton {

// Exit codes (doc/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;     // The operation or a task failed.
inline constexpr int kExitUsage = 2;      // Bad usage, or batond unreachable.
inline constexpr int kExitTimeout = 124;  // `wait` timed out first.

// Runs one CLI invocation; returns the process exit code.
int RunCli(int argc, char** argv);

}  // namespace baton

#endif  // BATON_CLI_CLI_H_
