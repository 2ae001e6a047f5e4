// An MCP tool's arguments, described once. A tool's arguments are a struct
// whose `Fields(v)` lists each one (name, member, FieldRules with its
// bounds, description and example), as the socket protocol's messages do
// (util/json_fields.h); run and delegate share the protocol's own groups
// (ScheduleFields, SlurmFields). From that one list come both
//   - the tool's inputSchema: ArgumentSchema<T>(), and
//   - its parsing: ParseArguments<T>(args), each value's type and bounds
//     checked, an unknown name refused, and every message one a model can
//     act on (the argument, the rule, an example, what it sent).
// Rules across arguments are the request's own Validate() (ipc/codec.cc),
// which batond applies to every front end.
#ifndef BATON_MCP_ARGUMENTS_H_
#define BATON_MCP_ARGUMENTS_H_

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/util/json_fields.h"
#include "baton/util/result.h"

namespace baton::mcp {

using Json = nlohmann::json;

// ---- value types beyond JSON's own -------------------------------------

// A duration in seconds, fractions allowed, within its rules' `min` and
// `max` (in seconds); without them, above 0 and at most 366 days.
struct Seconds {
  double value = 0;
  // At least 1 ms (a tiny positive duration is not "none").
  std::chrono::milliseconds Milliseconds() const;
};

// A size in bytes written for people: "2G", "512M" (util/byte_size.h).
struct ByteSize {
  int64_t bytes = 0;
};

// ---- parsing -------------------------------------------------------------

// The argument `name` of `args`, or nullptr when absent or null.
const Json* FindArgument(const Json& args, std::string_view name);

Status ParseArgument(const Json& in, std::string& out, const FieldRules& rules,
                     std::string_view name);
Status ParseArgument(const Json& in, bool& out, const FieldRules& rules,
                     std::string_view name);
Status ParseArgument(const Json& in, int64_t& out, const FieldRules& rules,
                     std::string_view name);
Status ParseArgument(const Json& in, double& out, const FieldRules& rules,
                     std::string_view name);
Status ParseArgument(const Json& in, Seconds& out, const FieldRules& rules,
                     std::string_view name);
Status ParseArgument(const Json& in, ByteSize& out, const FieldRules& rules,
                     std::string_view name);
// A list of non-empty strings.
Status ParseArgument(const Json& in, std::vector<std::string>& out,
                     const FieldRules& rules, std::string_view name);
// Variables: names without '=', string values.
Status ParseArgument(const Json& in, std::map<std::string, std::string>& out,
                     const FieldRules& rules, std::string_view name);

namespace arguments_internal {
Status NotOneOf(const Json& in, std::string_view name,
                const std::vector<std::string_view>& names,
                const FieldRules& rules);
}

template <json_fields_internal::NamedEnum E>
Status ParseArgument(const Json& in, E& out, const FieldRules& rules,
                     std::string_view name) {
  if (const auto* text = in.get_ptr<const std::string*>()) {
    for (const auto& [value, known] : JsonEnum<E>::kNames) {
      if (known == *text) {
        out = value;
        return {};
      }
    }
  }
  return arguments_internal::NotOneOf(in, name, EnumNames<E>(), rules);
}

template <class T>
Status ParseArgument(const Json& in, std::optional<T>& out,
                     const FieldRules& rules, std::string_view name) {
  T value{};
  if (auto ok = ParseArgument(in, value, rules, name); !ok)
    return ok;
  out = std::move(value);
  return {};
}

// Reads a tool's arguments field by field; the first error sticks.
class ArgumentReader {
 public:
  explicit ArgumentReader(const Json& args) : args_(args) {}

  template <class T>
  void operator()(std::string_view name, T& value,
                  const FieldRules& rules = {}) {
    known_.push_back(name);
    if (error_)
      return;
    const Json* given = FindArgument(args_, name);
    if (!given) {
      if (rules.required)
        error_ = Missing(name, rules);
      return;
    }
    if (auto ok = ParseArgument(*given, value, rules, name); !ok)
      error_ = ok.error();
  }

  // The first error, else the first argument no field named (a typo
  // should not silently do nothing).
  Status Finish() const;

 private:
  static Error Missing(std::string_view name, const FieldRules& rules);

  const Json& args_;
  std::vector<std::string_view> known_;
  std::optional<Error> error_;
};

// The arguments of one call, parsed into T (whose defaults stand for what
// was left out).
template <class T>
Result<T> ParseArguments(const Json& args) {
  if (!args.is_null() && !args.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the arguments must be a JSON object of named values");
  }
  T out{};
  ArgumentReader reader(args);
  out.Fields(reader);
  if (auto ok = reader.Finish(); !ok)
    return std::unexpected(ok.error());
  return out;
}

// ---- the schema ------------------------------------------------------------

Json SchemaOf(const std::string*, const FieldRules& rules);
Json SchemaOf(const bool*, const FieldRules& rules);
Json SchemaOf(const int64_t*, const FieldRules& rules);
Json SchemaOf(const double*, const FieldRules& rules);
Json SchemaOf(const Seconds*, const FieldRules& rules);
Json SchemaOf(const ByteSize*, const FieldRules& rules);
Json SchemaOf(const std::vector<std::string>*, const FieldRules& rules);
Json SchemaOf(const std::map<std::string, std::string>*,
              const FieldRules& rules);

template <json_fields_internal::NamedEnum E>
Json SchemaOf(const E*, const FieldRules&) {
  return {{"type", "string"}, {"enum", EnumNames<E>()}};
}
template <class T>
Json SchemaOf(const std::optional<T>*, const FieldRules& rules) {
  return SchemaOf(static_cast<const T*>(nullptr), rules);
}

// Writes the JSON Schema of a tool's arguments, field by field.
class ArgumentSchemaWriter {
 public:
  template <class T>
  void operator()(std::string_view name, const T&,
                  const FieldRules& rules = {}) {
    Add(name, SchemaOf(static_cast<const T*>(nullptr), rules), rules);
  }
  Json Finish() &&;

 private:
  void Add(std::string_view name, Json schema, const FieldRules& rules);

  Json properties_ = Json::object();
  Json required_ = Json::array();
};

// The inputSchema of a tool whose arguments are T.
template <class T>
Json ArgumentSchema() {
  T value{};
  ArgumentSchemaWriter writer;
  value.Fields(writer);
  return std::move(writer).Finish();
}

}  // namespace baton::mcp

#endif  // BATON_MCP_ARGUMENTS_H_
