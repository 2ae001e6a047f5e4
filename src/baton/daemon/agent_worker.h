// One live agent task inside batond (doc/agents.md): its adapter, the
// stream of the CLI it tails (inotify), the stdin FIFO it writes the
// adapter's lines to, the events it records (events.jsonl and the
// transcript in output.log), its open questions and its queued
// follow-ups. The AgentRuntime owns one per live agent task and routes
// executor events, messages, answers and kills to it.
//
// Single-threaded, on batond's loop.
#ifndef BATON_DAEMON_AGENT_WORKER_H_
#define BATON_DAEMON_AGENT_WORKER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/agent/adapter.h"
#include "baton/core/ports.h"
#include "baton/core/task_registry.h"
#include "baton/daemon/agent_event_log.h"
#include "baton/ipc/messages.h"
#include "baton/loop/event_loop.h"
#include "baton/util/unique_fd.h"

namespace baton {

// Where an agent CLI is in its turns.
enum class TurnState {
  kInTurn,    // Working on a turn: its brief, or a message sent since.
  kStopping,  // Killed mid-turn: asked to end it; no turn follows.
  // The turn ended and no message started another. Seen only while a
  // replay rebuilds the state: then the oldest queued follow-up starts the
  // next turn, else stdin closes.
  kTurnEnded,
  kClosed,  // stdin closed: no turn follows; the CLI ends.
};

// What became of an agent task's messages, from its events
// (events.jsonl, applied in order): the follow-ups still queued and those
// delivered or withdrawn. Ids are "m-<n>" (counted in older files).
struct MessageLedger {
  struct Queued {
    std::string id;
    std::string text;
  };
  struct Settled {
    std::string how;  // "delivered" or "withdrawn".
    std::string at;   // Its event's time.
  };
  std::map<int64_t, Queued> queued;        // By the seq of its "message" event.
  std::map<std::string, Settled> settled;  // By id.
  int64_t numbers = 0;                     // The highest number given.

  void Apply(const nlohmann::json& event);
};

// Why message `id` of `task` cannot be replaced or withdrawn: it was
// settled (kAlreadyDelivered, saying when), or the task never gave it
// (kInvalidArgument, naming `queued_ids`).
Error RefuseMessageChange(const std::string& task, const std::string& id,
                          const MessageLedger::Settled* settled,
                          const std::vector<std::string>& queued_ids);

class AgentWorker : public AdapterSink {
 public:
  // Borrows the loop, executor and registry, which outlive it.
  AgentWorker(EventLoop* loop, Executor* executor, TaskRegistry* registry,
              TaskRecord task, std::unique_ptr<AgentAdapter> adapter);
  ~AgentWorker() override;
  AgentWorker(const AgentWorker&) = delete;
  AgentWorker& operator=(const AgentWorker&) = delete;

  const TaskRecord& task() const { return task_; }
  AgentAdapter& adapter() { return *adapter_; }
  TurnState turn_state() const { return turn_; }
  bool has_open_question() const { return !open_questions_.empty(); }
  // batond stopped it for a budget, and the turn it was asked to end ended
  // with its result all the same, no follow-up queued: its work was done
  // (doc/agents.md, "Budgets").
  bool work_done_at_stop() const { return work_done_at_stop_; }
  const std::deque<nlohmann::json>& open_questions() const {
    return open_questions_;
  }

  // Opens the files and starts tailing. With `replay`, feeds the whole
  // stream to a fresh adapter with writes discarded and events already on
  // disk skipped, so its state is what it was before a restart.
  void Begin(bool replay);
  // At the process's exit: the last bytes, even without a newline.
  void DrainToEnd();

  // A kill: asks the CLI to end its turn, after which stdin closes (no
  // queued follow-up starts another) and the CLI exits by itself. False
  // when no turn runs, so there is nothing to wait for.
  bool Stop();
  // Answers the oldest open question; `answered` gets the recorded answer.
  Status Answer(const std::vector<std::string>& texts,
                nlohmann::json* answered);
  // What Send did with a message: its id, "m-<n>", unique within the task
  // and kept in events.jsonl (so a restart keeps it), and its delivery:
  // "steered", "sent" or "queued ..." (why, when a steer had to queue).
  struct Sent {
    std::string id;
    std::string delivery;
  };
  Result<Sent> Send(const std::string& message, SendMode mode);
  // The follow-ups still queued, oldest (the next one) first.
  std::vector<QueuedMessage> Queued() const;
  // Replaces the text of the queued follow-up `id`, or withdraws it when
  // `text` is nullopt. kAlreadyDelivered once it was delivered or
  // withdrawn (the message says when); kInvalidArgument for an id the
  // task never gave (the message lists the queued ones).
  Status ChangeQueued(const std::string& id, std::optional<std::string> text);

