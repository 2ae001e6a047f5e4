// Any Agent Client Protocol agent (Gemini CLI `--acp`, OpenCode `acp`, Qwen
// Code, Kimi, goose): JSON-RPC 2.0 over newline-delimited stdio
// (doc/agent-testing.md, "Gemini CLI over ACP"). session/new or
// session/load, one session/prompt per turn, session/update as events,
// permission requests as questions, session/cancel. ACP v1 has no steering
// and no free-form question, and this client offers no file system or
// terminal.
#ifndef BATON_AGENT_ACP_ADAPTER_H_
#define BATON_AGENT_ACP_ADAPTER_H_

#include <map>
#include <set>

#include "baton/agent/adapter.h"

namespace baton {

// Entirely passive, single-threaded. All state is derived from Begin and the
// stdout lines (replaying them rebuilds it after a daemon restart); request
// ids name their method and a per-instance prefix, so responses to an
// earlier instance's requests are still understood.
class AcpAdapter : public AgentAdapter {
 public:
  AcpAdapter();

  // The profile's command as is; Gemini CLI and Qwen Code also take `-m`.
  std::vector<std::string> Argv(const std::vector<std::string>& command,
                                const AgentSpec& spec) const override;
  bool interactive() const override { return true; }
  void Begin(const AgentSpec& spec, const std::string& cwd,
             AdapterSink& sink) override;
  void OnLine(std::string_view line, AdapterSink& sink) override;
  // kSteer fails with kInvalidArgument: ACP cannot add to a running turn.
  Status Send(std::string_view message, SendMode mode,
              AdapterSink& sink) override;
  bool can_steer() const override { return false; }
  Status Answer(const Json& question, const std::vector<ItemAnswer>& answers,
                AdapterSink& sink) override;
  void Interrupt(AdapterSink& sink) override;
  std::optional<std::pair<TaskStatus, std::string>> verdict() const override {
    return verdict_;
  }

 private:
  // Where a session/load stands: the agent replays the session's history
  // as updates, which are not this task's events. The spec puts the replay
  // before the load response; Gemini CLI sends most of it after, then an
  // available_commands_update when it takes up the new prompt.
  enum class LoadPhase {
    kNone,        // Not loading, or the replay is over.
    kLoading,     // session/load sent, not answered: updates are history.
    kAnswered,    // Answered; a user_message_chunk now means late replay.
    kLateReplay,  // Dropping a late replay until the agent takes the prompt.
  };

  void Request(std::string_view method, Json params, AdapterSink& sink);
  void Prompt(std::string_view text, AdapterSink& sink);
  void OnResponse(const Json& message, AdapterSink& sink);
  void OnServerRequest(const Json& message, AdapterSink& sink);
  void OnUpdate(const Json& update, AdapterSink& sink);
  void OnPromptResult(const Json& result, AdapterSink& sink);
  void SetSession(const std::string& session_id, AdapterSink& sink);
  void FlushText(AdapterSink& sink);
  // question_withdrawn for each permission still asked when a prompt ends.
  void WithdrawAsked(const std::string& why, AdapterSink& sink);
  void Fail(const std::string& detail, AdapterSink& sink);

  std::string prefix_;  // Random, per instance: makes request ids unique.
  int next_request_ = 1;

  std::string brief_;
  std::string cwd_;
  std::string resume_session_;  // Set when resuming.
  bool session_requested_ = false;
  std::string session_id_;  // Empty until session/new|load answers.
  bool first_prompt_sent_ = false;
  bool prompt_running_ = false;  // From session/prompt to its response.
  LoadPhase load_phase_ = LoadPhase::kNone;

  std::string text_;        // Chunks of the agent message being streamed.
  std::string message_id_;  // Their messageId, where the agent sends one.
  std::string last_text_;   // The last whole agent message of the turn.
  std::set<std::string> tools_seen_;  // toolCallIds shown as tool events.
  // Unanswered permission requests by their JSON-dumped request id,
  // answered "cancelled" on an interrupt as the spec asks.
  std::map<std::string, Json> pending_permissions_;  // {id, tool_call_id}
  // The same from the stream alone (answers aside): what the end of the
  // prompt withdraws unless the tool call finished first.
  std::map<std::string, Json> asked_;  // {id, tool_call_id}
  std::optional<std::pair<TaskStatus, std::string>> verdict_;
  UsageTally tally_;  // From prompt results (doc/agents.md, "Budgets").
};

}  // namespace baton

#endif  // BATON_AGENT_ACP_ADAPTER_H_
