#include "baton/core/task_extra.h"

#include "baton/util/json_fields.h"

namespace baton {

TaskExtra ExtraOf(const TaskRecord& task) {
  TaskExtra extra{task.spec.agent, task.agent_session, task.spec.checks,
                  task.evidence,
                  task.question_told ? std::optional(true) : std::nullopt};
  if (!task.spec.schedule.IsDefault())
    extra.schedule = task.spec.schedule;
  if (task.held)
    extra.held = true;
  if (KeepsEnvironment(task))
    extra.held_env = task.spec.base_env;
  if (task.spec.max_output != kDefaultMaxOutput)
    extra.max_output = task.spec.max_output;
  if (task.output_dropped != 0)
    extra.output_dropped = task.output_dropped;
  if (!task.spec.redact)
    extra.redact = false;
  extra.usage = task.usage;
  if (task.killed_at_limit)
    extra.killed_at_limit = true;
  if (task.spec.retry.retries > 0)
    extra.retry = task.spec.retry;
  extra.attempts = task.attempts;
  if (task.retry_at_ms != 0)
    extra.retry_at_ms = task.retry_at_ms;
  extra.remote = task.spec.remote;
  extra.placement = task.placement;
  if (task.spec.limits.any())
    extra.limits = task.spec.limits;
  extra.sandbox = task.spec.sandbox;
  extra.parent = task.spec.parent;
  extra.rerun_of = task.spec.rerun_of;
  return extra;
}

void ApplyExtra(TaskExtra extra, TaskRecord& task) {
  task.spec.agent = std::move(extra.agent);
  task.agent_session = std::move(extra.agent_session);
  task.spec.checks = std::move(extra.checks);
  task.evidence = std::move(extra.evidence);
  task.question_told = extra.question_told.value_or(false);
  task.spec.schedule = std::move(extra.schedule).value_or(Schedule{});
  task.held = extra.held.value_or(false);
  task.spec.max_output = extra.max_output.value_or(kDefaultMaxOutput);
  task.output_dropped = extra.output_dropped.value_or(0);
  task.spec.redact = extra.redact.value_or(true);
  task.usage = std::move(extra.usage);
  task.killed_at_limit = extra.killed_at_limit.value_or(false);
  task.spec.retry = extra.retry.value_or(RetryPolicy{});
  task.attempts = std::move(extra.attempts);
  task.retry_at_ms = extra.retry_at_ms.value_or(0);
  task.spec.remote = std::move(extra.remote);
  task.placement = std::move(extra.placement);
  task.spec.limits = extra.limits.value_or(ResourceLimits{});
  task.spec.sandbox = std::move(extra.sandbox);
  task.spec.parent = std::move(extra.parent);
  task.spec.rerun_of = std::move(extra.rerun_of);
  // After the fields KeepsEnvironment reads.
  if (KeepsEnvironment(task))
    task.spec.base_env = std::move(extra.held_env);
}

std::string EncodeTaskExtra(const TaskRecord& task) {
  return EncodeObject(ExtraOf(task));
}

Status DecodeTaskExtra(std::string_view text, TaskRecord& task) {
  // Rows are written by EncodeTaskExtra; what passes no check is damage.
  auto parsed = ParseJson(text);
  if (!parsed) {
    return MakeError(ErrorCode::kCorrupt,
                     "task extra: " + parsed.error().message);
  }
  TaskExtra extra;
  if (auto ok = DecodeValue(parsed->value, extra, {}, "extra"); !ok) {
    return MakeError(ErrorCode::kCorrupt, "task extra: " + ok.error().message);
  }
  ApplyExtra(std::move(extra), task);
  return {};
}

}  // namespace baton
