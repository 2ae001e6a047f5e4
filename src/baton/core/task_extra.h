// The parts of a task record that only some tasks have (agent spec, checks,
// agent session, evidence), as one JSON object: how the store keeps them in
// one column and how clients see them.
#ifndef BATON_CORE_TASK_EXTRA_H_
#define BATON_CORE_TASK_EXTRA_H_

#include <nlohmann/json.hpp>
#include <string>

#include "baton/core/task.h"

namespace baton {

nlohmann::json AgentSpecToJson(const AgentSpec& agent);
nlohmann::json EvidenceToJson(const Evidence& evidence);

// "{}" for a task with none of them.
std::string EncodeTaskExtra(const TaskRecord& task);
// Fills the fields of `task` from `text`; kCorrupt if it is not what
// EncodeTaskExtra writes.
Status DecodeTaskExtra(std::string_view text, TaskRecord& task);

}  // namespace baton

#endif  // BATON_CORE_TASK_EXTRA_H_
