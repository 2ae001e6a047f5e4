// The task object on the wire: a TaskView (the record, its output's size,
// its open questions) as TaskWire and back, the brief form a wait gives of
// tasks still running, and a wait's reply. Split from codec.cc (requests,
// replies, errors).
#include <fmt/format.h>

#include "baton/ipc/codec.h"
#include "baton/util/clock.h"
#include "baton/util/secret_shapes.h"

namespace baton {
namespace {

std::optional<std::string> TimeOrNull(int64_t wall_ms) {
  if (wall_ms == 0)
    return std::nullopt;
  return FormatIsoTime(wall_ms);
}

std::optional<std::string> TextOrNull(const std::string& text) {
  if (text.empty())
    return std::nullopt;
  return text;
}

Result<int64_t> TimeFromWire(const std::optional<std::string>& text,
                             std::string_view name) {
  if (!text)
    return 0;
  auto ms = ParseIsoTime(*text);
  if (!ms) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("task.{} '{}' is not an ISO 8601 UTC time", name, *text));
  }
  return *ms;
}

// A starting task (IsStarting, core/task.h) is told `running`, detail
// `starting`: `run`'s reply, sent after the spawn left batond, is then true
// without waiting for the spawn.
std::string_view WireStatus(const TaskRecord& task) {
  return TaskStatusName(ToldStatus(task));
}

std::string WireDetail(const TaskRecord& task) {
  std::string detail = MaskSecrets(task.detail);
  if (!IsStarting(task))
    return detail;
  return detail.empty() ? "starting" : "starting; " + detail;
}

}  // namespace

// What a client sees of a task carries no secret of a well-known shape,
// wherever it was written: the command, its argv, the label, the detail and
// the kill reason, environment values (those whose name looks secret are
// "***" whole), an agent's brief, the checks, an agent's questions
// (doc/security.md, "Secrets in listings"). The task runs with what was given.
namespace {

void MaskQuestions(std::vector<OpenQuestion>& questions) {
  for (OpenQuestion& question : questions) {
    for (QuestionItem& item : question.items) {
      item.header = MaskSecrets(item.header);
      item.prompt = MaskSecrets(item.prompt);
      for (QuestionOption& option : item.options) {
        option.label = MaskSecrets(option.label);
        option.description = MaskSecrets(option.description);
      }
    }
  }
}

}  // namespace

