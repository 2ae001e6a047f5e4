// The `edit` handler (doc/tasks.md, "Editing a queued task"): a held task
// takes the request's fields over its own; a shell task's new folder or
// command is checked against the file system as `run` checks a new one,
// then the registry (core/task_registry_edit.cc) checks the whole spec
// again and places the task anew. The audit record says what changed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "baton/daemon/daemon.h"
#include "baton/daemon/preflight.h"
#include "baton/util/duration.h"

namespace baton {
namespace {

std::string QueueName(const std::string& stored) {
  return stored.empty() ? std::string(kDefaultQueue) : stored;
}

std::string AfterText(const Schedule& schedule) {
  if (schedule.after.empty())
    return "nothing";
  return fmt::format("{}{}", schedule.after_any ? "any of " : "",
                     fmt::join(schedule.after, ", "));
}

// The request's fields over `spec`; what changed, for the audit record
// ("priority 0 -> 5; queue default -> gpu"), or an error that changes
// nothing.
Result<std::vector<std::string>> ApplyEdit(const EditRequest& request,
                                           TaskSpec& spec) {
  std::vector<std::string> changed;
  std::string id = request.task;
  bool agent = spec.agent.has_value();
  auto shell_only = [&](std::string_view what) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is an agent task: its {} cannot be edited (its label, "
                    "priority, queue, after and timeout can); to give it "
                    "another, kill it and delegate again",
                    id, what));
  };
  if (request.command && request.argv) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "give the new command once: `command` (a shell line) or "
                     "`argv` (a list), not both");
  }
  if (request.after_any && !request.after) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "after_any goes with after: give the tasks to wait for "
                     "again (baton edit ID --after-any A B)");
  }
  if (agent && (request.command || request.argv))
    return shell_only("brief (its command)");
  if (agent && request.cwd)
    return shell_only("folder");
  if (agent && !request.env.empty())
    return shell_only("environment");
  if (request.label && *request.label != spec.label) {
    changed.push_back(
        fmt::format("label '{}' -> '{}'", spec.label, *request.label));
    spec.label = *request.label;
  }
  Schedule& schedule = spec.schedule;
  if (request.priority && *request.priority != schedule.priority) {
    changed.push_back(
        fmt::format("priority {} -> {}", schedule.priority, *request.priority));
    schedule.priority = *request.priority;
  }
  if (request.queue) {
    // The registry stores the default queue as "".
    std::string queue = *request.queue == kDefaultQueue ? "" : *request.queue;
    if (queue != schedule.queue) {
      changed.push_back(fmt::format("queue {} -> {}", QueueName(schedule.queue),
                                    QueueName(queue)));
      schedule.queue = std::move(queue);
    }
  }
  if (request.after) {
    Schedule before = schedule;
    schedule.after = *request.after;
    schedule.after_any =
        request.after_any.value_or(false) && !request.after->empty();
    if (schedule.after != before.after ||
        schedule.after_any != before.after_any)
      changed.push_back(fmt::format("after {} -> {}", AfterText(before),
                                    AfterText(schedule)));
  }
  if (request.timeout && request.timeout != spec.timeout) {
    changed.push_back(fmt::format(
        "timeout {} -> {}",
        spec.timeout ? FormatDuration(*spec.timeout) : std::string("none"),
        FormatDuration(*request.timeout)));
    spec.timeout = request.timeout;
  }
  for (const auto& [name, value] : request.env) {
    auto it = spec.env_overrides.find(name);
    if (it != spec.env_overrides.end() && it->second == value)
      continue;
    // Names only: a value may be a secret, and the audit trail keeps it.
    changed.push_back(fmt::format("env {}", name));
    spec.env_overrides[name] = value;
  }
  if (request.cwd && *request.cwd != spec.cwd) {
    changed.push_back(fmt::format("cwd {} -> {}", spec.cwd, *request.cwd));
    spec.cwd = *request.cwd;
  }
  if (request.command || request.argv) {
    TaskSpec before = spec;
    if (request.command) {
      spec.shell_command = *request.command;
      spec.argv.clear();
    } else {
      spec.shell_command.reset();
      spec.argv = *request.argv;
    }
    if (spec.shell_command != before.shell_command || spec.argv != before.argv)
      changed.push_back(fmt::format("command: {}", CommandText(spec)));
  }
  return changed;
}

}  // namespace

void Daemon::Handle(Connection& connection, const EditRequest& request,
                    Session session, Reply reply) {
  auto task = registry_->Editable(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  TaskSpec spec = task->spec;
  auto changed = ApplyEdit(request, spec);
  if (!changed)
    return reply(std::unexpected(changed.error()));
  if (changed->empty()) {
    return reply(MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("nothing to change: {} already has what was given; give "
                    "what is new (baton edit {} --priority 5; baton edit "
                    "--help lists the fields)",
                    request.task, request.task)));
  }
  AuditRecord audit = AuditOf(connection, session, "edit");
  audit.task = task->id.ToString();
  audit.detail = fmt::format("{}", fmt::join(*changed, "; "));
  auto finish = [this, reply, audit = std::move(audit), id = task->id,
                 session](TaskSpec checked) mutable {
    auto edited = registry_->Edit(id, std::move(checked), std::string(session));
    if (!edited)
      return reply(std::unexpected(edited.error()));
    registry_->audit().Record(std::move(audit), /*with_batch=*/true);
    reply(TaskReply{{std::move(*edited), std::nullopt}});
  };
  bool moved = request.cwd || request.command || request.argv;
  if (!moved || spec.agent)
    return finish(std::move(spec));
  // What `run` checks of a new task: the folder, the program, the line.
  PreflightTask(std::move(spec), &command_cache_, &preflight_runner_,
                [finish, reply](Result<TaskSpec> checked) mutable {
                  if (!checked)
                    return reply(std::unexpected(checked.error()));
                  finish(std::move(*checked));
                });
}

}  // namespace baton
