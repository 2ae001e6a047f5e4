// Model names as directors give them: `<provider>/<model>[:<effort>]`
// (doc/agents.md). Validated before anything is spawned.
#ifndef BATON_CORE_MODEL_SPEC_H_
#define BATON_CORE_MODEL_SPEC_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// How an agent CLI takes the model on its command line (a profile's
// `model_arg`, doc/agents.md): the model alone (`--model deepseek-v4-pro`;
// the effort is the adapter's business or dropped), the whole spec
// (`--model deepseek/deepseek-v4-pro:max`), or the model plus the effort
// under a flag of its own (`--model deepseek-v4-pro --effort max`).
enum class ModelArgStyle { kModel, kSpec, kModelAndEffort };

struct ModelArgs {
  ModelArgStyle style = ModelArgStyle::kModel;
  std::string model_flag = "--model";
  std::string effort_flag;  // With kModelAndEffort, e.g. "--effort".
};

// "model", "spec" or "model+effort"; kInvalidConfig naming them otherwise.
Result<ModelArgStyle> ParseModelArgStyle(std::string_view text);

// The flags that pass `spec` in the style of `args` (none for an effort
// the spec does not have).
std::vector<std::string> ModelArgv(const ModelSpec& spec,
                                   const ModelArgs& args);

}  // namespace baton

#endif  // BATON_CORE_MODEL_SPEC_H_
