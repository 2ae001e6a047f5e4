#include "baton/mcp/arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "baton/ipc/wire_types.h"
#include "baton/util/byte_size.h"

namespace baton::mcp {
namespace {

constexpr int64_t kNoMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

Error Bad(std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(message)};
}

// ", e.g. {"name": example}" when the field has an example.
std::string Example(std::string_view name, const FieldRules& rules) {
  if (rules.example.empty())
    return "";
  return fmt::format(", e.g. {{\"{}\": {}}}", name, rules.example);
}

// " (got 0)": what the client sent, cut to a line.
std::string Got(const Json& in) {
  std::string text = in.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 80)
    text = text.substr(0, 77) + "...";
  return fmt::format(" (got {})", text);
}

// "a whole number from 0 to 100" and its kin: the rule, then the example
// and what came.
std::unexpected<Error> Refuse(const Json& in, std::string_view name,
                              std::string_view rule, const FieldRules& rules) {
  return std::unexpected(Bad(fmt::format("argument '{}' must be {}{}{}", name,
                                         rule, Example(name, rules), Got(in))));
}

std::string IntegerRange(const FieldRules& rules) {
  if (rules.min != kNoMin && rules.max != kNoMax)
    return fmt::format(" from {} to {}", rules.min, rules.max);
  if (rules.min != kNoMin)
    return fmt::format(" >= {}", rules.min);
  if (rules.max != kNoMax)
    return fmt::format(" <= {}", rules.max);
  return "";
}

std::string RealRange(const FieldRules& rules) {
  std::string range;
  if (rules.min != kNoMin)
    range = fmt::format(" {} {}", rules.above_min ? "above" : ">=", rules.min);
  if (rules.max != kNoMax) {
    range +=
        fmt::format("{} at most {}", range.empty() ? "" : " and", rules.max);
  }
  return range;
}

bool InRealRange(double value, const FieldRules& rules) {
  if (!std::isfinite(value))
    return false;
  if (rules.min != kNoMin) {
    double min = static_cast<double>(rules.min);
    if (value < min || (rules.above_min && value == min))
      return false;
  }
  return rules.max == kNoMax || value <= static_cast<double>(rules.max);
}

Status TooLong(std::string_view name, size_t bytes, const FieldRules& rules) {
  if (rules.max_bytes == 0 || bytes <= rules.max_bytes)
    return {};
  return std::unexpected(
      Bad(fmt::format("argument '{}' is {} bytes long; at most {} are allowed",
                      name, bytes, rules.max_bytes)));
}

Status TooMany(std::string_view name, size_t items, const FieldRules& rules) {
  if (rules.max_items == 0 || items <= rules.max_items)
    return {};
  return std::unexpected(
      Bad(fmt::format("argument '{}' has {} items; at most {} are allowed",
                      name, items, rules.max_items)));
}

// A JSON number of any kind as a double; nullopt for anything else.
std::optional<double> NumberOf(const Json& in) {
  if (const auto* real = in.get_ptr<const Json::number_float_t*>())
    return *real;
  if (const auto* whole = in.get_ptr<const Json::number_integer_t*>())
    return static_cast<double>(*whole);
  if (const auto* count = in.get_ptr<const Json::number_unsigned_t*>())
    return static_cast<double>(*count);
  return std::nullopt;
}

// A duration's bounds: its rules', else above 0 and at most 366 days.
FieldRules SecondsRules(const FieldRules& rules) {
  FieldRules seconds = rules;
  if (rules.min == kNoMin) {
    seconds.min = 0;
    seconds.above_min = true;
  }
  if (rules.max == kNoMax)
    seconds.max = kMaxTimeoutMs / 1000;
  return seconds;
}

}  // namespace

std::chrono::milliseconds Seconds::Milliseconds() const {
  return std::chrono::milliseconds(
      std::max<int64_t>(1, std::llround(value * 1000.0)));
}

const Json* FindArgument(const Json& args, std::string_view name) {
  if (!args.is_object())
    return nullptr;
  auto it = args.find(name);
  if (it == args.end() || it->is_null())
    return nullptr;
  return &*it;
}

// ---- parsing -------------------------------------------------------------

