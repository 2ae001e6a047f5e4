#include "baton/core/task_filter.h"

namespace baton {

std::string AsciiLower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

namespace {

bool Contains(std::string_view field, const std::string& search) {
  return AsciiLower(field).find(search) != std::string::npos;
}

bool SearchMatches(const TaskRecord& task, const std::string& search) {
  if (search.empty())
    return true;
  if (Contains(task.id.ToString(), search) ||
      Contains(task.spec.label, search) ||
      Contains(task.spec.shell_command.value_or(""), search)) {
    return true;
  }
  for (const auto& word : task.spec.argv) {
    if (Contains(word, search))
      return true;
  }
  return task.spec.agent && Contains(task.spec.agent->brief, search);
}

}  // namespace

bool TaskFilter::Matches(const TaskRecord& task) const {
  return (!owner || *owner == task.spec.owner) &&
         (kind.empty() || kind == TaskKindName(task.spec.kind)) &&
         (status.empty() || status == TaskStatusName(ToldStatus(task))) &&
         (label.empty() || label == task.spec.label) &&
         SearchMatches(task, search);
}

}  // namespace baton