TaskWire ToWire(const TaskView& view) {
  const TaskRecord& task = view.task;
  TaskWire wire;
  wire.id = task.id.ToString();
  wire.kind = TaskKindName(task.id.kind);
  wire.status = WireStatus(task);
  wire.detail = WireDetail(task);
  if (task.exit_code)
    wire.exit_code = *task.exit_code;
  if (task.signal)
    wire.signal = SignalName(*task.signal);
  wire.label = MaskSecrets(task.spec.label);
  wire.command = MaskSecrets(CommandText(task.spec));
  if (!task.spec.shell_command) {
    wire.argv = task.spec.argv;
    for (std::string& arg : *wire.argv)
      arg = MaskSecrets(arg);
  }
  wire.cwd = task.spec.cwd;
  wire.env = task.spec.env_overrides;
  for (auto& [name, value] : wire.env)
    value = LooksSecret(name) ? "***" : MaskSecrets(value);
  wire.owner = TextOrNull(task.spec.owner);
  if (task.pid)
    wire.pid = task.pid;
  if (task.spec.timeout)
    wire.timeout_ms = task.spec.timeout->count();
  wire.created_at = TimeOrNull(task.created_ms);
  wire.started_at = TimeOrNull(task.started_ms);
  wire.ended_at = TimeOrNull(task.ended_ms);
  if (task.started_ms && task.ended_ms)
    wire.duration_ms = task.ended_ms - task.started_ms;
  wire.kill_reason = TextOrNull(MaskSecrets(task.kill_reason));
  wire.output_path = task.output_path;
  if (view.output_bytes)
    wire.output_bytes = static_cast<int64_t>(*view.output_bytes);
  wire.agent = task.spec.agent;
  if (wire.agent)
    wire.agent->brief = MaskSecrets(wire.agent->brief);
  wire.agent_session = task.agent_session;
  wire.parent = task.spec.parent;
  wire.rerun_of = task.spec.rerun_of;
  wire.checks = task.spec.checks;
  for (std::string& check : wire.checks)
    check = MaskSecrets(check);
  wire.evidence = task.evidence;
  if (wire.evidence) {
    for (CheckResult& check : wire.evidence->checks)
      check.command = MaskSecrets(check.command);
  }
  wire.questions = view.questions;
  MaskQuestions(wire.questions);
  if (!task.spec.schedule.IsDefault())
    wire.schedule = task.spec.schedule;
  if (!task.spec.agent)
    wire.max_output = task.spec.max_output;
  if (task.output_dropped > 0)
    wire.output_dropped = task.output_dropped;
  wire.usage = task.usage;
  if (task.spec.retry.retries > 0)
    wire.retry = task.spec.retry;
  wire.attempts = task.attempts;
  if (task.retry_at_ms != 0)
    wire.retry_at = TimeOrNull(task.retry_at_ms);
  wire.remote = task.spec.remote;
  wire.placement = task.placement;
  if (task.spec.limits.any())
    wire.limits = task.spec.limits;
  wire.limits_held_by = view.limits_held_by;
  wire.sandbox = task.spec.sandbox;
  if (!task.spec.redact)
    wire.redact = false;
  wire.redactions = view.redactions;
  wire.uncollected =
      IsTerminal(task.status) && !task.spec.owner.empty() && !task.end_seen;
  return wire;
}

Result<TaskView> FromWire(TaskWire wire) {
  TaskView view;
  TaskRecord& task = view.task;
  auto id = TaskId::Parse(wire.id);
  if (!id)
    return std::unexpected(id.error());
  task.id = *id;
  auto status = ParseTaskStatus(wire.status);
  if (!status)
    return std::unexpected(status.error());
  task.status = *status;
  // `queued` on the wire is a task that waits (Starting): one that is
  // encoded again (baton serve relays batond's tasks) stays `queued`.
  task.held = task.status == TaskStatus::kQueued;
  task.detail = std::move(wire.detail);
  if (wire.exit_code)
    task.exit_code = static_cast<int>(*wire.exit_code);
  if (wire.signal) {
    task.signal = SignalFromName(*wire.signal);
    if (!task.signal) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("task.signal '{}' is not a signal's name", *wire.signal));
    }
  }
  task.spec.kind = task.id.kind;
  task.spec.label = std::move(wire.label);
  if (wire.argv) {
    task.spec.argv = std::move(*wire.argv);
  } else {
    task.spec.shell_command = std::move(wire.command);
  }
  task.spec.cwd = std::move(wire.cwd);
  task.spec.env_overrides = std::move(wire.env);
  task.spec.owner = wire.owner.value_or("");
  task.pid = wire.pid.value_or(0);
  if (wire.timeout_ms)
    task.spec.timeout = std::chrono::milliseconds(*wire.timeout_ms);
  for (auto [field, name, out] :
       {std::tuple(&wire.created_at, "created_at", &task.created_ms),
        std::tuple(&wire.started_at, "started_at", &task.started_ms),
        std::tuple(&wire.ended_at, "ended_at", &task.ended_ms)}) {
    auto ms = TimeFromWire(*field, name);
    if (!ms)
      return std::unexpected(ms.error());
    *out = *ms;
  }
  task.kill_reason = wire.kill_reason.value_or("");
  task.output_path = std::move(wire.output_path);
  if (wire.output_bytes && *wire.output_bytes >= 0)
    view.output_bytes = static_cast<uint64_t>(*wire.output_bytes);
  task.spec.agent = std::move(wire.agent);
  task.agent_session = std::move(wire.agent_session);
  task.spec.parent = std::move(wire.parent);
  task.spec.rerun_of = std::move(wire.rerun_of);
  task.spec.checks = std::move(wire.checks);
  task.evidence = std::move(wire.evidence);
  view.questions = std::move(wire.questions);
  task.spec.schedule = std::move(wire.schedule).value_or(Schedule{});
  task.spec.max_output = wire.max_output.value_or(kDefaultMaxOutput);
  task.output_dropped = wire.output_dropped.value_or(0);
  task.usage = std::move(wire.usage);
  task.spec.retry = wire.retry.value_or(RetryPolicy{});
  task.attempts = std::move(wire.attempts);
  if (wire.retry_at) {
    auto ms = TimeFromWire(wire.retry_at, "retry_at");
    if (!ms)
      return std::unexpected(ms.error());
    task.retry_at_ms = *ms;
  }
  task.spec.remote = std::move(wire.remote);
  task.placement = std::move(wire.placement);
  task.spec.limits = wire.limits.value_or(ResourceLimits{});
  view.limits_held_by = std::move(wire.limits_held_by);
  task.spec.sandbox = std::move(wire.sandbox);
  task.spec.redact = wire.redact.value_or(true);
  view.redactions = std::move(wire.redactions);
  task.end_seen = IsTerminal(task.status) && !wire.uncollected;
  return view;
}

