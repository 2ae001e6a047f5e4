// Small POSIX file helpers that return Result instead of throwing. They know
// nothing of tasks.
#ifndef BATON_UTIL_FILE_UTIL_H_
#define BATON_UTIL_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton {

// Writes all of `data`, retrying on EINTR and short writes.
Status WriteAll(int fd, std::string_view data);

// Reads a whole (small) file.
Result<std::string> ReadFile(const std::string& path);

// Replaces `path` with `data` so that readers see the old or the new content,
// never a mix (write to a temp file beside it, then rename).
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Creates `path` (and missing parents) with mode 0700 if absent, then checks
// that it is a directory owned by the effective uid with no group or other
// permissions, and writable. `what` names it in messages ("BATON_HOME").
Status EnsurePrivateDir(const std::string& path, std::string_view what);

// Creates a directory if it does not exist (mode 0700). Parents must exist.
Status MakeDir(const std::string& path);

// Copies bytes [from, to) of the file at `path` to `out_fd` (sendfile where
// possible). Returns the number of bytes copied, which is less than asked
// only if the file is shorter.
Result<uint64_t> CopyFileRange(const std::string& path, uint64_t from,
                               uint64_t to, int out_fd);

// Bytes [from, to) of the file at `path`, fewer if the file is shorter.
// For small ranges: the whole range is held in memory.
Result<std::string> ReadFileRange(const std::string& path, uint64_t from,
                                  uint64_t to);

// The size of the file at `path`, 0 if it does not exist.
Result<uint64_t> FileSize(const std::string& path);

}  // namespace baton

#endif  // BATON_UTIL_FILE_UTIL_H_
