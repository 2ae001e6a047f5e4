#include "baton/cli/cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "baton/cli/help_docs.h"
#include "baton/cli/verbs.h"
#include "baton/util/version.h"

namespace baton {
namespace {

// The verb: the first argument that is not an option (or an option's
// value). nullptr when there is none; `unknown` names a word that is no
// verb (CLI11 would only say "A subcommand is required").
const Verb* ChooseVerb(int argc, char** argv, std::string* unknown) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--session") {
      ++i;
      continue;
    }
    if (arg.starts_with("-"))
      continue;
    for (const Verb& verb : Verbs()) {
      if (verb.name == arg)
        return &verb;
    }
    *unknown = arg;
    return nullptr;
  }
  return nullptr;
}

}  // namespace

void DefineCommandLine(CLI::App& app, Context& ctx, Action& action,
                       const Verb* only) {
  app.name("baton");
  app.description("baton: background tasks for coding agents and people");
  app.require_subcommand(1);
  app.fallthrough();
  app.add_flag("--json", ctx.json, "One JSON document per line on stdout");
  app.add_option("--session", ctx.session,
                 "Owner session (default: $BATON_SESSION; none = unowned)");
  app.set_version_flag("--version", std::string("baton ") + kBatonVersion);
  for (const Verb& verb : Verbs()) {
    if (!only || only == &verb) {
      verb.define(*app.add_subcommand(std::string(verb.name),
                                      std::string(verb.description)),
                  ctx, action);
    }
  }
}

int RunCli(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "internal-docs")
    return WriteGeneratedDocs(argv[2]);
  std::string unknown;
  const Verb* chosen = ChooseVerb(argc, argv, &unknown);
  if (!unknown.empty()) {
    std::fprintf(stderr,
                 "baton: error: unknown command '%s'; see 'baton --help'\n",
                 unknown.c_str());
    return kExitUsage;
  }
  // `baton --version` builds no parser at all: it is what scripts and
  // package checks run to see that baton is there.
  if (!chosen && argc == 2 && std::string_view(argv[1]) == "--version") {
    std::printf("baton %s\n", kBatonVersion);
    return 0;
  }
  CLI::App app;
  Context ctx;
  const char* env_session = std::getenv("BATON_SESSION");
  ctx.session = env_session ? env_session : "";
  Action action;
  // Only the chosen verb's parser is built (all of them for --help).
  DefineCommandLine(app, ctx, action, chosen);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "baton: error: %s; see 'baton --help'\n", e.what());
    return kExitUsage;
  }
  if (!action)
    return kExitUsage;
  return action();
}

}  // namespace baton
