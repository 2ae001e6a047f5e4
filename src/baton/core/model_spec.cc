#include "baton/core/model_spec.h"

#include <fmt/format.h>

#include <array>

namespace baton {
namespace {

constexpr std::array<std::string_view, 7> kEfforts = {
    "off", "minimal", "low", "medium", "high", "xhigh", "max"};

Error Invalid(std::string_view text, std::string_view why) {
  return Error{ErrorCode::kInvalidModel,
               fmt::format("invalid model '{}': {}; write "
                           "<provider>/<model>[:<effort>], e.g. "
                           "anthropic/claude-sonnet-4-5:high (effort: off, "
                           "minimal, low, medium, high, xhigh, max)",
                           text, why)};
}

}  // namespace

std::string ModelSpec::ToString() const {
  std::string text = provider + "/" + model;
  if (effort)
    text += ":" + *effort;
  return text;
}

Result<ModelSpec> ParseModelSpec(std::string_view text) {
  if (text.size() > kMaxModelSpec) {
    return std::unexpected(
        Invalid(text.substr(0, 40),
                fmt::format("longer than {} characters", kMaxModelSpec)));
  }
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return std::unexpected(
          Invalid(text, "whitespace or control characters are not allowed"));
    }
  }
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return std::unexpected(Invalid(text, "no provider before a '/'"));
  }
  ModelSpec spec;
  spec.provider = std::string(text.substr(0, slash));
  std::string_view rest = text.substr(slash + 1);
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view suffix = rest.substr(colon + 1);
    if (suffix.empty())
      return std::unexpected(Invalid(text, "nothing after the ':'"));
    for (auto effort : kEfforts) {
      if (suffix == effort) {
        spec.effort = std::string(suffix);
        rest = rest.substr(0, colon);
        break;
      }
    }
  }
  spec.model = std::string(rest);
  if (spec.provider.empty())
    return std::unexpected(Invalid(text, "empty provider"));
  if (spec.model.empty())
    return std::unexpected(Invalid(text, "empty model"));
  if (spec.provider.find(':') != std::string::npos) {
    return std::unexpected(Invalid(text, "':' in the provider"));
  }
  if (spec.provider.size() > kMaxModelPart ||
      spec.model.size() > kMaxModelPart) {
    return std::unexpected(Invalid(
        text, fmt::format("provider and model are at most {} characters each",
                          kMaxModelPart)));
  }
  return spec;
}

}  // namespace baton

namespace baton {

Result<ModelArgStyle> ParseModelArgStyle(std::string_view text) {
  if (text == "model")
    return ModelArgStyle::kModel;
  if (text == "spec")
    return ModelArgStyle::kSpec;
  if (text == "model+effort")
    return ModelArgStyle::kModelAndEffort;
  return MakeError(ErrorCode::kInvalidConfig,
                   fmt::format("'{}' is no way to pass the model; give "
                               "\"model\" (the model alone), \"spec\" (the "
                               "whole <provider>/<model>[:<effort>]) or "
                               "\"model+effort\" (with effort_flag)",
                               text));
}

std::vector<std::string> ModelArgv(const ModelSpec& spec,
                                   const ModelArgs& args) {
  std::vector<std::string> argv = {args.model_flag};
  switch (args.style) {
    case ModelArgStyle::kSpec:
      argv.push_back(spec.ToString());
      break;
    case ModelArgStyle::kModel:
      argv.push_back(spec.model);
      break;
    case ModelArgStyle::kModelAndEffort:
      argv.push_back(spec.model);
      if (spec.effort && !args.effort_flag.empty()) {
        argv.push_back(args.effort_flag);
        argv.push_back(*spec.effort);
      }
      break;
  }
  return argv;
}

}  // namespace baton
