#include "baton/ipc/slurm_request.h"

namespace baton {

RemoteRequest ToRemote(const SlurmRequest& request) {
  RemoteRequest remote{.executor = kSlurmExecutor};
  auto parsed = ParseJson(EncodeObject(request));
  // EncodeObject writes valid JSON: a parse cannot fail.
  if (parsed)
    remote.options = std::move(parsed->value);
  return remote;
}

Result<std::optional<SlurmRequest>> SlurmRequestOf(const TaskSpec& spec) {
  if (!spec.remote || spec.remote->executor != kSlurmExecutor)
    return std::optional<SlurmRequest>();
  auto request =
      DecodeObject<SlurmRequest>(spec.remote->options, "slurm request", true);
  if (!request)
    return std::unexpected(request.error());
  return std::optional<SlurmRequest>(std::move(*request));
}

}  // namespace baton
