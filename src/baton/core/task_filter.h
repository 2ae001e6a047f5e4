// What a person's view of the tasks (the board) lets through: an owner, a
// kind, a status, a label and a search over the words a task is known by. The
// registry filters its live tasks with it, and the stores their history (the
// SQLite store in SQL, the same rules: doc/schema.md, "Pages of ended
// tasks").
#ifndef BATON_CORE_TASK_FILTER_H_
#define BATON_CORE_TASK_FILTER_H_

#include <optional>
#include <string>
#include <string_view>

#include "baton/core/task.h"

namespace baton {

struct TaskFilter {
  // The session that owns it; "" for an unowned task. nullopt lets every
  // owner through.
  std::optional<std::string> owner;
  // Each empty one lets every task through.
  std::string kind;    // TaskKindName.
  std::string status;  // TaskStatusName.
  std::string label;   // Exactly.
  // Lower case (ASCII, as SQLite's lower()): found in the id, the label,
  // the shell command, one of the argv words or an agent's brief.
  std::string search;

  bool empty() const {
    return !owner && kind.empty() && status.empty() && label.empty() &&
           search.empty();
  }
  bool Matches(const TaskRecord& task) const;
};

// ASCII lower case, as SQLite's lower() makes it.
std::string AsciiLower(std::string_view text);

}  // namespace baton

#endif  // BATON_CORE_TASK_FILTER_H_
