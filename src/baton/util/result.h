// Error values for expected failures. Our code does not throw: anything that
// can fail in normal use returns Result<T>; broken invariants use BATON_CHECK.
#ifndef BATON_UTIL_RESULT_H_
#define BATON_UTIL_RESULT_H_

#include <expected>
#include <string>
#include <string_view>

namespace baton {

// 1:1 with the error codes of the socket protocol (doc/protocol.md).
enum class ErrorCode {
  kInvalidArgument,
  kNotFound,
  kPermissionDenied,  // e.g. another session's task
  kAlreadyExists,
  kIo,
  kSpawnFailed,
  kTimeout,
  kUnavailable,
  kIncompatible,  // e.g. a database written by a newer baton
  kCorrupt,
  kInvalidModel,    // A malformed <provider>/<model>[:<effort>].
  kResumeNotFound,  // Nothing to resume: no such session, or none yet.
  kInvalidConfig,   // baton's config file is malformed (file:line: key).
  kNotAgentTask,    // answer, send or events named a shell task.
  // A queued message to replace or withdraw was delivered (or withdrawn).
  kAlreadyDelivered,
  // A delegate in a session that spent its budget (doc/agents.md).
  kBudgetSpent,
  kInternal,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  int sys_errno = 0;
};

template <class T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

inline std::unexpected<Error> MakeError(ErrorCode code, std::string message,
                                        int sys_errno = 0) {
  return std::unexpected(Error{code, std::move(message), sys_errno});
}

// "context: strerror(err)", with ENOENT mapped to kNotFound and the rest to
// kIo (as leveldb's PosixError).
Error ErrnoError(std::string_view context, int err);

// The protocol name of a code ("invalid_argument") and back.
std::string_view ErrorCodeName(ErrorCode code);
ErrorCode ErrorCodeFromName(std::string_view name);

// Aborts with file:line and the condition. For broken invariants only.
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond);

}  // namespace baton

#define BATON_CHECK(cond)                              \
  do {                                                 \
    if (!(cond)) {                                     \
      ::baton::CheckFailed(__FILE__, __LINE__, #cond); \
    }                                                  \
  } while (0)

#endif  // BATON_UTIL_RESULT_H_