Status ParseArgument(const Json& in, std::string& out, const FieldRules& rules,
                     std::string_view name) {
  const auto* text = in.get_ptr<const std::string*>();
  if (!text || (rules.non_empty && text->empty()))
    return Refuse(in, name, rules.non_empty ? "a non-empty string" : "a string",
                  rules);
  if (auto ok = TooLong(name, text->size(), rules); !ok)
    return ok;
  out = *text;
  return {};
}

Status ParseArgument(const Json& in, bool& out, const FieldRules& rules,
                     std::string_view name) {
  const auto* flag = in.get_ptr<const bool*>();
  if (!flag)
    return Refuse(in, name, "true or false", rules);
  out = *flag;
  return {};
}

Status ParseArgument(const Json& in, int64_t& out, const FieldRules& rules,
                     std::string_view name) {
  // JSON parsers keep a positive integer unsigned.
  const auto* negative = in.get_ptr<const Json::number_integer_t*>();
  const auto* positive = in.get_ptr<const Json::number_unsigned_t*>();
  bool fits =
      negative || (positive && *positive <= static_cast<uint64_t>(kNoMax));
  int64_t value = negative ? *negative
                  : fits   ? static_cast<int64_t>(*positive)
                           : 0;
  if (!fits || value < rules.min || value > rules.max)
    return Refuse(in, name, "a whole number" + IntegerRange(rules), rules);
  out = value;
  return {};
}

Status ParseArgument(const Json& in, double& out, const FieldRules& rules,
                     std::string_view name) {
  auto number = NumberOf(in);
  if (!number || !InRealRange(*number, rules))
    return Refuse(in, name, "a number" + RealRange(rules), rules);
  out = *number;
  return {};
}

Status ParseArgument(const Json& in, Seconds& out, const FieldRules& rules,
                     std::string_view name) {
  FieldRules seconds = SecondsRules(rules);
  auto number = NumberOf(in);
  if (number && *number <= 0 && seconds.above_min && seconds.min == 0 &&
      !rules.when_absent.empty()) {
    // The one wording of this mistake, the CLI's too (cli/task_start.cc).
    return std::unexpected(
        Bad(fmt::format("argument '{}' must be a number of seconds > 0{}; "
                        "leave it out for {}",
                        name, Got(in), rules.when_absent)));
  }
  if (!number || !InRealRange(*number, seconds)) {
    return Refuse(in, name, "a number of seconds" + RealRange(seconds), rules);
  }
  out.value = *number;
  return {};
}

Status ParseArgument(const Json& in, ByteSize& out, const FieldRules& rules,
                     std::string_view name) {
  const auto* text = in.get_ptr<const std::string*>();
  if (!text)
    return Refuse(in, name, "a size such as \"2G\"", rules);
  auto bytes = ParseByteSize(*text);
  if (!bytes) {
    return std::unexpected(
        Bad(fmt::format("argument '{}': {}{}", name, bytes.error().message,
                        Example(name, rules))));
  }
  if (rules.min != kNoMin && *bytes < rules.min) {
    return Refuse(in, name,
                  fmt::format("at least {}", FormatByteSize(rules.min)), rules);
  }
  out.bytes = *bytes;
  return {};
}

Status ParseArgument(const Json& in, std::vector<std::string>& out,
                     const FieldRules& rules, std::string_view name) {
  if (!in.is_array() || (rules.non_empty && in.empty()))
    return Refuse(in, name, "a list of non-empty strings", rules);
  if (auto ok = TooMany(name, in.size(), rules); !ok)
    return ok;
  std::vector<std::string> strings;
  for (const auto& item : in) {
    const auto* text = item.get_ptr<const std::string*>();
    if (!text || text->empty())
      return Refuse(in, name, "a list of non-empty strings", rules);
    if (auto ok = TooLong(name, text->size(), rules); !ok)
      return ok;
    strings.push_back(*text);
  }
  out = std::move(strings);
  return {};
}

