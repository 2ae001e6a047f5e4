#include "baton/mcp/tool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace baton::mcp {
namespace {

const Json* Find(const Json& args, std::string_view name) {
  if (!args.is_object())
    return nullptr;
  auto it = args.find(name);
  if (it == args.end() || it->is_null())
    return nullptr;
  return &*it;
}

std::unexpected<Error> Bad(std::string message) {
  return std::unexpected(
      Error{ErrorCode::kInvalidArgument, std::move(message)});
}

}  // namespace

Result<std::string> RequiredString(const Json& args, std::string_view name,
                                   std::string_view example) {
  const Json* value = Find(args, name);
  if (!value) {
    return Bad(
        fmt::format("missing argument '{}': give it as a string, e.g. "
                    "{{\"{}\": {}}}",
                    name, name, example));
  }
  if (!value->is_string() || value->get_ref<const std::string&>().empty()) {
    return Bad(
        fmt::format("argument '{}' must be a non-empty string, e.g. "
                    "{{\"{}\": {}}} (got {})",
                    name, name, example, value->dump()));
  }
  return value->get<std::string>();
}

Result<std::string> OptionalString(const Json& args, std::string_view name) {
  const Json* value = Find(args, name);
  if (!value)
    return std::string();
  if (!value->is_string()) {
    return Bad(fmt::format("argument '{}' must be a string (got {})", name,
                           value->dump()));
  }
  return value->get<std::string>();
}

Result<bool> OptionalBool(const Json& args, std::string_view name,
                          bool fallback) {
  const Json* value = Find(args, name);
  if (!value)
    return fallback;
  if (!value->is_boolean()) {
    return Bad(fmt::format("argument '{}' must be true or false (got {})", name,
                           value->dump()));
  }
  return value->get<bool>();
}

Result<std::optional<double>> OptionalNumber(const Json& args,
                                             std::string_view name,
                                             double minimum) {
  const Json* value = Find(args, name);
  if (!value)
    return std::optional<double>();
  if (!value->is_number() || !std::isfinite(value->get<double>()) ||
      value->get<double>() < minimum) {
    return Bad(fmt::format("argument '{}' must be a number >= {} (got {})",
                           name, minimum, value->dump()));
  }
  return std::optional(value->get<double>());
}

Result<std::vector<std::string>> TaskIdsArgument(const Json& args) {
  std::vector<std::string> ids;
  auto add = [&ids](const std::string& id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end())
      ids.push_back(id);
  };
  if (const Json* id = Find(args, "task_id")) {
    if (!id->is_string() || id->get_ref<const std::string&>().empty()) {
      return Bad(fmt::format(
          "argument 'task_id' must be a task id string such as \"shell-1\" "
          "(got {})",
          id->dump()));
    }
    add(id->get<std::string>());
  }
  if (const Json* list = Find(args, "task_ids")) {
    if (!list->is_array()) {
      return Bad(
          fmt::format("argument 'task_ids' must be a list of task ids, e.g. "
                      "[\"shell-1\", \"shell-2\"] (got {})",
                      list->dump()));
    }
    for (const auto& id : *list) {
      if (!id.is_string() || id.get_ref<const std::string&>().empty()) {
        return Bad(fmt::format(
            "every entry of 'task_ids' must be a task id string such as "
            "\"shell-1\" (got {})",
            id.dump()));
      }
      add(id.get<std::string>());
    }
  }
  if (ids.empty()) {
    return Bad(
        "give the task: {\"task_id\": \"shell-1\"} or several with "
        "{\"task_ids\": [\"shell-1\", \"shell-2\"]}; task_list shows your "
        "tasks");
  }
  return ids;
}

Status CheckKnownArguments(const Json& args,
                           const std::vector<std::string_view>& known) {
  if (!args.is_object())
    return {};
  for (const auto& [key, value] : args.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string names;
      for (auto name : known)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      return Bad(fmt::format("unknown argument '{}'; this tool takes: {}", key,
                             names));
    }
  }
  return {};
}

std::string StringField(const Json& object, std::string_view key) {
  if (!object.is_object())
    return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t IntField(const Json& object, std::string_view key, int64_t fallback) {
  if (!object.is_object())
    return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number())
    return fallback;
  return it->get<int64_t>();
}

}  // namespace baton::mcp
