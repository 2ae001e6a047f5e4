// Checks of a new task against the file system, done before anything is
// stored or spawned: the working directory exists and can be entered, an
// argv command or a shell line's first program can be found (as execvp
// would search PATH), and a shell line that may not parse is one `sh -n`
// accepts (asked off batond's loop).
#ifndef BATON_DAEMON_PREFLIGHT_H_
#define BATON_DAEMON_PREFLIGHT_H_

#include <functional>
#include <string_view>

#include "baton/core/task.h"
#include "baton/loop/command_runner.h"
#include "baton/util/program_path.h"
#include "baton/util/result.h"

namespace baton {

// The checks that need no process (all but `sh -n`). Fails with
// kInvalidArgument and a message that says how to fix the spec. `cache`, if
// given, remembers where PATH searches found their commands.
Status PreflightTask(const TaskSpec& spec, ProgramCache* cache = nullptr);

// Whether `spec` is a shell line (for this machine) that the scan doubts
// (ShellLineMayNotParse), so that `sh -n` must judge it.
bool NeedsShellSyntaxCheck(const TaskSpec& spec);

// Every check: first `sh -n`'s verdict on a line that needs it, run
// through `runner` (a process watched by the loop, 2 s at most: a shell
// that cannot answer in time lets the line through), then the checks
// above. `done` gets the spec back, or the first failure; it runs at once
// when no shell is asked, else later on the loop (never if `runner` goes
// first). `cache` must outlive the call.
using PreflightDone = std::function<void(Result<TaskSpec>)>;
void PreflightTask(TaskSpec spec, ProgramCache* cache, CommandRunner* runner,
                   PreflightDone done);

// Whether a shell line may fail to parse, judged without a shell: a
// quote, backquote or parenthesis left open, an operator where a word must
// be (`; a`, `a |`, `a && || b`, `a >`), a here-document, or a word that
// opens or closes a compound command (`if`, `do`, `{`, ...). The usual line
// (`make test`, `echo M; sleep 2; exit 3`, `a 2>&1 | b > c`) has none, so
// it never pays for `sh -n` (a process, about 2 ms); a line with one is
// given to `sh -n`, which alone decides. The scan only raises a doubt: it
// never refuses a line.
bool ShellLineMayNotParse(std::string_view line);

}  // namespace baton

#endif  // BATON_DAEMON_PREFLIGHT_H_
