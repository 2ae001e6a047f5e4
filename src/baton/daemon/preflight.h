// Checks of a new task against the file system, done before anything is
// stored or spawned: the working directory exists and can be entered, and
// an argv command can be found (as execvp would search PATH).
#ifndef BATON_DAEMON_PREFLIGHT_H_
#define BATON_DAEMON_PREFLIGHT_H_

#include "baton/core/task.h"
#include "baton/util/program_path.h"
#include "baton/util/result.h"

namespace baton {

// Fails with kInvalidArgument and a message that says how to fix the spec.
// `cache`, if given, remembers where PATH searches found their commands.
Status PreflightTask(const TaskSpec& spec, ProgramCache* cache = nullptr);

}  // namespace baton

#endif  // BATON_DAEMON_PREFLIGHT_H_