  // Called once when the worker's usage reaches its budget, or its
  // session's usage the session's, while it still works (a turn runs or
  // another is due), with the reason its task ends with: the runtime stops
  // it (doc/agents.md, "Budgets").
  void SetOnBudgetReached(std::function<void(const std::string&)> callback) {
    on_budget_reached_ = std::move(callback);
  }
  // Calls on_budget_reached_ when a budget is reached: after each batch of
  // the worker's lines, and when another worker's usage reached their
  // session's budget.
  void CheckBudget();
  // Why its budget (or its session's) stops it, "" while within them or
  // once it is being stopped.
  std::string BudgetReason() const;

  // AdapterSink.
  void Emit(nlohmann::json event) override;
  void WriteLine(std::string line) override;
  void TurnEnded() override;

 private:
  // A follow-up waiting for the turn to end.
  struct Followup {
    int64_t seq;  // Of its "message" event.
    std::string id;
    std::string text;
  };

  // What a restart replays from: set by LoadEvents, used by Begin(true).
  struct Replay {
    bool active = false;  // Begin is feeding the stream again: no writes.
    // The adapter's events up to this count are in events.jsonl already.
    int64_t skip_emits = 0;
    // The adapter's event count when the last message that started a turn
    // was sent (-1: none): a turn end after it means the turn is over.
    int64_t last_start_at = -1;
    // A retried task's attempt (doc/agents.md, "Retries"), from the note
    // that began it: its number (1: the first), the adapter events of the
    // earlier attempts (this attempt's CLI numbers on from there), and
    // what they spent (this CLI reports from zero).
    int64_t attempt = 1;
    int64_t attempt_emits = 0;
    AgentUsage usage_before;
  };

  void Drain();
  void PollStream();
  // Appends an event (numbered) to events.jsonl and its text to the
  // transcript; keeps the registry's status in step with open questions.
  void Record(nlohmann::json event);
  void WriteTranscript(const std::string& text);
  // Between turns: the oldest queued follow-up starts the next turn, else
  // stdin closes.
  void DeliverNextOrClose();
  // Numbering, open questions and queued follow-ups from the events file a
  // previous batond wrote. Returns the highest seq there.
  int64_t LoadEvents();
  void FlushStdin();
  void CloseStdin();
  // A retry's fresh start: notes the attempt in the events, and begins
  // this CLI's numbering and usage after the earlier attempts'.
  void BeginAttempt();

  EventLoop* loop_;
  Executor* executor_;
  TaskRegistry* registry_;
  TaskRecord task_;
  std::unique_ptr<AgentAdapter> adapter_;
  std::string dir_;
  AgentEventLog events_;
  UniqueFd stream_, transcript_, inotify_;
  // On Slurm, the stream may be written on another node, which inotify
  // does not see on a shared file system: read once a second as well.
  TimerId stream_poll_ = 0;
  std::string partial_;  // Stream bytes after the last newline.
  TurnState turn_ = TurnState::kInTurn;
  // The current turn's last text (a text event, or its result's text):
  // what a wait for turns gets at the turn's end.
  std::string turn_text_;
  int64_t adapter_emits_ = 0;  // Events the adapter emitted in this run.
  Replay replay_;
  bool transcript_failed_ = false;  // A write failed (logged once).

  // The CLI's stdin FIFO, and the lines it did not take yet.
  UniqueFd stdin_;
  std::string out_;
  bool stdin_watched_ = false;  // On the loop, waiting to be writable.

  std::deque<Followup> followups_;  // Rebuilt by LoadEvents after a restart.
  // The messages delivered or withdrawn, by id, to refuse changing them.
  std::map<std::string, MessageLedger::Settled> settled_;
  int64_t messages_ = 0;  // The highest message number given.
  std::deque<nlohmann::json> open_questions_;
  // The last withdrawal, unless an answer came since.
  nlohmann::json last_withdrawn_;
  std::function<void(const std::string&)> on_budget_reached_;
  bool budget_reached_ = false;  // on_budget_reached_ was called.
  bool work_done_at_stop_ = false;
  // The running turn began with the budget already spent (a delegate that
  // started in a spent session): its end is no work done within it.
  bool turn_began_over_budget_ = false;
};

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_WORKER_H_
