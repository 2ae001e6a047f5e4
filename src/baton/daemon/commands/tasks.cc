// Handlers of the requests about tasks and about batond itself: hello,
// get, list, read, kill, attach, notices, daemon_status, shutdown, watch. Each
// takes its typed request (ipc/messages.h), calls the registry, and
// answers through `reply`.
#include <fmt/format.h>
#include <unistd.h>

#include "baton/core/sessions.h"
#include "baton/core/task_filter.h"
#include "baton/daemon/daemon.h"
#include "baton/util/detached_process.h"
#include "baton/util/duration.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"
#include "baton/util/version.h"

namespace baton {

TaskView Daemon::View(TaskRecord task) {
  auto size = router_->OutputSize(task);
  // A running task at its output cap: how much was dropped so far.
  if (size && !task.spec.agent && !IsTerminal(task.status) &&
      task.spec.max_output > 0 &&
      *size == static_cast<uint64_t>(task.spec.max_output)) {
    if (auto raw = FileSize(task.output_path); raw && *raw > *size)
      task.output_dropped = static_cast<int64_t>(*raw - *size);
  }
  // Of a live task's log, only what the redactor decided is shown
  // (doc/redaction.md), as of its last pass.
  if (size && !IsTerminal(task.status)) {
    if (auto readable = output_redactor_->Readable(task.id))
      size = std::min(*size, *readable);
  }
  // The agent runtime decides which questions are open, for every client.
  std::vector<OpenQuestion> questions;
  if (task.spec.agent && agents_)
    questions = agents_->OpenQuestions(task.id);
  return {std::move(task), size ? std::optional(*size) : std::nullopt,
          std::move(questions)};
}

bool Daemon::EndSurvivesACrash(const TaskRecord& task) const {
  return task.spec.checks.empty() && !task.spec.agent &&
         executor_->HoldsExitRecord(task);
}

void Daemon::Handle(Connection&, const HelloRequest&, Session session,
                    Reply reply) {
  reply(HelloReply{.daemon_pid = getpid(),
                   .protocol = kProtocolVersion,
                   .home = options_.paths.home,
                   .session = session});
}

void Daemon::Handle(Connection&, const GetRequest& request, Session session,
                    Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  if (!IsTerminal(task->status))
    output_redactor_->CatchUp(task->id);
  TaskView view = View(std::move(*task));
  // What was masked in its output (doc/redaction.md); a file read, as
  // below.
  view.redactions = ReadRedactions(fmt::format(
      "{}/{}", router_->TaskDir(view.task.id), kTaskRedactionsFile));
  // What holds it to its limits, as the supervisor wrote it when it
  // started (doc/limits.md); not for a listing: a file read per task.
  if (view.task.spec.limits.any()) {
    auto said = ReadFile(
        fmt::format("{}/{}", router_->TaskDir(view.task.id), kTaskLimitsFile));
    auto parsed = said ? ParseJson(*said) : std::unexpected(said.error());
    LimitsHeld held;
    if (parsed && DecodeValue(parsed->value, held, {}, kTaskLimitsFile))
      view.limits_held_by = std::move(held.held_by);
  }
  reply(TaskReply{std::move(view)});
}

// A person's view (ListView): the live tasks that match, and a page of the
// ended ones that batond's store reads by itself, so that a board's load
// costs the same with a history of a hundred tasks or of a hundred thousand.
namespace {

template <class AsView>
Result<ListReply> ViewOf(TaskRegistry& registry, const ListView& view,
                         const std::string& session, const AsView& as_view) {
  std::optional<std::string> owner;
  if (view.unowned)
    owner = "";
  else if (!view.owner.empty())
    owner = view.owner;
  TaskFilter filter{.owner = std::move(owner),
                    .kind = view.kind,
                    .status = view.status,
                    .label = view.label,
                    .search = AsciiLower(view.search)};
  ListReply list;
  ListViewCounts& counts = list.counts.emplace();
  for (auto& task : registry.ListLive(session)) {
    switch (task.status) {
      case TaskStatus::kWaiting:
        ++counts.waiting;
        break;
      case TaskStatus::kQueued:
        ++counts.queued;
        break;
      default:
        ++counts.running;
        break;
    }
    if (filter.Matches(task))
      list.tasks.push_back(as_view(std::move(task)));
  }
  auto page = registry.PageEnded(
      session, EndedQuery{.filter = std::move(filter),
                          .offset = static_cast<size_t>(view.ended_offset),
                          .limit = static_cast<size_t>(view.ended_limit),
                          .counted_since_ms = view.ended_since_ms});
  if (!page)
    return std::unexpected(page.error());
  for (auto& task : page->tasks)
    list.ended.push_back(as_view(std::move(task)));
  list.ended_total = static_cast<int64_t>(page->total);
  auto since = [&](std::string_view status) {
    auto it = page->ended_since.find(std::string(status));
    return it == page->ended_since.end() ? 0 : static_cast<int64_t>(it->second);
  };
  counts.completed = since("completed");
  counts.failed = since("failed");
  counts.killed = since("killed");
  counts.interrupted = since("interrupted");
  list.labels = std::move(page->labels);
  list.owners = std::move(page->owners);
  return list;
}

}  // namespace

void Daemon::Handle(Connection&, const ListRequest& request, Session session,
                    Reply reply) {
  if (request.view) {
    auto list =
        ViewOf(*registry_, request.filter, session,
               [this](TaskRecord task) { return View(std::move(task)); });
    if (!list)
      return reply(std::unexpected(list.error()));
    return reply(std::move(*list));
  }
  size_t hidden = 0;
  auto tasks = registry_->List(session, request.all, &hidden);
  if (!tasks)
    return reply(std::unexpected(tasks.error()));
  ListReply list;
  list.tasks.reserve(tasks->size());
  for (auto& task : *tasks)
    list.tasks.push_back(View(std::move(task)));
  list.hidden = static_cast<int64_t>(hidden);
  reply(list);
}

void Daemon::Handle(Connection&, const ReadRequest& request, Session session,
                    Reply reply) {
  auto range = registry_->Read(request.task, session, request.mode,
                               static_cast<uint64_t>(request.offset));
  if (!range)
    return reply(std::unexpected(range.error()));
  reply(ReadReply{.task = View(std::move(range->task)),
                  .path = range->path,
                  .from = static_cast<int64_t>(range->from),
                  .to = static_cast<int64_t>(range->to),
                  .at_end = range->at_end});
}

void Daemon::Handle(Connection& connection, const KillRequest& request,
                    Session session, Reply reply) {
  // All or nothing: a bad id refuses the whole request before any kill.
  for (const auto& id : request.tasks) {
    if (auto task = registry_->Get(id, session); !task)
      return reply(std::unexpected(task.error()));
  }
  KillReply results;
  for (const auto& id : request.tasks) {
    // An agent is asked to end its turn first; the signals wait a moment
    // for it to exit by itself.
    auto parsed = TaskId::Parse(id);
    bool interrupted = parsed && agents_->Interrupt(*parsed);
    auto outcome = registry_->Kill(
        id, session, request.reason, request.grace,
        interrupted ? kAgentStopWindow : std::chrono::milliseconds(0));
    if (!outcome)
      return reply(std::unexpected(outcome.error()));
    results.results.push_back({id, *outcome});
    // A kill that changed nothing (the task had ended) is no action.
    if (*outcome == KillOutcome::kRequested) {
      AuditRecord audit = AuditOf(connection, session, "kill", id);
      audit.detail =
          fmt::format("SIGTERM, then SIGKILL after {}",
                      FormatDuration(request.grace.value_or(options_.grace)));
      audit.reason = request.reason;
      registry_->audit().Record(std::move(audit), /*with_batch=*/true);
    }
  }
  reply(results);
}

void Daemon::Handle(Connection& connection, const AttachRequest&,
                    Session session, Reply reply) {
  if (session.empty()) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "attach needs a session name (BATON_SESSION)"));
  }
  if (IsPersonSession(session)) {
    return reply(MakeError(
        ErrorCode::kInvalidArgument,
        "session \"*\" is a person's (it sees every session's tasks) and "
        "cannot attach: a lease would stop no task of its own; use a name "
        "of your own (BATON_SESSION)"));
  }
  if (!connection.attached_session.empty() &&
      connection.attached_session != session) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "this connection is attached to another session"));
  }
  if (connection.attached_session.empty()) {
    connection.attached_session = session;
    registry_->Attach(session);
  }
  reply(AttachReply{session, options_.lease.count()});
}

