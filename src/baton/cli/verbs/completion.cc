// `baton completion bash|zsh|fish`: prints the shell's completion script,
// written from the command line's definitions (help_docs.h). The packages
// install the same scripts; this is for a shell set up by hand
// (`source <(baton completion bash)`).
#include <cstdio>

#include "baton/cli/help_docs.h"
#include "baton/cli/verbs.h"

namespace baton {

void DefineCompletion(CLI::App& command, const Context& ctx, Action& action) {
  auto shell = std::make_shared<std::string>();
  command.add_option("shell", *shell, "bash, zsh or fish")->required();
  command.callback([&ctx, &action, shell] {
    action = [&ctx, shell] {
      auto script = CompletionScript(DescribeBaton(), *shell);
      if (!script)
        return ReportError(ctx, script.error());
      std::fputs(script->c_str(), stdout);
      return kExitOk;
    };
  });
}

}  // namespace baton
