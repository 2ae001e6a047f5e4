// `baton serve`: MCP over HTTP (doc/serve.md). baton_main starts it when
// `serve` is the first argument; this entry puts it in --help, and explains
// itself when reached behind global flags.
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {

void DefineServe(CLI::App& command, const Context&, Action& action) {
  command.allow_extras();
  command.callback([&action] {
    action = [] {
      std::fprintf(stderr,
                   "baton: error: run 'baton serve [--listen HOST:PORT] "
                   "[--print-token]' with serve first (BATON_HOME picks "
                   "the state; see baton serve --help)\n");
      return kExitUsage;
    };
  });
}

}  // namespace baton
