// `baton board`: the board's login URL, opened in the browser (doc/board.md,
// "`baton board`"). baton_main runs it (serve/board_command.cc) when `board`
// is the first argument; this entry puts it and its options in --help, the
// man page and the completions, and explains itself when reached behind
// global flags.
#include <cstdio>
#include <memory>

#include "baton/cli/verbs.h"

namespace baton {

void DefineBoard(CLI::App& command, const Context&, Action& action) {
  struct Options {
    std::string listen;
    bool no_open = false;
  };
  auto options = std::make_shared<Options>();
  command
      .add_option("--listen", options->listen,
                  "Where the baton serve it starts listens, when none runs "
                  "(default 127.0.0.1:7420)")
      ->type_name("HOST:PORT");
  command.add_flag("--no-open", options->no_open,
                   "Print the login URL (it works once, within 2 minutes) "
                   "without opening a browser");
  command.callback([&action, options] {
    action = [] {
      std::fprintf(stderr,
                   "baton: error: run 'baton board [--listen HOST:PORT] "
                   "[--no-open]' with board first (BATON_HOME picks the "
                   "state; see baton board --help)\n");
      return kExitUsage;
    };
  });
}

}  // namespace baton
