#include "baton/util/result.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace baton {

Error ErrnoError(std::string_view context, int err) {
  std::string message(context);
  message += ": ";
  message += std::strerror(err);
  ErrorCode code = err == ENOENT ? ErrorCode::kNotFound
                   : (err == EACCES || err == EPERM)
                       ? ErrorCode::kPermissionDenied
                       : ErrorCode::kIo;
  return Error{code, std::move(message), err};
}

namespace {
struct CodeName {
  ErrorCode code;
  std::string_view name;
};
constexpr CodeName kCodeNames[] = {
    {ErrorCode::kInvalidArgument, "invalid_argument"},
    {ErrorCode::kNotFound, "not_found"},
    {ErrorCode::kPermissionDenied, "permission_denied"},
    {ErrorCode::kAlreadyExists, "already_exists"},
    {ErrorCode::kIo, "io_error"},
    {ErrorCode::kSpawnFailed, "spawn_failed"},
    {ErrorCode::kTimeout, "timeout"},
    {ErrorCode::kUnavailable, "unavailable"},
    {ErrorCode::kIncompatible, "incompatible"},
    {ErrorCode::kCorrupt, "corrupt"},
    {ErrorCode::kInvalidModel, "invalid_model"},
    {ErrorCode::kResumeNotFound, "resume_not_found"},
    {ErrorCode::kInvalidConfig, "invalid_config"},
    {ErrorCode::kNotAgentTask, "not_agent_task"},
    {ErrorCode::kAlreadyDelivered, "already_delivered"},
    {ErrorCode::kBudgetSpent, "budget_spent"},
    {ErrorCode::kInternal, "internal"},
};
}  // namespace

std::string_view ErrorCodeName(ErrorCode code) {
  for (const auto& entry : kCodeNames) {
    if (entry.code == code)
      return entry.name;
  }
  return "internal";
}

ErrorCode ErrorCodeFromName(std::string_view name) {
  for (const auto& entry : kCodeNames) {
    if (entry.name == name)
      return entry.code;
  }
  return ErrorCode::kInternal;
}

void CheckFailed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "baton: check failed at %s:%d: %s\n", file, line, cond);
  std::abort();
}

}  // namespace baton
