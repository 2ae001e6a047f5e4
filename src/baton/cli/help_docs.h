// What baton writes about itself from its command line's definitions
// (command_tree.h): the man page baton(1) and the completion scripts of
// bash, zsh and fish. The build writes them with `baton internal-docs DIR`
// and installs them; `baton completion SHELL` prints one script.
#ifndef BATON_CLI_HELP_DOCS_H_
#define BATON_CLI_HELP_DOCS_H_

#include <string>
#include <string_view>

#include "baton/cli/command_tree.h"
#include "baton/util/result.h"

namespace baton {

// baton(1) in roff (man macros): the global options, then one section per
// command and subcommand with its usage, options and arguments, then the
// environment, exit codes and files.
std::string ManPage(const CommandDoc& baton);

// The completion script of `shell` (bash, zsh or fish): verbs, subcommands
// and flags from `baton`, and task ids from `baton ls --quiet` where a
// command takes an id. An unknown shell is an error naming the three.
Result<std::string> CompletionScript(const CommandDoc& baton,
                                     std::string_view shell);

// Writes DIR/man1/baton.1 and DIR/completions/{baton.bash,_baton,baton.fish}
// (the build's `baton internal-docs DIR`); returns the exit code, with
// the error on stderr.
int WriteGeneratedDocs(const std::string& dir);

}  // namespace baton

#endif  // BATON_CLI_HELP_DOCS_H_
