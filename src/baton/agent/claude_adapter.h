// Claude Code headless: stream-json out and in, permission prompts and
// AskUserQuestion over stdio as control requests
// (doc/agent-testing.md, "Claude Code").
#ifndef BATON_AGENT_CLAUDE_ADAPTER_H_
#define BATON_AGENT_CLAUDE_ADAPTER_H_

#include <map>
#include <utility>

#include "baton/agent/adapter.h"

namespace baton {

class ClaudeAdapter : public AgentAdapter {
 public:
  std::vector<std::string> Argv(const std::vector<std::string>& command,
                                const AgentSpec& spec) const override;
  bool interactive() const override { return true; }
  void Begin(const AgentSpec& spec, const std::string& cwd,
             AdapterSink& sink) override;
  void OnLine(std::string_view line, AdapterSink& sink) override;
  Status Send(std::string_view message, SendMode mode,
              AdapterSink& sink) override;
  bool can_steer() const override { return true; }
  Status Answer(const Json& question, const std::vector<ItemAnswer>& answers,
                AdapterSink& sink) override;
  void Interrupt(AdapterSink& sink) override;
  std::optional<std::pair<TaskStatus, std::string>> verdict() const override {
    return verdict_;
  }

 private:
  void OnControlRequest(const Json& message, AdapterSink& sink);
  void OnResult(const Json& message, AdapterSink& sink);
  void OnAssistantUsage(const Json& message, AdapterSink& sink);

  std::string session_id_;
  std::optional<std::pair<TaskStatus, std::string>> verdict_;
  int next_request_ = 1;
  // Usage (doc/agents.md, "Budgets"): the totals at the last result, and
  // the running turn's model replies by message id (input, output tokens),
  // each reply counted once though it comes as a line per content block.
  UsageTally usage_;
  AgentUsage settled_;
  std::map<std::string, std::pair<int64_t, int64_t>> replies_;
};

}  // namespace baton

#endif  // BATON_AGENT_CLAUDE_ADAPTER_H_
