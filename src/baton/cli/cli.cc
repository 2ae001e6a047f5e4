#include "baton/cli/cli.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

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

// How many single-character edits turn `a` into `b`.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown command 'sttaus'; did you mean 'status'? ...": the verb two
// edits away or closer, if one is.
std::string UnknownCommand(std::string_view word) {
  const Verb* closest = nullptr;
  size_t best = 3;
  for (const Verb& verb : Verbs()) {
    size_t distance = EditDistance(word, verb.name);
    if (distance < best) {
      best = distance;
      closest = &verb;
    }
  }
  std::string text = "unknown command '" + std::string(word) + "'";
  if (closest)
    text += "; did you mean '" + std::string(closest->name) + "'?";
  return text + " ('baton --help' lists the commands)";
}

// The deepest subcommand the parse reached under `app` (`queue add`, not
// `queue`), or `app` itself.
const CLI::App* Deepest(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    auto parsed = at->get_subcommands();
    if (parsed.empty())
      return at;
    at = parsed.front();
  }
}

// The words an ExtrasError names, in the order they were typed (CLI11
// lists them last first); only the unknown options when there are some
// (what followed one was taken as something else).
std::vector<std::string> ExtrasAsTyped(std::string_view message, int argc,
                                       char** argv) {
  size_t colon = message.find(": ");
  std::string_view rest =
      colon == std::string_view::npos ? "" : message.substr(colon + 2);
  std::vector<std::string> extras;
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    if (space != 0)
      extras.emplace_back(rest.substr(0, space));
    rest = space == std::string_view::npos ? "" : rest.substr(space + 1);
  }
  auto typed_at = [&](const std::string& word) {
    for (int i = 1; i < argc; ++i) {
      if (word == argv[i])
        return i;
    }
    return argc;
  };
  std::stable_sort(extras.begin(), extras.end(),
                   [&](const std::string& a, const std::string& b) {
                     return typed_at(a) < typed_at(b);
                   });
  auto is_option = [](const std::string& word) { return word[0] == '-'; };
  if (std::any_of(extras.begin(), extras.end(), is_option))
    std::erase_if(extras, [&](const std::string& w) { return !is_option(w); });
  return extras;
}

// The long option of `command` two edits or fewer from `typed`, or "".
std::string ClosestOption(const CLI::App& command, const std::string& typed) {
  std::string meant;
  size_t best = 3;
  if (!typed.starts_with("--"))
    return meant;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      size_t distance = EditDistance(typed, "--" + name);
      if (distance < best) {
        best = distance;
        meant = "--" + name;
      }
    }
  }
  return meant;
}

// What a missing argument or subcommand of `at` (at `path`) is, or "".
std::string DescribeMissing(const CLI::App& at, const std::string& path,
                            const std::string& help) {
  std::vector<std::string> choices;
  for (const CLI::App* sub :
       at.get_subcommands([](const CLI::App*) { return true; })) {
    choices.push_back(sub->get_name());
  }
  if (!choices.empty()) {
    return fmt::format("{}: give one of {}; {}", path, fmt::join(choices, ", "),
                       help);
  }
  for (const CLI::Option* option : at.get_options()) {
    if (option->get_required() && option->count() == 0 &&
        option->get_positional()) {
      std::string what = option->get_description();
      if (!what.empty())
        what[0] = static_cast<char>(
            std::tolower(static_cast<unsigned char>(what[0])));
      return fmt::format("{}: missing {}{}; {}", path, option->get_name(),
                         what.empty() ? "" : " (" + what + ")", help);
    }
  }
  return "";
}

// What a parse error says, in words that say what to type: the command it
// is about, what is missing or unexpected, and the help that fits.
std::string DescribeParseError(const CLI::ParseError& error,
                               const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = Deepest(app);
  std::string path;  // "baton queue add"
  for (const CLI::App* up = at; up; up = up->get_parent())
    path = up->get_name() + (path.empty() ? "" : " " + path);
  std::string help = "see '" + path + " --help'";
  if (dynamic_cast<const CLI::RequiredError*>(&error)) {
    if (at == &app) {
      return "give a command, e.g. baton run -- make test ('baton --help' "
             "lists them)";
    }
    if (std::string missing = DescribeMissing(*at, path, help);
        !missing.empty()) {
      return missing;
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    std::vector<std::string> extras = ExtrasAsTyped(error.what(), argc, argv);
    if (!extras.empty()) {
      std::string shown = fmt::format("'{}'", fmt::join(extras, " "));
      bool has_dashes = std::any_of(argv + 1, argv + argc, [](const char* arg) {
        return std::string_view(arg) == "--";
      });
      // The newcomer's mistake: a command's own options read as baton's.
      if (at->get_name() == "run" && !has_dashes) {
        return fmt::format(
            "{}: {} is not one of its options; to give options to the "
            "command, put -- before it: baton run [OPTIONS] -- COMMAND "
            "[ARGS...]",
            path, shown);
      }
      std::string meant = ClosestOption(*at, extras.front());
      return fmt::format("{}: unexpected {}{}; {}", path, shown,
                         meant.empty() ? "" : " (did you mean " + meant + "?)",
                         help);
    }
  }
  return fmt::format("{}; {}", error.what(), help);
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
  app.footer(
      "Examples:\n"
      "  baton run -- make test          start it, print its id (shell-1)\n"
      "  baton run --wait -- ./build.sh  watch it, exit with its code\n"
      "  baton wait shell-1 shell-2      return at the first end\n"
      "  baton output -f shell-1         follow its output\n"
      "  baton rerun shell-1             the same again, as a new task\n"
      "  baton edit shell-2 --priority 5 a queued task, before it starts\n"
      "  baton delegate --worktree 'fix the flaky parser test'\n"
      "  baton board                     the live board in a browser\n"
      "\n'baton help VERB' (or 'baton VERB --help') tells a verb's options; "
      "man baton, and doc/cli.md, tell all.");
  for (const Verb& verb : Verbs()) {
    if (!only || only == &verb) {
      CLI::App* command = app.add_subcommand(std::string(verb.name),
                                             std::string(verb.description));
      command->group(std::string(verb.group));
      command->footer("");  // The examples are the top-level help's.
      verb.define(*command, ctx, action);
    }
  }
}

int RunCli(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "internal-docs")
    return WriteGeneratedDocs(argv[2]);
  // `baton help [VERB]` is `baton [VERB] --help`.
  std::vector<char*> help_argv;
  char help_flag[] = "--help";
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    help_argv.push_back(argv[0]);
    if (argc >= 3)
      help_argv.push_back(argv[2]);
    help_argv.push_back(help_flag);
    argc = static_cast<int>(help_argv.size());
    argv = help_argv.data();
  }
  std::string unknown;
  const Verb* chosen = ChooseVerb(argc, argv, &unknown);
  if (!unknown.empty()) {
    std::fprintf(stderr, "baton: error: %s\n", UnknownCommand(unknown).c_str());
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
    std::fprintf(stderr, "baton: error: %s\n",
                 DescribeParseError(e, app, argc, argv).c_str());
    return kExitUsage;
  }
  if (!action)
    return kExitUsage;
  return action();
}

}  // namespace baton
