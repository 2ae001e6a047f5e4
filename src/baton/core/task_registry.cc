#include "baton/core/task_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "baton/core/sessions.h"
#include "baton/util/log.h"
#include "baton/util/terminal_text.h"

namespace baton {
namespace {

Error NotFound(std::string_view id) {
  return Error{ErrorCode::kNotFound,
               fmt::format("no task {}; 'baton ls --all' lists the tasks "
                           "you can see",
                           id)};
}

bool ValidEnvName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

std::string NoticeText(const TaskRecord& task) {
  std::string text =
      fmt::format("{} {}", task.id.ToString(), TaskStatusName(task.status));
  if (!task.detail.empty())
    text += fmt::format(" ({})", DetailBesideStatus(task));
  else if (task.status == TaskStatus::kWaiting)
    text += " (asks a question)";
  if (!task.spec.label.empty())
    text += fmt::format(" — {}", task.spec.label);
  return text;
}

TaskRegistry::TaskRegistry(TaskStore* store, Executor* executor, Timers* timers,
                           const Clock* clock, Options options)
    : store_(store),
      executor_(executor),
      timers_(timers),
      clock_(clock),
      options_(options),
      waits_(timers, clock,
             [this](const WaitBook::Waiter& waiter, TaskRecord* ended,
                    WaitResult& result) { AnswerWait(waiter, ended, result); }),
      budgets_(store),
      audit_(store, clock),
      scheduler_(this, store, timers, clock) {}

TaskRegistry::~TaskRegistry() {
  for (const auto& [session, state] : sessions_) {
    if (state.lease_timer)
      timers_->Cancel(state.lease_timer);
  }
}

Status TaskRegistry::Recover() {
  auto live = store_->LoadLiveTasks();
  if (!live)
    return std::unexpected(live.error());
  for (auto& task : *live)
    live_[task.id] = task;
  auto unnoticed = store_->LoadUnnoticedTasks();
  if (!unnoticed)
    return std::unexpected(unnoticed.error());
  for (auto& task : *unnoticed)
    unnoticed_[task.spec.owner].push_back(task.id);
  // Questions asked before the restart and not yet told are noticed too.
  for (const auto& [id, task] : live_) {
    if (task.status == TaskStatus::kWaiting && !task.question_told &&
        !task.spec.owner.empty()) {
      unnoticed_[task.spec.owner].push_back(id);
    }
  }
  auto leased = store_->LoadLeasedSessions();
  if (!leased)
    return std::unexpected(leased.error());
  for (auto& session : *leased) {
    leased_sessions_.insert(session);
    // Nobody is attached yet: a session whose client does not come back
    // within the lease loses its tasks, as if it had just detached.
    bool has_live = std::any_of(live_.begin(), live_.end(), [&](auto& entry) {
      return entry.second.spec.owner == session;
    });
    if (has_live)
      StartLease(session);
  }
  if (auto scheduled = scheduler_.Recover(); !scheduled)
    return scheduled;
  if (auto budgets = budgets_.Recover(); !budgets)
    return budgets;
  BATON_LOG_INFO("recovered {} live tasks", live_.size());
  // Held tasks never reached the executor: the next Commit starts them.
  std::erase_if(*live, [](const TaskRecord& task) { return task.held; });
  executor_->Adopt(*live);
  return {};
}

Status TaskRegistry::Validate(const TaskSpec& spec) const {
  auto invalid = [](std::string message) {
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  };
  if (spec.shell_command) {
    if (spec.shell_command->find_first_not_of(" \t\n") == std::string::npos) {
      return invalid(
          "empty command; give the command to run, e.g. baton run -- make");
    }
    if (spec.shell_command->find('\0') != std::string::npos) {
      return invalid("the command contains a NUL byte; remove it");
    }
  } else if (spec.argv.empty() || spec.argv[0].empty()) {
    return invalid(
        "empty command; give the command to run, e.g. baton run -- make");
  }
  if (spec.cwd.empty() || spec.cwd[0] != '/') {
    return invalid(fmt::format(
        "working directory '{}' is not an absolute path; give a full path",
        spec.cwd));
  }
  for (const auto& [name, value] : spec.env_overrides) {
    if (!ValidEnvName(name)) {
      return invalid(fmt::format(
          "invalid environment variable name '{}'; use letters, digits and "
          "'_', e.g. --env MODE=fast",
          name));
    }
  }
  if (spec.label.size() > kMaxLabelBytes) {
    return invalid(fmt::format("label is {} bytes long; keep it under {}",
                               spec.label.size(), kMaxLabelBytes));
  }
  // A label is shown on terminals and pages: one line of plain text.
  if (size_t at = FindControlCharacter(spec.label); at != std::string::npos) {
    return invalid(fmt::format(
        "label has a control character ({}) at byte {}; a label is one line "
        "of plain text, e.g. --label 'build docs'",
        TerminalSafe(spec.label.substr(at, spec.label[at] == '\xc2' ? 2 : 1)),
        at));
  }
  if (spec.timeout && spec.timeout->count() <= 0) {
    return invalid("timeout must be positive, e.g. --timeout 30s");
  }
  if (spec.retry.retries < 0 || spec.retry.retries > kMaxRetries) {
    return invalid(fmt::format("retries must be 0 to {}, not {}", kMaxRetries,
                               spec.retry.retries));
  }
  if (spec.retry.delay_ms < 0 || spec.retry.delay_ms > kMaxRetryBackoffMs) {
    return invalid("the retry delay must be 0 to 10 minutes, e.g. 5 s");
  }
  if (auto accepted = executor_->Accepts(spec); !accepted)
    return accepted;
  // An agent's worker writes its brief again to the next attempt's CLI.
  if (spec.retry.retries > 0 && spec.stdin_pipe && !spec.agent) {
    return invalid(
        "a task with a stdin pipe cannot be retried (what was written to "
        "the pipe is gone); give its input as a file instead");
  }
  return {};
}

void TaskRegistry::Save(const TaskRecord& task, bool undoable) {
  if (auto saved = store_->PutTask(task); !saved) {
    BATON_LOG_ERROR("storing {}: {}", task.id.ToString(),
                    saved.error().message);
  }
  if (!undoable)
    saved_in_batch_.insert(task.id);
  if (!IsTerminal(task.status))
    live_[task.id] = task;
}

void TaskRegistry::Start(TaskSpec spec, StartCallback done) {
  if (auto valid = Validate(spec); !valid) {
    done(std::unexpected(valid.error()));
    return;
  }
  if (auto valid = scheduler_.Prepare(spec.schedule, spec.owner); !valid) {
    done(std::unexpected(valid.error()));
    return;
  }
  // Its queue's limits where it gives none (a remote job has its
  // executor's).
  if (const ResourceLimits* queue_limits =
          scheduler_.QueueLimits(spec.schedule.queue);
      queue_limits && !spec.remote) {
    const ResourceLimits& defaults = *queue_limits;
    ResourceLimits& limits = spec.limits;
    for (auto [own, fallback] :
         {std::pair(&limits.memory_bytes, defaults.memory_bytes),
          std::pair(&limits.cpu_millis, defaults.cpu_millis),
          std::pair(&limits.pids, defaults.pids)}) {
      if (*own == 0)
        *own = fallback;
    }
  }
  auto number = store_->NextTaskNumber(spec.kind);
  if (!number) {
    done(std::unexpected(number.error()));
    return;
  }
  TaskRecord task;
  task.id = TaskId{spec.kind, *number};
  task.spec = std::move(spec);
  task.status = TaskStatus::kQueued;
  task.created_ms = clock_->WallNowMillis();
  task.output_path = executor_->OutputPath(task.id);
  if (!on_create_)
    return Admit(std::move(task), std::move(done));
  on_create_(std::move(task),
             [this, done = std::move(done)](Result<TaskRecord> made) mutable {
               if (!made)
                 return done(std::unexpected(made.error()));
               Admit(std::move(*made), std::move(done));
             });
}

void TaskRegistry::Admit(TaskRecord task, StartCallback done) {
  bool held = scheduler_.HoldIfNeeded(task);
  Save(task, /*undoable=*/true);
  undo_.emplace_back(Undo::Kind::kCreated, task.id);
  if (!held) {
    // Not queued: dispatched with its creation (StartTask counts the rest).
    metrics_.TaskStarted(task.spec.kind, /*first_attempt=*/true,
                         clock_->WallNowMillis() - task.created_ms);
    effects_.push_back(
        {.kind = Effect::Kind::kStart, .task = task, .undoable = true});
    // The environment is in the spawn request now: the live record need
    // not carry it through every later copy and save, unless a retry may
    // start the task again.
    if (auto it = live_.find(task.id);
        it != live_.end() && !KeepsEnvironment(it->second)) {
      it->second.spec.base_env = {};
    }
  }
  // Answered now, as queued: the record is committed before the answer and
  // the spawn request leave (Commit), so the id is collectable whatever
  // happens next. Waiting for the spawn would cost every caller a round
  // trip through the supervisor; a spawn that fails after the preflight
  // ends the task as failed, with a notice.
  done(task);
}

void TaskRegistry::OnTaskSpawned(const TaskId& id, int64_t pid,
                                 int64_t started_ms) {
  auto it = live_.find(id);
  if (it == live_.end())
    return;
  TaskRecord& task = it->second;
  task.pid = pid;
  task.started_ms = started_ms;
  if (task.status == TaskStatus::kStopping) {
    // Killed while the spawn was in flight: the kill as it was asked (its
    // grace; after a batond restart, the default).
    auto asked = spawn_kills_.extract(id);
    TaskRecord target;
    target.id = id;
    effects_.push_back(
        {.kind = Effect::Kind::kKill,
         .task = std::move(target),
         .grace = asked ? asked.mapped().first : options_.default_grace,
         .stop_delay =
             asked ? asked.mapped().second : std::chrono::milliseconds(0)});
  } else {
    task.status = TaskStatus::kRunning;
  }
  Save(TaskRecord(task));
}

void TaskRegistry::OnTaskPlaced(const TaskId& id, const Placement& job) {
  auto it = live_.find(id);
  if (it == live_.end())
    return;
  TaskRecord& task = it->second;
  if (task.placement == job)
    return;
  task.placement = job;
  if (task.status != TaskStatus::kStopping)
    task.detail = PlacementText(job);
  Save(TaskRecord(task));
}

void TaskRegistry::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  auto node = live_.extract(id);
  if (!node)
    return;
  TaskRecord task = std::move(node.mapped());
  task.status = TaskStatus::kFailed;
  task.detail = fmt::format("spawn failed: {}", error.message);
  task.ended_ms = clock_->WallNowMillis();
  Finish(std::move(task));
}

void TaskRegistry::ApplyEnd(TaskRecord& task, const ExitInfo& exit) const {
  // A task that ends while it is being stopped was killed, however it
  // went: our signal got there before the executor saw it sent, the task
  // ended by itself once asked to (an agent ending its turn: a kill may
  // hold its signals back for that), or it ended just before the signal.
  // Its exit code and signal stay on the record.
  bool stopped = !task.kill_reason.empty() &&
                 exit.cause == ExitCause::kNatural &&
                 task.status == TaskStatus::kStopping;
  if (stopped && task.killed_at_limit && exit.work_done_at_stop &&
      exit.exit_code == 0) {
    // batond's own stop (a budget) came as the agent's work ended: nothing
    // was stopped, and `killed` would hide a finished job.
    std::string reason = std::exchange(task.kill_reason, "");
    task.killed_at_limit = false;
    ApplyExit(exit, task);
    task.detail +=
        (task.detail.empty() ? "" : "; ") + reason + " as its work ended";
  } else if (stopped) {
    ExitInfo killed = exit;
    killed.cause = ExitCause::kKilled;
    ApplyExit(killed, task);
  } else {
    ApplyExit(exit, task);
  }
  if (task.ended_ms == 0)
    task.ended_ms = clock_->WallNowMillis();
}

bool TaskRegistry::WillRetry(const TaskId& id, const ExitInfo& exit) const {
  auto it = live_.find(id);
  if (it == live_.end())
    return false;
  TaskRecord ended = it->second;
  ApplyEnd(ended, exit);
  return Scheduler::RetriesAfter(ended, exit);
}

void TaskRegistry::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  auto node = live_.extract(id);
  if (!node)
    return;
  TaskRecord task = std::move(node.mapped());
  ApplyEnd(task, exit);
  if (Scheduler::RetriesAfter(task, exit)) {
    // The failed attempt is recorded; the scheduler holds the task until
    // its retry's time.
    Attempt attempt;
    attempt.started_ms = task.started_ms;
    attempt.ended_ms = task.ended_ms;
    attempt.exit_code = task.exit_code;
    attempt.signal = task.signal;
    attempt.detail = task.detail;
    attempt.output_from =
        task.attempts.empty() ? 0 : task.attempts.back().output_to;
    attempt.output_to = attempt.output_from;
    if (auto size = executor_->OutputSize(task))
      attempt.output_to =
          std::max(attempt.output_from, static_cast<int64_t>(*size));
    task.attempts.push_back(std::move(attempt));
    scheduler_.HoldForRetry(std::move(task));
    return;
  }
  if (!task.attempts.empty()) {
    task.detail += fmt::format("; attempt {} of {}", task.attempts.size() + 1,
                               task.spec.retry.retries + 1);
  }
  Finish(std::move(task));
}

