// The limit on open file descriptors (RLIMIT_NOFILE) of a long-lived
// process that holds one per client connection or per running task.
#ifndef BATON_UTIL_FD_LIMIT_H_
#define BATON_UTIL_FD_LIMIT_H_

#include <cstdint>

#include "baton/util/result.h"

namespace baton {

struct FdLimit {
  uint64_t before = 0;  // The soft limit found.
  uint64_t now = 0;     // The soft limit in force.
};

// Raises this process's soft limit on open descriptors to its hard limit,
// which only root could raise further. Processes it starts inherit the new
// limit. Fails (kIo) only if the limits cannot be read or set.
Result<FdLimit> RaiseFdLimit();

}  // namespace baton

#endif  // BATON_UTIL_FD_LIMIT_H_
