#include "baton/agent/command_adapter.h"

#include "baton/core/model_spec.h"

namespace baton {

std::vector<std::string> CommandAdapter::Argv(
    const std::vector<std::string>& command, const AgentSpec& spec) const {
  std::vector<std::string> argv = command;
  // As the profile says: dsh takes the whole spec, effort included.
  if (!spec.model.empty()) {
    if (auto model = ParseModelSpec(spec.model)) {
      for (std::string& arg : ModelArgv(*model, spec.model_args))
        argv.push_back(std::move(arg));
    }
  }
  return argv;
}

void CommandAdapter::OnLine(std::string_view line, AdapterSink& sink) {
  sink.Emit({{"type", "text"}, {"text", std::string(line)}});
}

Status CommandAdapter::Send(std::string_view, SendMode, AdapterSink&) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "a plain command reads its brief once and takes no "
                   "messages; start a new task with the message as its brief");
}

Status CommandAdapter::Answer(const Json&, const std::vector<ItemAnswer>&,
                              AdapterSink&) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "a plain command asks no questions");
}

}  // namespace baton