void TaskRegistry::Finish(TaskRecord task) {
  BATON_CHECK(IsTerminal(task.status));
  scheduler_.Remove(task);
  spawn_kills_.erase(task.id);
  task.held = false;
  task.spec.base_env = {};
  live_.erase(task.id);
  Save(task);
  metrics_.TaskEnded(task.spec.kind, task.status);
  recent_ended_.push_back(
      {task.id.ToString(), task.spec.cwd, task.started_ms, task.ended_ms});
  if (recent_ended_.size() > kRecentEnded)
    recent_ended_.pop_front();
  for (auto& [session, count] : terminal_counts_) {
    if (SeesOwner(session, task.spec.owner))
      ++count;
  }
  if (!task.spec.owner.empty() && !task.end_seen && !task.notice_delivered) {
    unnoticed_[task.spec.owner].push_back(task.id);
  }
  waits_.TaskChanged(task.id, &task);
}

Result<TaskRecord> TaskRegistry::Lookup(const TaskId& id) {
  if (auto it = live_.find(id); it != live_.end())
    return it->second;
  auto stored = store_->GetTask(id);
  if (!stored)
    return std::unexpected(stored.error());
  if (!*stored)
    return std::unexpected(NotFound(id.ToString()));
  return **stored;
}

Result<TaskRecord> TaskRegistry::Resolve(std::string_view id_text,
                                         const std::string& session) {
  auto id = TaskId::Parse(id_text);
  if (!id)
    return std::unexpected(id.error());
  auto task = Lookup(*id);
  if (!task)
    return task;
  if (auto allowed = CheckOwner(*task, id_text, session); !allowed)
    return std::unexpected(allowed.error());
  return task;
}