Status ParseArgument(const Json& in, std::map<std::string, std::string>& out,
                     const FieldRules& rules, std::string_view name) {
  if (!in.is_object())
    return Refuse(in, name, "an object of variables", rules);
  if (auto ok = TooMany(name, in.size(), rules); !ok)
    return ok;
  out.clear();
  for (const auto& [key, value] : in.items()) {
    const auto* text = value.get_ptr<const std::string*>();
    if (!text || key.empty() || key.find('=') != std::string::npos) {
      return std::unexpected(Bad(fmt::format(
          "argument '{}': '{}' must be a variable name with a string "
          "value{}",
          name, key, Example(name, rules))));
    }
    if (auto ok = TooLong(name, key.size() + text->size(), rules); !ok)
      return ok;
    out[key] = *text;
  }
  return {};
}

Status arguments_internal::NotOneOf(const Json& in, std::string_view name,
                                    const std::vector<std::string_view>& names,
                                    const FieldRules& rules) {
  std::string list;
  for (auto known : names)
    list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", known);
  return Refuse(in, name, "one of " + list, rules);
}

Error ArgumentReader::Missing(std::string_view name, const FieldRules& rules) {
  return Bad(
      fmt::format("missing argument '{}'{}", name, Example(name, rules)));
}

Status ArgumentReader::Finish() const {
  if (error_)
    return std::unexpected(*error_);
  if (!args_.is_object())
    return {};
  for (const auto& [key, value] : args_.items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end())
      continue;
    std::string names;
    for (auto name : known_)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
    return std::unexpected(
        Bad(fmt::format("unknown argument '{}'; this tool takes: {}", key,
                        names.empty() ? "no arguments" : names)));
  }
  return {};
}

// ---- the schema ------------------------------------------------------------

Json SchemaOf(const std::string*, const FieldRules& rules) {
  Json schema = {{"type", "string"}};
  if (rules.non_empty)
    schema["minLength"] = 1;
  return schema;
}

Json SchemaOf(const bool*, const FieldRules&) {
  return {{"type", "boolean"}};
}

Json SchemaOf(const int64_t*, const FieldRules& rules) {
  Json schema = {{"type", "integer"}};
  if (rules.min != kNoMin)
    schema["minimum"] = rules.min;
  if (rules.max != kNoMax)
    schema["maximum"] = rules.max;
  return schema;
}

Json SchemaOf(const double*, const FieldRules& rules) {
  Json schema = {{"type", "number"}};
  if (rules.min != kNoMin)
    schema[rules.above_min ? "exclusiveMinimum" : "minimum"] = rules.min;
  if (rules.max != kNoMax)
    schema["maximum"] = rules.max;
  return schema;
}

Json SchemaOf(const Seconds*, const FieldRules& rules) {
  return SchemaOf(static_cast<const double*>(nullptr), SecondsRules(rules));
}

Json SchemaOf(const ByteSize*, const FieldRules&) {
  return {{"type", "string"}};
}

Json SchemaOf(const std::vector<std::string>*, const FieldRules& rules) {
  Json schema = {{"type", "array"},
                 {"items", {{"type", "string"}, {"minLength", 1}}}};
  if (rules.non_empty)
    schema["minItems"] = 1;
  if (rules.max_items)
    schema["maxItems"] = rules.max_items;
  return schema;
}

Json SchemaOf(const std::map<std::string, std::string>*,
              const FieldRules& rules) {
  Json schema = {{"type", "object"},
                 {"additionalProperties", {{"type", "string"}}}};
  if (rules.max_items)
    schema["maxProperties"] = rules.max_items;
  return schema;
}

void ArgumentSchemaWriter::Add(std::string_view name, Json schema,
                               const FieldRules& rules) {
  if (!rules.when_absent.empty()) {
    schema["description"] =
        fmt::format("{}; default: {}", rules.doc, rules.when_absent);
  } else if (!rules.doc.empty()) {
    schema["description"] = rules.doc;
  }
  properties_[std::string(name)] = std::move(schema);
  if (rules.required)
    required_.push_back(name);
}

Json ArgumentSchemaWriter::Finish() && {
  Json schema = {{"type", "object"}, {"properties", std::move(properties_)}};
  if (!required_.empty())
    schema["required"] = std::move(required_);
  schema["additionalProperties"] = false;
  return schema;
}

}  // namespace baton::mcp
