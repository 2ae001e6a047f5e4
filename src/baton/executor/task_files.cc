#include "baton/executor/task_files.h"

#include <algorithm>

#include "baton/util/file_util.h"

namespace baton {

std::string TaskFolder(const StatePaths& paths, const TaskId& id) {
  return paths.tasks_dir() + "/" + id.ToString();
}

std::string OutputLogPath(const StatePaths& paths, const TaskId& id) {
  return TaskFolder(paths, id) + "/output.log";
}

Result<uint64_t> KeptOutputSize(const StatePaths& paths,
                                const TaskRecord& task) {
  auto size = FileSize(OutputLogPath(paths, task.id));
  // Past its cap, a running shell task's output is being dropped (the
  // bytes are holes): readers get the kept part.
  if (size && !task.spec.agent && task.spec.max_output > 0 &&
      !IsTerminal(task.status)) {
    return std::min(*size, static_cast<uint64_t>(task.spec.max_output));
  }
  return size;
}

}  // namespace baton