Status TaskRegistry::CheckOwner(const TaskRecord& task,
                                std::string_view id_text,
                                const std::string& session) {
  if (!SeesOwner(session, task.spec.owner)) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        fmt::format("task {} belongs to another session; use the session "
                    "that started it (CLI: --session NAME or BATON_SESSION)",
                    id_text));
  }
  return {};
}

void TaskRegistry::MarkEndSeen(TaskRecord& task, const std::string& session) {
  if (!IsTerminal(task.status) || task.end_seen || task.spec.owner.empty() ||
      task.spec.owner != session) {
    return;
  }
  task.end_seen = true;
  Save(task, /*undoable=*/true);
  undo_.emplace_back(Undo::Kind::kEndSeen, task.id);
  auto it = unnoticed_.find(session);
  if (it != unnoticed_.end())
    std::erase(it->second, task.id);
}

void TaskRegistry::MarkQuestionTold(TaskRecord& task,
                                    const std::string& session) {
  if (task.status != TaskStatus::kWaiting || task.question_told ||
      task.spec.owner.empty() || task.spec.owner != session) {
    return;
  }
  task.question_told = true;
  Save(task, /*undoable=*/true);
  undo_.emplace_back(Undo::Kind::kQuestionTold, task.id);
}

bool TaskRegistry::ToldTo(const TaskRecord& task, const std::string& session) {
  if (task.spec.owner.empty() || task.spec.owner != session)
    return false;
  if (IsTerminal(task.status))
    return task.end_seen || task.notice_delivered;
  return task.status == TaskStatus::kWaiting && task.question_told;
}

