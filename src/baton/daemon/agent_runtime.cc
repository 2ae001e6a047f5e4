#include "baton/daemon/agent_runtime.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "baton/daemon/agent_event_log.h"
#include "baton/daemon/agent_worker.h"
#include "baton/daemon/output_redactor.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"

namespace baton {

AgentRuntime::AgentRuntime(EventLoop* loop, Executor* executor,
                           TaskRegistry* registry, ExecutorListener* next)
    : ForwardingListener(next ? next : registry),
      loop_(loop),
      executor_(executor),
      registry_(registry) {}

AgentRuntime::~AgentRuntime() = default;

AgentWorker* AgentRuntime::Find(const TaskId& id) {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : it->second.get();
}

void AgentRuntime::Start(const TaskRecord& task, bool replay) {
  auto adapter = MakeAdapter(task.spec.agent->adapter);
  auto worker = std::make_unique<AgentWorker>(loop_, executor_, registry_, task,
                                              std::move(adapter));
  AgentWorker* raw = worker.get();
  raw->SetOnBudgetReached(
      [this, id = task.id, owner = task.spec.owner](const std::string& reason) {
        StopForBudget(id, reason);
        // A session's budget stops every worker of the session, not only
        // the one whose report reached it.
        if (!registry_->budgets().Reached(owner).empty())
          CheckSessionBudget(owner);
      });
  workers_[task.id] = std::move(worker);
  raw->Begin(replay);
  // One that starts after its session's budget was reached (it waited in a
  // queue) is stopped at once.
  if (!replay)
    raw->CheckBudget();
}

void AgentRuntime::CheckSessionBudget(const std::string& session) {
  std::vector<TaskId> ids;
  for (const auto& [id, worker] : workers_) {
    const TaskRecord* task = registry_->FindLive(id);
    if (task && task->spec.owner == session)
      ids.push_back(id);
  }
  for (const TaskId& id : ids) {
    // Each calls back at most once; one stopped meanwhile is gone.
    if (AgentWorker* worker = Find(id))
      worker->CheckBudget();
  }
}

// What a kill does (commands/tasks.cc), by batond itself: the agent is
// asked to end its turn, and the signals wait a moment for it.
void AgentRuntime::StopForBudget(const TaskId& id, const std::string& reason) {
  const TaskRecord* task = registry_->FindLive(id);
  if (!task)
    return;
  std::string owner = task->spec.owner;
  BATON_LOG_INFO("{}: {}; stopping it", id.ToString(), reason);
  bool in_turn = Interrupt(id);
  auto killed =
      registry_->Kill(id.ToString(), owner, reason, std::nullopt,
                      in_turn ? kAgentStopWindow : std::chrono::milliseconds(0),
                      KillOrigin::kLimit);
  if (!killed) {
    BATON_LOG_WARN("{}: stopping it at its budget: {}", id.ToString(),
                   killed.error().message);
  }
}

void AgentRuntime::Recover(const std::vector<TaskRecord>& live) {
  for (const auto& task : live) {
    if (task.spec.agent && task.status != TaskStatus::kQueued &&
        !Find(task.id)) {
      Start(task, /*replay=*/true);
    }
  }
}

void AgentRuntime::OnTaskSpawned(const TaskId& id, int64_t pid,
                                 int64_t started_ms) {
  next_->OnTaskSpawned(id, pid, started_ms);
  const TaskRecord* task = registry_->FindLive(id);
  if (task && task->spec.agent && !Find(id))
    Start(*task, /*replay=*/false);
}

void AgentRuntime::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  const TaskRecord* task = registry_->FindLive(id);
  if (!task || !task->spec.agent)
    return next_->OnTaskExited(id, exit);
  // An agent that ended while no batond ran: rebuild what it said.
  if (!Find(id) && task->status != TaskStatus::kQueued)
    Start(*task, true);
  AgentWorker* worker = Find(id);
  ExitInfo verdict_exit = exit;
  if (worker) {
    worker->DrainToEnd();
    if (auto verdict = worker->adapter().verdict()) {
      verdict_exit.verdict = verdict->first;
      verdict_exit.verdict_detail = verdict->second;
    }
    verdict_exit.work_done_at_stop = worker->work_done_at_stop();
  }
  if (!verdict_exit.verdict && exit.cause == ExitCause::kNatural &&
      exit.exit_code.value_or(1) != 0) {
    // A CLI that died at once usually said why on stderr.
    auto stderr_text =
        ReadFile(executor_->TaskDir(id) + "/" + kAgentStderrFile);
    if (stderr_text && !stderr_text->empty()) {
      std::string last = *stderr_text;
      while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) {
        last.pop_back();
      }
      last = last.substr(
          last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
      if (last.size() > 200)
        last = last.substr(0, 200) + "...";
      verdict_exit.verdict = TaskStatus::kFailed;
      verdict_exit.verdict_detail =
          exit.exit_code
              ? fmt::format("exit code: {}; stderr: {}", *exit.exit_code, last)
              : fmt::format("signal: {}; stderr: {}",
                            SignalName(exit.signal.value_or(0)), last);
      if (std::string why =
              worker ? worker->adapter().ExplainExit(*stderr_text) : "";
          !why.empty()) {
        verdict_exit.verdict_detail =
            fmt::format("{} (exit code: {})", why, exit.exit_code.value_or(-1));
      }
    }
  }
  // The CLI's own stream and stderr are kept beside the output: masked
  // like it once read to their end (doc/redaction.md).
  if (task->spec.redact) {
    std::string dir = executor_->TaskDir(id);
    for (const char* name : {kAgentStreamFile, kAgentStderrFile})
      RedactFinishedFile(dir + "/" + name);
  }
  if (registry_->WillRetry(id, verdict_exit))
    KeepAttemptApart(id, task->attempts.size() + 1);
  workers_.erase(id);
  next_->OnTaskExited(id, verdict_exit);
}

