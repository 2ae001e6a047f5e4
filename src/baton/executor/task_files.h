// Where a task's files are, whichever executor runs it: its folder under
// the state home's tasks/ and its output log there (doc/state-dir.md). A
// task on Slurm with a shared folder keeps links here to the job's files,
// so readers never ask which executor ran it.
#ifndef BATON_EXECUTOR_TASK_FILES_H_
#define BATON_EXECUTOR_TASK_FILES_H_

#include <cstdint>
#include <string>

#include "baton/core/task.h"
#include "baton/util/result.h"
#include "baton/util/state_paths.h"

namespace baton {

std::string TaskFolder(const StatePaths& paths, const TaskId& id);
std::string OutputLogPath(const StatePaths& paths, const TaskId& id);
// Bytes in the output log so far; for a running shell task, at most its
// spec.max_output (what is past it is being dropped: daemon/output_cap.h).
Result<uint64_t> KeptOutputSize(const StatePaths& paths,
                                const TaskRecord& task);

}  // namespace baton

#endif  // BATON_EXECUTOR_TASK_FILES_H_
