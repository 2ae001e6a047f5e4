// `baton mcp`: the MCP server on stdio (doc/mcp.md). baton_main starts it
// when `mcp` is the first argument; this entry puts it in --help, and
// explains itself when reached behind global flags.
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {

void DefineMcp(CLI::App& command, const Context&, Action& action) {
  command.callback([&action] {
    action = [] {
      std::fprintf(stderr,
                   "baton: error: run 'baton mcp' with no other arguments "
                   "(BATON_SESSION names its session, BATON_HOME its "
                   "state); register it: claude mcp add baton -- baton "
                   "mcp\n");
      return kExitUsage;
    };
  });
}

}  // namespace baton
