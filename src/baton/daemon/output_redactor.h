// Redaction of secrets in what tasks print (doc/redaction.md): batond
// scans each running task's log as it grows and overwrites each secret of
// a well-known shape (util/secret_shapes.h) in place with a marker of the
// same length, `[redacted: github-token]****`. The task writes its log
// itself (O_APPEND, past the end); batond writes only inside what was
// written, so the two never meet, and every offset into the log stays
// true. At the task's end, before the end is reported, a last pass
// decides what was left open. A listener beside the output cap.
// Single-threaded.
#ifndef BATON_DAEMON_OUTPUT_REDACTOR_H_
#define BATON_DAEMON_OUTPUT_REDACTOR_H_

#include <cstdint>
#include <map>
#include <string>

#include "baton/util/result.h"

namespace baton {

// Secrets masked, per kind ("github-token": 2).
using RedactionCounts = std::map<std::string, int64_t>;

// What one pass over a log did.
struct RedactPass {
  uint64_t settled = 0;   // The next pass starts here.
  uint64_t readable = 0;  // Readers may be given the log up to here.
  RedactionCounts masked;
};

// Scans `path` from `from` (a pass's `settled`) to its end and masks the
// secrets found there. `at_end`: the task ended, nothing more comes.
// Reads in pieces of `piece` bytes, so a huge log never sits in memory.
Result<RedactPass> RedactLog(const std::string& path, uint64_t from,
                             bool at_end, size_t piece = 1 << 20);

}  // namespace baton

#endif  // BATON_DAEMON_OUTPUT_REDACTOR_H_
