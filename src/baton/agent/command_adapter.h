// A plain command as an agent: the brief on stdin, the final text on stdout
// (DeepSeek Harness `dsh --profile headless` works this way). No questions,
// no messages once started. A session only where its profile says how the
// command prints its id and takes it back (resume_flag, session_id_after:
// doc/agents.md, "Plain commands").
#ifndef BATON_AGENT_COMMAND_ADAPTER_H_
#define BATON_AGENT_COMMAND_ADAPTER_H_

#include "baton/agent/adapter.h"

namespace baton {

class CommandAdapter : public AgentAdapter {
 public:
  std::vector<std::string> Argv(const std::vector<std::string>& command,
                                const AgentSpec& spec) const override;
  bool interactive() const override { return false; }
  void Begin(const AgentSpec& spec, const std::string&, AdapterSink&) override {
    session_id_after_ = spec.session_id_after;
  }
  void OnLine(std::string_view line, AdapterSink& sink) override;
  Status Send(std::string_view, SendMode, AdapterSink&) override;
  bool can_steer() const override { return false; }
  Status Answer(const Json&, const std::vector<ItemAnswer>&,
                AdapterSink&) override;
  void Interrupt(AdapterSink&) override {}
  // None: a plain command's exit code decides.
  std::optional<std::pair<TaskStatus, std::string>> verdict() const override {
    return std::nullopt;
  }

 private:
  std::string session_id_after_;  // "" = it prints no session id.
  bool session_seen_ = false;
};

// The session id in `line`: the word right after `after`; "" if none.
std::string SessionIdAfter(std::string_view line, std::string_view after);

}  // namespace baton

#endif  // BATON_AGENT_COMMAND_ADAPTER_H_