void Daemon::Handle(Connection&, const NoticesRequest&, Session, Reply reply) {
  reply(EmptyReply{});  // The reply itself carries the notices.
}

void Daemon::Handle(Connection& connection, const WatchRequest& request,
                    Session, Reply reply) {
  if (request.after < changes_)
    return reply(WatchReply{.changes = changes_, .daemon_pid = getpid()});
  watches_.emplace_back(connection.id, std::move(reply));
}

void Daemon::Handle(Connection&, const DaemonStatusRequest&, Session,
                    Reply reply) {
  reply(DaemonStatusReply{
      .daemon_pid = getpid(),
      .supervisor_pid = executor_->supervisor_pid(),
      .protocol = kProtocolVersion,
      .home = options_.paths.home,
      .socket = options_.paths.daemon_socket(),
      .live_tasks = static_cast<int64_t>(registry_->live_count()),
      .connections = static_cast<int64_t>(connections_.size()),
      .uptime_ms = clock_.WallNowMillis() - started_ms_,
      .version = kBatonVersion,
      .executable = SelfExecutable()});
}

void Daemon::Handle(Connection& connection, const ShutdownRequest& request,
                    Session session, Reply reply) {
  ShutdownReply stopping{.daemon_pid = getpid()};
  // Kept whatever the commit does: batond stops either way.
  AuditRecord audit = AuditOf(connection, session, "shutdown");
  audit.detail = request.kill_tasks ? "batond stops and kills every live task"
                                    : "batond stops; tasks keep running";
  registry_->audit().Record(std::move(audit), /*with_batch=*/false);
  if (!request.kill_tasks) {
    stopping.live_tasks = static_cast<int64_t>(registry_->live_count());
    reply(stopping);
    loop_.Stop();
    return;
  }
  std::vector<TaskId> ids = registry_->KillAll("daemon stopped");
  if (ids.empty()) {
    reply(stopping);
    loop_.Stop();
    return;
  }
  BATON_LOG_INFO("stopping after killing {} tasks", ids.size());
  stopping.killed = static_cast<int64_t>(ids.size());
  for (const TaskId& id : ids) {
    AuditRecord killed = AuditOf(connection, session, "kill", id.ToString());
    killed.detail = "SIGTERM, then SIGKILL: batond stops";
    killed.reason = "daemon stopped";
    registry_->audit().Record(std::move(killed), /*with_batch=*/false);
  }
  registry_->WaitForAll(ids, [this, reply, stopping] {
    reply(stopping);
    loop_.Stop();
  });
}

}  // namespace baton
