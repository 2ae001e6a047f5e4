#include "baton/cli/help_docs.h"

#include <gtest/gtest.h>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

const CommandDoc* Find(const CommandDoc& parent, std::string_view name) {
  for (const CommandDoc& sub : parent.subcommands) {
    if (sub.name == name)
      return &sub;
  }
  return nullptr;
}

TEST(CommandTree, HoldsEveryVerbWithItsOptionsAndArguments) {
  CommandDoc baton = DescribeBaton();
  ASSERT_EQ(baton.subcommands.size(), Verbs().size());
  for (const Verb& verb : Verbs())
    EXPECT_NE(Find(baton, verb.name), nullptr) << verb.name;

  const CommandDoc* ls = Find(baton, "ls");
  ASSERT_NE(ls, nullptr);
  ASSERT_EQ(ls->options.size(), 6u);
  EXPECT_EQ(ls->options[1].names, (std::vector<std::string>{"--quiet", "-q"}));
  EXPECT_TRUE(ls->options[1].value.empty()) << "a flag takes no value";
  EXPECT_EQ(ls->options[2].names, std::vector<std::string>{"--status"});
  EXPECT_EQ(ls->options[2].value, "TEXT");

  const CommandDoc* kill = Find(baton, "kill");
  ASSERT_NE(kill, nullptr);
  ASSERT_EQ(kill->arguments.size(), 1u);
  EXPECT_TRUE(kill->arguments[0].task_id);
  EXPECT_TRUE(kill->arguments[0].many);
  EXPECT_EQ(kill->options[0].value, "TEXT");

  const CommandDoc* daemon = Find(baton, "daemon");
  ASSERT_NE(daemon, nullptr);
  const CommandDoc* stop = Find(*daemon, "stop");
  ASSERT_NE(stop, nullptr);
  EXPECT_EQ(stop->path, "daemon stop");
  EXPECT_EQ(UsageLine(*stop), "baton daemon stop [--kill-tasks]");

  // baton_main runs board itself; the table still describes it (issue 36:
  // it was missing from --help, the man page and the completions).
  const CommandDoc* board = Find(baton, "board");
  ASSERT_NE(board, nullptr);
  EXPECT_EQ(UsageLine(*board), "baton board [--listen HOST:PORT] [--no-open]");
}

TEST(ManPage, HasASectionForEveryVerbAndSubcommandAndEachOption) {
  CommandDoc baton = DescribeBaton();
  std::string page = ManPage(baton);
  EXPECT_TRUE(page.starts_with(".\\\""));
  EXPECT_NE(page.find(".TH BATON 1"), std::string::npos);
  for (const Verb& verb : Verbs()) {
    EXPECT_NE(page.find(".SS \"baton " + std::string(verb.name) + "\"\n"),
              std::string::npos)
        << verb.name;
  }
  EXPECT_NE(page.find(".SS \"baton daemon stop\"\n"), std::string::npos);
  // Option names with roff's minus signs, as man pages must write them.
  EXPECT_NE(page.find("\\fB\\-\\-kill\\-tasks\\fR"), std::string::npos);
  EXPECT_NE(page.find("\\fB\\-\\-quiet\\fR, \\fB\\-q\\fR"), std::string::npos);
  EXPECT_NE(page.find(".SH EXIT STATUS"), std::string::npos);
}

TEST(ManPage, EscapesWhatRoffWouldReadAsControl) {
  CommandDoc doc;
  doc.name = "baton";
  CommandDoc sub;
  sub.name = sub.path = "x";
  sub.description = ".start with a dot\\";
  doc.subcommands.push_back(sub);
  std::string page = ManPage(doc);
  EXPECT_NE(page.find("\\&.start with a dot\\e"), std::string::npos);
}

TEST(CompletionScript, WritesThreeShellsAndRefusesAnother) {
  CommandDoc baton = DescribeBaton();
  auto bash = CompletionScript(baton, "bash");
  ASSERT_TRUE(bash.has_value());
  EXPECT_NE(bash->find("'daemon stop') opts='--kill-tasks --help'"),
            std::string::npos);
  EXPECT_NE(bash->find("complete -o default -F _baton baton"),
            std::string::npos);
  auto zsh = CompletionScript(baton, "zsh");
  ASSERT_TRUE(zsh.has_value());
  EXPECT_TRUE(zsh->starts_with("#compdef baton\n"));
  auto fish = CompletionScript(baton, "fish");
  ASSERT_TRUE(fish.has_value());
  EXPECT_NE(fish->find("-l quiet -s q -d"), std::string::npos);

  auto tcsh = CompletionScript(baton, "tcsh");
  ASSERT_FALSE(tcsh.has_value());
  EXPECT_NE(tcsh.error().message.find("bash, zsh and fish"), std::string::npos);
}

}  // namespace
}  // namespace baton
