// The command line as data: each command's options, arguments and
// subcommands, read from the same CLI11 definitions that parse it and
// print --help, so that the man page and the shell completion scripts
// written from it (help_docs.h) never drift from what baton accepts.
#ifndef BATON_CLI_COMMAND_TREE_H_
#define BATON_CLI_COMMAND_TREE_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace baton {

struct OptionDoc {
  std::vector<std::string> names;  // "--all", "-a": long names first.
  std::string value;  // What it takes, as --help names it ("TEXT"); empty
                      // for a flag.
  std::string description;
};

struct ArgumentDoc {
  std::string name;  // "id", "ids", "command".
  std::string description;
  bool required = false;
  bool many = false;  // Takes any number of words.
  // A task id (the argument is named id or ids): completed from `baton ls`.
  bool task_id = false;
};

struct CommandDoc {
  std::string name;  // "stop"; "baton" at the top.
  std::string path;  // "daemon stop"; empty at the top.
  std::string description;
  std::vector<OptionDoc> options;  // Without --help.
  std::vector<ArgumentDoc> arguments;
  std::vector<CommandDoc> subcommands;
};

// Reads `app` (the command line as RunCli defines it) into data.
CommandDoc DescribeCommandLine(const CLI::App& app);

// The whole command line as --help shows it: the global flags and every
// verb, read into data (what `baton completion` and the man page use).
CommandDoc DescribeBaton();

// "baton run [--label TEXT] ... command..." for one command.
std::string UsageLine(const CommandDoc& command);

}  // namespace baton

#endif  // BATON_CLI_COMMAND_TREE_H_