Result<TaskRecord> TaskRegistry::Get(std::string_view id,
                                     const std::string& session) {
  auto task = Resolve(id, session);
  if (task)
    MarkSeen(*task, session);
  return task;
}

Result<std::vector<TaskRecord>> TaskRegistry::List(const std::string& session,
                                                   bool all, size_t* hidden) {
  std::vector<TaskRecord> tasks = ListLive(session);
  ListQuery query;
  query.owner = session;
  query.include_live = false;
  query.limit = all ? 0 : options_.recent_terminal;
  auto terminal = store_->ListTasks(query);
  if (!terminal)
    return std::unexpected(terminal.error());
  size_t shown_terminal = terminal->size();
  tasks.insert(tasks.end(), std::make_move_iterator(terminal->begin()),
               std::make_move_iterator(terminal->end()));
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.created_ms, a.id) < std::tie(b.created_ms, b.id);
  });
  if (hidden) {
    *hidden = 0;
    if (!all && shown_terminal == options_.recent_terminal) {
      // Counting a long history walks an index; do it once per session and
      // keep the count up to date as tasks end.
      auto count = terminal_counts_.find(session);
      if (count == terminal_counts_.end()) {
        if (auto total = store_->CountTasks(query)) {
          count = terminal_counts_.emplace(session, *total).first;
        }
      }
      if (count != terminal_counts_.end() && count->second > shown_terminal) {
        *hidden = count->second - shown_terminal;
      }
    }
  }
  return tasks;
}

