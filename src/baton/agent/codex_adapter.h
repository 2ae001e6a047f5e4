// Codex through `codex app-server`: JSON-RPC over stdio lines without the
// "jsonrpc" member (doc/agent-testing.md, "Codex app-server"). Threads, turns,
// steering, interrupts, resume by thread id; approvals and user-input
// requests become questions. Not the `codex exec --json` fallback.
#ifndef BATON_AGENT_CODEX_ADAPTER_H_
#define BATON_AGENT_CODEX_ADAPTER_H_

#include <map>
#include <set>

#include "baton/agent/adapter.h"

namespace baton {

// Entirely passive, single-threaded. All state is derived from Begin and the
// stdout lines, so replaying them into a fresh adapter (after a daemon
// restart) rebuilds it; the ids of the requests it sends name their method
// and a per-instance prefix, so responses to an earlier instance's requests
// are still understood and new ids never collide with old ones.
class CodexAdapter : public AgentAdapter {
 public:
  CodexAdapter();

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
  std::string ExplainExit(std::string_view stderr_text) const override;

 private:
  // Writes a request whose id carries `method`; returns the id.
  std::string Request(std::string_view method, Json params, AdapterSink& sink);
  void StartTurn(std::string_view text, AdapterSink& sink);
  void OnResponse(const Json& message, AdapterSink& sink);
  void OnServerRequest(const Json& message, AdapterSink& sink);
  void OnNotification(const Json& message, AdapterSink& sink);
  void OnItem(const Json& item, bool completed, AdapterSink& sink);
  void OnTurnCompleted(const Json& turn, AdapterSink& sink);
  void SetThread(const std::string& thread_id, AdapterSink& sink);
  void SetTurn(const std::string& turn_id, AdapterSink& sink);
  // Ends the whole task with a failure the CLI cannot recover from.
  void Fail(const std::string& detail, AdapterSink& sink);

  std::string prefix_;  // Random, per instance: makes request ids unique.
  int next_request_ = 1;

  std::string brief_;  // Sent as the first turn once the thread exists.
  std::string cwd_;
  std::string resume_thread_;      // Set when resuming.
  bool thread_requested_ = false;  // thread/start|resume was sent.
  std::string thread_id_;          // Empty until thread/start|resume answers.
  bool first_turn_sent_ = false;
  std::string turn_id_;        // The running turn; empty between turns.
  bool turn_running_ = false;  // From turn/start (sent) to turn/completed.
  std::set<std::string> done_turns_;         // Turns that completed.
  std::vector<std::string> pending_steers_;  // Until the turn id is known.
  bool interrupt_pending_ = false;           // Likewise for an interrupt.
  // Items of the running turn by id (approvals refer to them by itemId).
  std::map<std::string, Json> items_;
  std::set<std::string> tools_seen_;  // Item ids already shown as tools.
  // Server requests shown as questions that codex has not resolved yet (by
  // their dumped id): serverRequest/resolved or the turn's end withdraws
  // them. From the stream alone, answered or not.
  std::map<std::string, Json> unresolved_;
  std::string last_text_;  // The last agent message of the turn.
  Json usage_;             // The latest thread token usage.
  UsageTally tally_;       // Its totals, and the turns ended.
  std::optional<std::pair<TaskStatus, std::string>> verdict_;
};

}  // namespace baton

#endif  // BATON_AGENT_CODEX_ADAPTER_H_
