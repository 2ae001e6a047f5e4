#include "baton/util/fd_limit.h"

#include <sys/resource.h>

#include <cerrno>

namespace baton {

Result<FdLimit> RaiseFdLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return std::unexpected(ErrnoError("getrlimit(RLIMIT_NOFILE)", errno));
  FdLimit result{limit.rlim_cur, limit.rlim_cur};
  if (limit.rlim_cur == limit.rlim_max)
    return result;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return std::unexpected(ErrnoError("setrlimit(RLIMIT_NOFILE)", errno));
  result.now = limit.rlim_cur;
  return result;
}

}  // namespace baton
