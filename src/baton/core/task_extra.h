// The parts of a task record that only some tasks have (agent spec, checks,
// agent session, evidence, a question told to the owner, a schedule), as one
// JSON object: how the store keeps them in one column. Clients see the same
// fields in the task object (ipc/codec.h), written from the same definitions.
#ifndef BATON_CORE_TASK_EXTRA_H_
#define BATON_CORE_TASK_EXTRA_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/task.h"

namespace baton {

// The optional parts of a task, each left out when empty.
struct TaskExtra {
  std::optional<AgentSpec> agent;
  std::string agent_session;
  std::vector<std::string> checks;
  std::optional<Evidence> evidence;
  std::optional<bool> question_told;      // Set only when true.
  std::optional<Schedule> schedule;       // Set only when not the default.
  std::optional<bool> held;               // Set only when true.
  std::vector<std::string> held_env;      // The client's environment, held.
  std::optional<int64_t> max_output;      // Set only when not the default.
  std::optional<int64_t> output_dropped;  // Set only when not 0.
  std::optional<bool> redact;             // Set only when false.
  std::optional<AgentUsage> usage;
  std::optional<bool> killed_at_limit;  // Set only when true.
  std::optional<RetryPolicy> retry;     // Set only when it retries.
  std::vector<Attempt> attempts;
  std::optional<int64_t> retry_at_ms;  // Set only when not 0.
  std::optional<RemoteRequest> remote;
  std::optional<Placement> placement;
  std::optional<ResourceLimits> limits;
  std::optional<SandboxProfile> sandbox;
  std::string parent;
  std::string rerun_of;

  template <class V>
  void Fields(V& v) {
    v("agent", agent, {.omit_when_empty = true});
    v("agent_session", agent_session, {.omit_when_empty = true});
    v("checks", checks, {.omit_when_empty = true});
    v("evidence", evidence, {.omit_when_empty = true});
    v("question_told", question_told, {.omit_when_empty = true});
    v("schedule", schedule, {.omit_when_empty = true});
    v("held", held, {.omit_when_empty = true});
    v("held_env", held_env, {.omit_when_empty = true});
    v("max_output", max_output, {.omit_when_empty = true});
    v("output_dropped", output_dropped, {.omit_when_empty = true});
    v("redact", redact, {.omit_when_empty = true});
    v("usage", usage, {.omit_when_empty = true});
    v("killed_at_limit", killed_at_limit, {.omit_when_empty = true});
    v("retry", retry, {.omit_when_empty = true});
    v("attempts", attempts, {.omit_when_empty = true});
    v("retry_at_ms", retry_at_ms, {.omit_when_empty = true});
    v("remote", remote, {.omit_when_empty = true});
    v("placement", placement, {.omit_when_empty = true});
    v("limits", limits, {.omit_when_empty = true});
    v("sandbox", sandbox, {.omit_when_empty = true});
    v("parent", parent, {.omit_when_empty = true});
    v("rerun_of", rerun_of, {.omit_when_empty = true});
  }
};

TaskExtra ExtraOf(const TaskRecord& task);
void ApplyExtra(TaskExtra extra, TaskRecord& task);

// "{}" for a task with none of them.
std::string EncodeTaskExtra(const TaskRecord& task);
// Fills the fields of `task` from `text`; kCorrupt if it is not what
// EncodeTaskExtra writes.
Status DecodeTaskExtra(std::string_view text, TaskRecord& task);

}  // namespace baton

#endif  // BATON_CORE_TASK_EXTRA_H_
