#include "baton/agent/codex_config.h"

#include <optional>
#include <string_view>

#include "baton/core/model_spec.h"

namespace baton {
namespace {

std::optional<std::string> CodexEffort(const std::string& effort) {
  if (effort == "off")
    return "none";
  if (effort == "max")
    return "xhigh";
  if (effort == "minimal" || effort == "low" || effort == "medium" ||
      effort == "high" || effort == "xhigh") {
    return effort;
  }
  return std::nullopt;
}

// A TOML basic string, for `-c key=value`.
std::string TomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<std::string> CodexModelOverrides(const std::string& model_spec) {
  std::vector<std::string> args;
  if (model_spec.empty())
    return args;
  auto model = ParseModelSpec(model_spec);
  if (!model)
    return args;
  args.push_back("-c");
  args.push_back("model=" + TomlString(model->model));
  if (model->effort) {
    if (auto effort = CodexEffort(*model->effort)) {
      args.push_back("-c");
      args.push_back("model_reasoning_effort=" + TomlString(*effort));
    }
  }
  return args;
}

std::string StripCwd(std::string path, const std::string& cwd) {
  if (!cwd.empty() && path.starts_with(cwd + "/"))
    path.erase(0, cwd.size() + 1);
  return path;
}

}  // namespace baton
