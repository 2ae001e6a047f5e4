// Drives agent tasks inside batond (doc/agents.md): one AgentWorker per
// live agent task (daemon/agent_worker.h) tails the CLI's stdout stream
// into its adapter, records the normalized events (tasks/<id>/events.jsonl)
// and a readable transcript (output.log), and writes the adapter's lines to
// the CLI's stdin FIFO; the runtime starts and rebuilds workers and routes
// messages, answers and interrupts to them. Sits between the executor and
// the registry as the executor's listener, so an agent's own verdict
// decides how its exit is reported.
//
// Single-threaded, on batond's loop.
#ifndef BATON_DAEMON_AGENT_RUNTIME_H_
#define BATON_DAEMON_AGENT_RUNTIME_H_

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/agent/adapter.h"
#include "baton/core/ports.h"
#include "baton/core/task_registry.h"
#include "baton/ipc/messages.h"
#include "baton/loop/event_loop.h"

namespace baton {

// How long a kill lets an agent that was asked to end its turn exit by
// itself before the signals: the CLIs end an interrupted turn in under
// 0.2 s (Claude, Codex) to 1.3 s (Gemini's cancel), doc/agent-testing.md.
inline constexpr std::chrono::milliseconds kAgentStopWindow{3000};

class AgentWorker;

class AgentRuntime : public ForwardingListener {
 public:
  // Borrows all four. Executor events go on to `next` (default: the
  // registry) once an agent's verdict is in.
  AgentRuntime(EventLoop* loop, Executor* executor, TaskRegistry* registry,
               ExecutorListener* next = nullptr);
  ~AgentRuntime() override;

  // After a restart: rebuilds the workers of live agent tasks from their
  // streams (writes discarded) and goes on tailing. Call after the
  // registry's Recover.
  void Recover(const std::vector<TaskRecord>& live);

  // The message's id and its delivery: "steered", "sent" or "queued"
  // (with why, when a steer had to queue).
  Result<SendReply> Send(const TaskRecord& task, const std::string& message,
                         SendMode mode);
  // Replaces or withdraws a queued follow-up when the request says so;
  // the follow-ups still queued, oldest first.
  Result<QueuedReply> ChangeQueued(const TaskRecord& task,
                                   const QueuedRequest& request);
  // Answers the oldest open question, one answer per item: an option
  // number ("2", or "1,3" for several), a label, free text, or "skip".
  // kAlreadyExists when nothing is open (the first answer won).
  Result<Json> Answer(const TaskRecord& task,
                      const std::vector<std::string>& answers);
  // Asks the CLI to stop its turn, and to end (stdin closes once the turn
  // is over; no queued follow-up starts). True when a turn was running: the
  // kill then gives the CLI kAgentStopWindow to exit before signalling.
  bool Interrupt(const TaskId& id);
  // Events with seq > `after`, from the task's events file.
  Result<Json> Events(const TaskRecord& task, int64_t after) const;
  // The questions of a live agent task that are still open (neither
  // answered, withdrawn, nor left by a turn's end), oldest first; empty
  // for any other task. The one place that decides it for clients.
  std::vector<OpenQuestion> OpenQuestions(const TaskId& id) const;
  // Stops the workers of `session` that still work once the session's
  // budget is reached (doc/agents.md, "Session budgets"); no-op before.
  void CheckSessionBudget(const std::string& session);

  // ExecutorListener: agent tasks are handled here, then everything goes
  // on to the registry.
  void OnTaskSpawned(const TaskId& id, int64_t pid,
                     int64_t started_ms) override;
  void OnTaskExited(const TaskId& id, const ExitInfo& exit) override;

 private:
  // Why a replace or withdraw of a message of an ended task is refused.
  Error RefuseChangeAfterEnd(const TaskRecord& task,
                             const QueuedRequest& request) const;
  AgentWorker* Find(const TaskId& id);
  void Start(const TaskRecord& task, bool replay);
  // A worker reached its budget: stopped as a kill stops it, with `reason`
  // as its task's detail.
  void StopForBudget(const TaskId& id, const std::string& reason);
  // Before a retry: the ended attempt's stream and stderr get its number.
  void KeepAttemptApart(const TaskId& id, size_t attempt);

  EventLoop* loop_;
  Executor* executor_;
  TaskRegistry* registry_;
  std::map<TaskId, std::unique_ptr<AgentWorker>> workers_;
};

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_RUNTIME_H_
