// The verbs of the `baton` command line, one file each in verbs/, and the
// one table that lists them (verbs.cc), in the order --help shows them.
#ifndef BATON_CLI_VERBS_H_
#define BATON_CLI_VERBS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string_view>
#include <vector>

#include "baton/cli/context.h"

namespace baton {

// What runs once the command line is parsed; returns the exit code.
using Action = std::function<int()>;

struct Verb {
  std::string_view name;
  std::string_view description;
  std::string_view group;  // The heading `baton --help` lists it under.
  // Adds the verb's options to `command`, and sets `action` when the verb
  // is chosen. Called only for the verb in use (and for --help): building
  // every verb's parser was 70% of the instructions of a `baton run`
  // (callgrind), and a CLI process starts once per task.
  void (*define)(CLI::App& command, const Context& ctx, Action& action);
};

// Checks on a number flag's text, before CLI11 converts it (its own
// conversion clamps an overflow to the type's limit): a whole number from
// `min` to `max`, a decimal number from `min` to `max` (never NaN nor
// infinite), or a decimal number above 0 and at most `max`. The error names
// the text as typed.
CLI::Validator WholeNumber(int64_t min, int64_t max);
CLI::Validator DecimalNumber(double min, double max);
CLI::Validator PositiveAmount(double max);

// Every verb, in --help's order.
const std::vector<Verb>& Verbs();

// Defines the whole command line on `app`: the global flags (into `ctx`)
// and every verb, or only `only` when it is not null. RunCli parses with
// it; the man page and the completion scripts are written from it
// (command_tree.h), so they say what the parser accepts.
void DefineCommandLine(CLI::App& app, Context& ctx, Action& action,
                       const Verb* only);

void DefineRun(CLI::App& command, const Context& ctx, Action& action);
void DefineList(CLI::App& command, const Context& ctx, Action& action);
void DefineStatus(CLI::App& command, const Context& ctx, Action& action);
// `output --follow` from the start (verbs/output.cc): `run --wait` on a
// terminal streams the output as it comes.
Status StreamOutput(const Context& ctx, DaemonClient& client,
                    const std::string& id);
void DefineRerun(CLI::App& command, const Context& ctx, Action& action);
void DefineEdit(CLI::App& command, const Context& ctx, Action& action);
void DefineRemove(CLI::App& command, const Context& ctx, Action& action);
void DefineClear(CLI::App& command, const Context& ctx, Action& action);
void DefineOutput(CLI::App& command, const Context& ctx, Action& action);
void DefineWait(CLI::App& command, const Context& ctx, Action& action);
void DefineKill(CLI::App& command, const Context& ctx, Action& action);
void DefineDelegate(CLI::App& command, const Context& ctx, Action& action);
void DefineSend(CLI::App& command, const Context& ctx, Action& action);
void DefineAnswer(CLI::App& command, const Context& ctx, Action& action);
void DefineEvents(CLI::App& command, const Context& ctx, Action& action);
void DefineAgents(CLI::App& command, const Context& ctx, Action& action);
void DefineAttach(CLI::App& command, const Context& ctx, Action& action);
void DefineNotices(CLI::App& command, const Context& ctx, Action& action);
void DefineQueue(CLI::App& command, const Context& ctx, Action& action);
void DefineBudget(CLI::App& command, const Context& ctx, Action& action);
void DefineQuestions(CLI::App& command, const Context& ctx, Action& action);
void DefineAudit(CLI::App& command, const Context& ctx, Action& action);
void DefineWorktree(CLI::App& command, const Context& ctx, Action& action);
void DefineConflicts(CLI::App& command, const Context& ctx, Action& action);
void DefineLand(CLI::App& command, const Context& ctx, Action& action);
void DefineLands(CLI::App& command, const Context& ctx, Action& action);
void DefineDaemon(CLI::App& command, const Context& ctx, Action& action);
// `daemon install-service`, a subcommand of `daemon`'s
// (verbs/daemon_service.cc).
void DefineDaemonService(CLI::App& daemon_command, const Context& ctx,
                         Action& action);
void DefineMcp(CLI::App& command, const Context& ctx, Action& action);
void DefineServe(CLI::App& command, const Context& ctx, Action& action);
void DefineBoard(CLI::App& command, const Context& ctx, Action& action);
void DefineDoctor(CLI::App& command, const Context& ctx, Action& action);
void DefineCompletion(CLI::App& command, const Context& ctx, Action& action);

}  // namespace baton

#endif  // BATON_CLI_VERBS_H_
