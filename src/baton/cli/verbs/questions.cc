// `baton questions`: every open question of the session's agent tasks and
// of the workers they started, oldest first, with the chain of tasks that
// asked it (doc/agents.md, "Questions of a tree of agents").
#include <cstdio>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"

namespace baton {

void DefineQuestions(CLI::App& command, const Context& ctx, Action& action) {
  command.callback([&ctx, &action] {
    action = [&ctx] {
      return CallAndPrint(
          ctx, QuestionsRequest{}, [](const QuestionsReply& reply) {
            std::fputs(TreeQuestionsText(reply).c_str(), stdout);
            return kExitOk;
          });
    };
  });
}

}  // namespace baton
