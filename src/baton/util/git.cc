#include "baton/util/git.h"

#include "baton/util/program_path.h"
#include "baton/util/run_to_end.h"

namespace baton {

std::string GitResult::Complaint() const {
  std::string text = Said();
  if (text.empty())
    return "git exited with code " + std::to_string(exit_code);
  return text;
}

Result<GitResult> RunGit(const std::string& cwd,
                         const std::vector<std::string>& args,
                         const std::vector<std::string>& env,
                         std::chrono::milliseconds timeout) {
  auto git = ResolveProgram("git", env, cwd);
  if (!git) {
    return MakeError(ErrorCode::kNotFound,
                     "git is not installed (no git on the PATH)");
  }
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto ran = RunToEnd(std::move(*git), std::move(argv), env, cwd, timeout);
  if (!ran)
    return std::unexpected(ran.error());
  GitResult result;
  static_cast<RunOutcome&>(result) = std::move(*ran);
  return result;
}

}  // namespace baton
