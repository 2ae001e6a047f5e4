// A plain command as an agent: the brief on stdin, the final text on stdout
// (DeepSeek Harness `dsh --profile headless` works this way). No session,
// no questions, no messages once started.
#ifndef BATON_AGENT_COMMAND_ADAPTER_H_
#define BATON_AGENT_COMMAND_ADAPTER_H_

#include "baton/agent/adapter.h"

namespace baton {

class CommandAdapter : public AgentAdapter {
 public:
  std::vector<std::string> Argv(const std::vector<std::string>& command,
                                const AgentSpec& spec) const override;
  bool interactive() const override { return false; }
  void Begin(const AgentSpec&, const std::string&, AdapterSink&) override {}
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
};

}  // namespace baton

#endif  // BATON_AGENT_COMMAND_ADAPTER_H_