std::vector<TaskRecord> TaskRegistry::ListLive(
    const std::string& session) const {
  std::vector<TaskRecord> tasks;
  for (const auto& [id, task] : live_) {
    if (SeesOwner(session, task.spec.owner))
      tasks.push_back(task);
  }
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.created_ms, a.id) < std::tie(b.created_ms, b.id);
  });
  return tasks;
}

Result<EndedPage> TaskRegistry::PageEnded(const std::string& session,
                                          EndedQuery query) {
  query.owner = session;
  return store_->PageEnded(query);
}

Result<OutputRange> TaskRegistry::Read(std::string_view id,
                                       const std::string& session,
                                       ReadMode mode, uint64_t offset) {
  auto task = Resolve(id, session);
  if (!task)
    return std::unexpected(task.error());
  auto size = executor_->OutputSize(*task);
  if (!size)
    return std::unexpected(size.error());
  // What may be shown of it (the redactor's bound); a cursor or offset
  // already past it stays where it is.
  uint64_t shown = *size;
  if (read_bound_ && !IsTerminal(task->status)) {
    if (auto bound = read_bound_(*task))
      shown = std::min(shown, *bound);
  }
  OutputRange range;
  range.path = task->output_path;
  std::optional<uint64_t> cursor;
  switch (mode) {
    case ReadMode::kAll:
      range.from = 0;
      break;
    case ReadMode::kOffset:
      range.from = std::min(offset, *size);
      break;
    case ReadMode::kNew: {
      auto stored = store_->GetCursor(task->id, session);
      if (!stored)
        return std::unexpected(stored.error());
      cursor = *stored;
      range.from = std::min(*cursor, *size);
      break;
    }
  }
  range.to = std::max(range.from, shown);
  if (cursor && range.to != *cursor) {
    if (auto set = store_->SetCursor(task->id, session, range.to); !set)
      return std::unexpected(set.error());
    undo_.emplace_back(Undo::Kind::kCursor, task->id, session);
  }
  range.at_end = IsTerminal(task->status);
  MarkSeen(*task, session);
  range.task = std::move(*task);
  return range;
}