// The next attempt's CLI writes a stream of its own: this one's moves to
// stream.<n>.jsonl (stderr to stderr.<n>.log), so a worker (or a replay
// after a restart) reads one CLI process's lines, from their start.
void AgentRuntime::KeepAttemptApart(const TaskId& id, size_t attempt) {
  std::string dir = executor_->TaskDir(id);
  for (auto [name, kept] : {std::pair(std::string(kAgentStreamFile),
                                      fmt::format("stream.{}.jsonl", attempt)),
                            std::pair(std::string(kAgentStderrFile),
                                      fmt::format("stderr.{}.log", attempt))}) {
    if (::rename((dir + "/" + name).c_str(), (dir + "/" + kept).c_str()) != 0 &&
        errno != ENOENT) {
      BATON_LOG_WARN("{}: keeping {} of attempt {}: {}", id.ToString(), name,
                     attempt, std::strerror(errno));
    }
  }
}

namespace {

// Questions, messages and events belong to agent tasks only.
Status RequireAgent(const TaskRecord& task, std::string_view what) {
  if (task.spec.agent)
    return {};
  return MakeError(ErrorCode::kNotAgentTask,
                   fmt::format("{} is a shell task: only agent tasks "
                               "(delegate) take {} (its output: baton output "
                               "{})",
                               task.id.ToString(), what, task.id.ToString()));
}

}  // namespace

Result<SendReply> AgentRuntime::Send(const TaskRecord& task,
                                     const std::string& message,
                                     SendMode mode) {
  if (auto agent = RequireAgent(task, "messages"); !agent)
    return std::unexpected(agent.error());
  AgentWorker* worker = Find(task.id);
  if (!worker) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is {}, not a running agent; messages go "
                    "to running agent tasks",
                    task.id.ToString(), TaskStatusName(task.status)));
  }
  if (message.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "empty message");
  }
  auto sent = worker->Send(message, mode);
  if (!sent)
    return std::unexpected(sent.error());
  return SendReply{task.id.ToString(), std::move(sent->id),
                   std::move(sent->delivery)};
}

