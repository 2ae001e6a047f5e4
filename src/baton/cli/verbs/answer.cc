// `baton answer`: answers an agent worker's open question, one answer per
// item (the first answer wins).
#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

struct AnswerArgs {
  std::string id;
  std::vector<std::string> answers;
};

int DoAnswer(const Context& ctx, const AnswerArgs& args) {
  for (const std::string& answer : args.answers) {
    if (auto ok = CheckArgumentText("an answer", answer); !ok)
      return ReportError(ctx, ok.error());
  }
  return CallAndPrint(
      ctx, AnswerRequest{.task = args.id, .answers = args.answers},
      [](const AnswerReply& reply) {
        std::string answers;
        EncodeValue(answers, reply.answered.answers);
        std::printf("%s: answered %s\n", reply.task.c_str(), answers.c_str());
        return kExitOk;
      });
}

}  // namespace

void DefineAnswer(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<AnswerArgs>();
  command.add_option("id", args->id, "Task id")->required();
  command
      .add_option("answers", args->answers,
                  "Option number, label, text, or skip")
      ->required();
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoAnswer(ctx, *args); };
  });
}

}  // namespace baton