std::vector<TaskRecord> TaskRegistry::TakeNotices(const std::string& session) {
  std::vector<TaskRecord> notices;
  if (session.empty())
    return notices;
  auto it = unnoticed_.find(session);
  if (it == unnoticed_.end())
    return notices;
  std::vector<TaskId> ids = std::move(it->second);
  unnoticed_.erase(it);
  for (const auto& id : ids) {
    auto task = Lookup(id);
    if (!task)
      continue;
    if (IsTerminal(task->status)) {
      if (task->end_seen || task->notice_delivered)
        continue;
      task->notice_delivered = true;
      Save(*task, /*undoable=*/true);
      undo_.emplace_back(Undo::Kind::kNoticeDelivered, task->id);
    } else if (task->status == TaskStatus::kWaiting && !task->question_told) {
      // An open question, noticed as an end is (once).
      MarkQuestionTold(*task, session);
    } else {
      continue;  // Answered or withdrawn meanwhile.
    }
    notices.push_back(std::move(*task));
  }
  return notices;
}

void TaskRegistry::SetWaiting(const TaskId& id, bool waiting) {
  auto it = live_.find(id);
  if (it == live_.end())
    return;
  TaskStatus from = waiting ? TaskStatus::kRunning : TaskStatus::kWaiting;
  if (it->second.status != from)
    return;
  it->second.status = waiting ? TaskStatus::kWaiting : TaskStatus::kRunning;
  // A new question is news to the owner, until told.
  it->second.question_told = false;
  Save(TaskRecord(it->second));
  if (waiting) {
    const std::string& owner = it->second.spec.owner;
    if (!owner.empty())
      unnoticed_[owner].push_back(id);
    waits_.TaskChanged(id, nullptr);
    return;
  }
  // Answered: it counts as running again for a wait --all still open.
  waits_.TaskRunsAgain(id);
}

void TaskRegistry::SetAgentSession(const TaskId& id,
                                   const std::string& session_id) {
  auto it = live_.find(id);
  if (it == live_.end() || it->second.agent_session == session_id)
    return;
  it->second.agent_session = session_id;
  Save(TaskRecord(it->second));
}

void TaskRegistry::SetUsage(const TaskId& id, const AgentUsage& usage) {
  auto it = live_.find(id);
  if (it == live_.end() || it->second.usage == usage)
    return;
  budgets_.UsageMoved(it->second.spec.owner,
                      it->second.usage.value_or(AgentUsage{}), usage);
  if (it->second.spec.agent) {
    metrics_.UsageMoved(it->second.spec.agent->profile,
                        it->second.usage.value_or(AgentUsage{}), usage);
  }
  it->second.usage = usage;
  Save(TaskRecord(it->second));
}

std::vector<std::string> TaskRegistry::OverlappingTasks(
    const TaskRecord& task) const {
  std::vector<std::string> ids;
  for (const auto& [id, other] : live_) {
    if (id != task.id && other.spec.cwd == task.spec.cwd) {
      ids.push_back(id.ToString());
    }
  }
  std::string self = task.id.ToString();
  for (const auto& span : recent_ended_) {
    if (span.id != self && span.cwd == task.spec.cwd &&
        span.ended_ms >= task.started_ms && span.started_ms != 0) {
      ids.push_back(span.id);
    }
  }
  return ids;
}

std::vector<TaskRecord> TaskRegistry::LiveTasks() const {
  std::vector<TaskRecord> tasks;
  for (const auto& [id, task] : live_)
    tasks.push_back(task);
  return tasks;
}

const TaskRecord* TaskRegistry::FindLive(const TaskId& id) const {
  auto it = live_.find(id);
  return it == live_.end() ? nullptr : &it->second;
}

}  // namespace baton
