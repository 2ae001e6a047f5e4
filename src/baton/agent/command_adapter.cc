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
  // A start refuses a resume of a command that cannot (daemon/commands).
  if (!spec.resume_session.empty() && !spec.resume_flag.empty()) {
    argv.push_back(spec.resume_flag);
    argv.push_back(spec.resume_session);
  }
  return argv;
}

std::string SessionIdAfter(std::string_view line, std::string_view after) {
  if (after.empty())
    return "";
  size_t at = line.find(after);
  if (at == std::string_view::npos)
    return "";
  std::string_view rest = line.substr(at + after.size());
  size_t end = rest.find_first_of(" \t\r\"',;");
  return std::string(rest.substr(0, end));
}

void CommandAdapter::OnLine(std::string_view line, AdapterSink& sink) {
  // The first id it prints is its session's; a later match is only text.
  if (!session_seen_) {
    if (std::string id = SessionIdAfter(line, session_id_after_); !id.empty()) {
      session_seen_ = true;
      sink.Emit({{"type", "session"}, {"session_id", id}});
    }
  }
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
