// Codex through `codex exec --json` (one prompt per process) and
// `codex exec resume <thread> --json`: the fallback for a codex without a
// usable `app-server` (doc/agents.md, "Codex: app-server or exec"). The
// brief goes on stdin (the prompt argument is "-"), so its length and a
// leading dash do not matter. The stream: thread.started, turn.started,
// item.started|updated|completed, turn.completed | turn.failed, error
// (doc/agent-testing.md, "Codex exec --json";
// tests/agents/transcripts/codex-exec-*).
// No approvals or questions (exec never asks), no messages once started: a
// follow-up is a new task that resumes the thread.
#ifndef BATON_AGENT_CODEX_EXEC_ADAPTER_H_
#define BATON_AGENT_CODEX_EXEC_ADAPTER_H_

#include <set>

#include "baton/agent/adapter.h"

namespace baton {

// Passive and single-threaded; all state comes from Begin and the lines.
class CodexExecAdapter : public AgentAdapter {
 public:
  std::vector<std::string> Argv(const std::vector<std::string>& command,
                                const AgentSpec& spec) const override;
  bool interactive() const override { return false; }
  void Begin(const AgentSpec& spec, const std::string& cwd,
             AdapterSink& sink) override;
  void OnLine(std::string_view line, AdapterSink& sink) override;
  // Always kInvalidArgument: exec reads one prompt; the error says how to
  // go on (a new task resuming the thread).
  Status Send(std::string_view message, SendMode mode,
              AdapterSink& sink) override;
  bool can_steer() const override { return false; }
  Status Answer(const Json& question, const std::vector<ItemAnswer>& answers,
                AdapterSink& sink) override;
  // Nothing to say on stdin: the kill's signal stops the run.
  void Interrupt(AdapterSink&) override {}
  std::optional<std::pair<TaskStatus, std::string>> verdict() const override {
    return verdict_;
  }

 private:
  void OnItem(const Json& item, bool completed, AdapterSink& sink);

  std::string cwd_;
  std::string thread_id_;
  std::set<std::string> tools_seen_;  // Item ids already shown as tools.
  std::string last_text_;
  std::optional<std::pair<TaskStatus, std::string>> verdict_;
  UsageTally tally_;  // From turn.completed (doc/agents.md, "Budgets").
};

}  // namespace baton

#endif  // BATON_AGENT_CODEX_EXEC_ADAPTER_H_
