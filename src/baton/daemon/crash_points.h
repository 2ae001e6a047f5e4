// Deterministic crashes for fault-injection tests (doc/faults.md): with
// BATON_CRASH_AT=<point>:<n> in its environment, batond kills itself with
// SIGKILL (as `kill -9` would) the n-th time it passes <point> in a pass
// that commits state. The points are the steps every request and every
// task's start and end go through, in order:
//   before-commit  state changed in memory, not yet committed;
//   after-commit   committed, nothing sent yet (no spawn, no reply);
//   after-flush    the supervisor's requests sent, no reply yet;
//   after-reply    the replies sent.
// And the merge queue's (doc/land.md), passed on its worker thread:
//   land-before-move  a batch tested green, the target not moved yet;
//   land-after-move   the target moved, the entries not yet stored landed.
// Without the variable nothing is counted. A malformed value is refused at
// start, so a test can never pass by not crashing.
#ifndef BATON_DAEMON_CRASH_POINTS_H_
#define BATON_DAEMON_CRASH_POINTS_H_

#include <string>
#include <string_view>

#include "baton/util/result.h"

namespace baton {

class CrashPoints {
 public:
  // From BATON_CRASH_AT; none when it is not set.
  static Result<CrashPoints> FromEnvironment();
  // Parses "<point>:<n>" (n from 1).
  static Result<CrashPoints> Parse(std::string_view spec);

  // Counts a pass of `point`; at the n-th, SIGKILL.
  void Pass(std::string_view point);

 private:
  std::string point_;  // Empty: none armed.
  int at_ = 0;
  int passed_ = 0;
};

}  // namespace baton

#endif  // BATON_DAEMON_CRASH_POINTS_H_