Status DecodeValue(const Json& in, TaskView& out, const FieldRules& rules,
                   std::string_view path) {
  TaskWire wire;
  if (auto ok = DecodeValue(in, wire, rules, path); !ok)
    return ok;
  auto view = FromWire(std::move(wire));
  if (!view) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}': {}", path, view.error().message));
  }
  out = std::move(*view);
  return {};
}

void EncodeValue(std::string& out, const TaskView& value) {
  EncodeValue(out, ToWire(value));
}

Status DecodeValue(const Json& in, TaskBrief& out, const FieldRules& rules,
                   std::string_view path) {
  if (in.is_string()) {
    auto id = TaskId::Parse(in.get_ref<const std::string&>());
    if (!id)
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("'{}': {}", path, id.error().message));
    out.task = TaskRecord{};
    out.task.id = *id;
    out.id_only = true;
    return {};
  }
  TaskView view;
  if (auto ok = DecodeValue(in, view, rules, path); !ok)
    return ok;
  out.task = std::move(view.task);
  out.id_only = false;
  return {};
}

void EncodeValue(std::string& out, const TaskBrief& value) {
  const TaskRecord& task = value.task;
  if (value.id_only)
    return AppendJsonString(out, task.id.ToString());
  // The first eight fields of the task object, without building the rest:
  // a wait over a thousand running tasks lists each of them.
  JsonEncoder encoder(out);
  encoder("id", task.id.ToString());
  encoder("kind", TaskKindName(task.id.kind));
  encoder("status", WireStatus(task));
  encoder("detail", WireDetail(task));
  encoder("exit_code", task.exit_code);
  encoder("signal",
          task.signal ? std::optional(SignalName(*task.signal)) : std::nullopt);
  encoder("label", MaskSecrets(task.spec.label));
  encoder("command", MaskSecrets(CommandText(task.spec)));
  encoder.Finish();
}

void EncodeValue(std::string& out, const WaitReply& value) {
  JsonEncoder encoder(out);
  encoder("ended", value.ended);
  if (!value.turns.empty())
    encoder("turns", value.turns);
  if (value.still_running_count) {
    encoder("still_running_count", *value.still_running_count);
  } else {
    encoder("still_running", value.still_running);
  }
  encoder("timed_out", value.timed_out);
  if (!value.already_told.empty())
    encoder("already_told", value.already_told);
  if (!value.told_before.empty())
    encoder("told_before", value.told_before);
  encoder.Finish();
}

}  // namespace baton
