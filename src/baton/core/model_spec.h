// Model names as directors give them: `<provider>/<model>[:<effort>]`
// (doc/agents.md). Validated before anything is spawned.
#ifndef BATON_CORE_MODEL_SPEC_H_
#define BATON_CORE_MODEL_SPEC_H_

#include <optional>
#include <string>
#include <string_view>

#include "baton/util/result.h"

namespace baton {

struct ModelSpec {
  std::string provider;  // "anthropic"
  std::string model;     // "claude-sonnet-4-5"; may itself contain ':'
  std::optional<std::string>
      effort;  // off, minimal, low, medium, high, xhigh, max

  std::string ToString() const;
};

inline constexpr size_t kMaxModelPart = 200;
inline constexpr size_t kMaxModelSpec = 512;

// The suffix after the last ':' is an effort only if it is one of the known
// efforts; otherwise it belongs to the model name. Fails with
// kInvalidModel and a message naming the rule that was broken.
Result<ModelSpec> ParseModelSpec(std::string_view text);

}  // namespace baton

#endif  // BATON_CORE_MODEL_SPEC_H_