// A task without a worker ended: nothing queued goes in any more. Its
// events still tell a message delivered (or withdrawn) before the end.
Error AgentRuntime::RefuseChangeAfterEnd(const TaskRecord& task,
                                         const QueuedRequest& request) const {
  std::string id = request.replace.empty() ? request.withdraw : request.replace;
  std::string ended =
      fmt::format("{} is {}, not a running agent", task.id.ToString(),
                  TaskStatusName(task.status));
  if (id.empty())
    return {ErrorCode::kInvalidArgument, ended + ": no message is queued"};
  MessageLedger messages;
  for (const Json& event :
       ReadAgentEvents(executor_->TaskDir(task.id) + "/" + kAgentEventsFile)) {
    messages.Apply(event);
  }
  if (auto settled = messages.settled.find(id);
      settled != messages.settled.end()) {
    return RefuseMessageChange(task.id.ToString(), id, &settled->second, {});
  }
  for (const auto& [seq, queued] : messages.queued) {
    if (queued.id == id) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("{}: message {} was never delivered (the task "
                          "ended first); nothing goes in any more",
                          ended, id)};
    }
  }
  return RefuseMessageChange(task.id.ToString(), id, nullptr, {});
}

Result<QueuedReply> AgentRuntime::ChangeQueued(const TaskRecord& task,
                                               const QueuedRequest& request) {
  if (auto agent = RequireAgent(task, "messages"); !agent)
    return std::unexpected(agent.error());
  if (!request.replace.empty() && !request.withdraw.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "give either a message id to replace or one to "
                     "withdraw, not both");
  }
  if (!request.replace.empty() && request.message.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("give the new text of {} (the message)", request.replace));
  }
  if (request.replace.empty() && !request.message.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a text replaces a queued message: name it (its id, "
                     "e.g. m-3)");
  }
  AgentWorker* worker = Find(task.id);
  if (!worker)
    return std::unexpected(RefuseChangeAfterEnd(task, request));
  QueuedReply reply{.task = task.id.ToString()};
  if (!request.replace.empty() || !request.withdraw.empty()) {
    reply.changed =
        request.replace.empty() ? request.withdraw : request.replace;
    std::optional<std::string> text;
    if (!request.replace.empty())
      text = request.message;
    if (auto changed = worker->ChangeQueued(reply.changed, std::move(text));
        !changed) {
      return std::unexpected(changed.error());
    }
  }
  reply.queued = worker->Queued();
  return reply;
}

Result<Json> AgentRuntime::Answer(const TaskRecord& task,
                                  const std::vector<std::string>& answers) {
  if (auto agent = RequireAgent(task, "answers"); !agent)
    return std::unexpected(agent.error());
  AgentWorker* worker = Find(task.id);
  if (!worker) {
    return MakeError(
        ErrorCode::kAlreadyExists,
        fmt::format("{} is {}: no open question to answer", task.id.ToString(),
                    TaskStatusName(task.status)));
  }
  Json answered;
  if (auto ok = worker->Answer(answers, &answered); !ok) {
    return std::unexpected(ok.error());
  }
  return answered;
}

bool AgentRuntime::Interrupt(const TaskId& id) {
  AgentWorker* worker = Find(id);
  return worker && worker->Stop();
}

Result<Json> AgentRuntime::Events(const TaskRecord& task, int64_t after) const {
  if (auto agent = RequireAgent(task, "events"); !agent)
    return std::unexpected(agent.error());
  Json events = Json::array();
  for (Json& event :
       ReadAgentEvents(executor_->TaskDir(task.id) + "/" + kAgentEventsFile)) {
    if (IntAt(event, "seq") > after)
      events.push_back(std::move(event));
  }
  return events;
}

std::vector<OpenQuestion> AgentRuntime::OpenQuestions(const TaskId& id) const {
  std::vector<OpenQuestion> questions;
  auto it = workers_.find(id);
  if (it == workers_.end())
    return questions;
  for (const Json& event : it->second->open_questions()) {
    OpenQuestion question;
    if (auto ok = DecodeValue(event, question, {}, "question"); !ok) {
      BATON_LOG_ERROR("{}: an open question does not decode: {}", id.ToString(),
                      ok.error().message);
      continue;
    }
    questions.push_back(std::move(question));
  }
  return questions;
}

}  // namespace baton
