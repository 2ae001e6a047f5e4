#include "baton/daemon/config_values.h"

#include <fmt/format.h>

#include <cmath>

#include "baton/core/task.h"
#include "baton/util/duration.h"

namespace baton::config_values {

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

std::optional<std::string> String(Checker& check, const toml::node& node,
                                  const std::string& key) {
  if (const auto* value = node.as_string())
    return value->get();
  check.Fail(node.source(), key, "must be a string, not " + TypeName(node));
  return std::nullopt;
}

std::optional<bool> Bool(Checker& check, const toml::node& node,
                         const std::string& key) {
  if (const auto* value = node.as_boolean())
    return value->get();
  check.Fail(node.source(), key,
             "must be true or false, not " + TypeName(node));
  return std::nullopt;
}

std::optional<int64_t> Count(Checker& check, const toml::node& node,
                             const std::string& key) {
  if (const auto* value = node.as_integer(); value && value->get() > 0)
    return value->get();
  check.Fail(node.source(), key, "must be a whole number of at least 1");
  return std::nullopt;
}

std::optional<double> AnyNumber(const toml::node& node) {
  if (const auto* value = node.as_integer())
    return static_cast<double>(value->get());
  if (const auto* real = node.as_floating_point())
    return real->get();
  return std::nullopt;
}

std::optional<double> Dollars(Checker& check, const toml::node& node,
                              const std::string& key) {
  std::optional<double> amount = AnyNumber(node);
  if (amount && IsCostBudget(*amount))
    return amount;
  check.Fail(node.source(), key, std::string("must be ") + kCostBudgetRule);
  return std::nullopt;
}

std::optional<int64_t> CpuMillis(Checker& check, const toml::node& node,
                                 const std::string& key) {
  std::optional<double> cpus = AnyNumber(node);
  if (cpus && *cpus >= 0.01 && *cpus <= 65536)
    return std::llround(*cpus * 1000);
  check.Fail(node.source(), key,
             "must be a number of CPUs from 0.01 to 65536, e.g. 1.5");
  return std::nullopt;
}

std::optional<std::vector<std::string>> StringList(Checker& check,
                                                   const toml::node& node,
                                                   const std::string& key) {
  if (const auto* value = node.as_string())
    return std::vector<std::string>{value->get()};
  const auto* array = node.as_array();
  if (!array) {
    check.Fail(node.source(), key,
               "must be a list of strings, not " + TypeName(node));
    return std::nullopt;
  }
  std::vector<std::string> list;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    const auto* value = item.as_string();
    if (!value) {
      check.Fail(item.source(), fmt::format("{}[{}]", key, i),
                 "must be a string, not " + TypeName(item));
      return std::nullopt;
    }
    list.push_back(value->get());
  }
  return list;
}

std::optional<std::chrono::milliseconds> Duration(Checker& check,
                                                  const toml::node& node,
                                                  const std::string& key) {
  std::optional<std::chrono::milliseconds> duration;
  // The bound ParseDuration keeps (1e15 ms), so that no conversion to
  // milliseconds overflows.
  constexpr int64_t kMaxSeconds = 1'000'000'000'000;
  if (const auto* seconds = node.as_integer()) {
    if (seconds->get() > 0 && seconds->get() <= kMaxSeconds)
      duration = std::chrono::seconds(seconds->get());
  } else if (const auto* text = node.as_string()) {
    if (auto parsed = ParseDuration(text->get()); parsed && parsed->count() > 0)
      duration = *parsed;
  }
  if (!duration) {
    check.Fail(node.source(), key,
               "must be a positive duration such as \"30m\", \"1h30m\" or a "
               "number of seconds");
  }
  return duration;
}

}  // namespace baton::config_values
