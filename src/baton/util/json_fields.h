// Typed JSON objects, field by field. A struct lists its fields once, in a
// `Fields(v)` member template; that one list drives the checked decoder
// (each field's presence, type, range and size checked, errors naming the
// field, no exceptions), the text encoder, and the documentation of the
// fields. Also the one JSON string writer and a parser with limits. Knows
// nothing of tasks: the protocol's messages are in ipc/messages.h.
//
//   struct KillRequest {
//     std::vector<std::string> tasks;
//     std::string reason;
//     template <class V> void Fields(V& v) {
//       v("tasks", tasks, {.required = true, .non_empty = true});
//       v("reason", reason, {.doc = "why, for people"});
//     }
//   };
//   auto request = DecodeObject<KillRequest>(json, "kill request");
#ifndef BATON_UTIL_JSON_FIELDS_H_
#define BATON_UTIL_JSON_FIELDS_H_

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/util/result.h"

namespace baton {

using Json = nlohmann::json;

// How one field is checked and documented. Written with designated
// initializers: {.required = true, .doc = "..."}.
struct FieldRules {
  bool required = false;
  bool non_empty = false;  // Strings and lists.
  // Bounds, for input from outside (0 = none): each string (in lists and
  // maps too), and the items of lists and maps.
  size_t max_bytes = 0;
  size_t max_items = 0;
  // Integers, durations; reals take them too, and `above_min` makes `min`
  // itself out of bounds for them ("above 0").
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  bool above_min = false;
  // Encoding leaves the field out when it is null, "" or an empty list.
  bool omit_when_empty = false;
  std::string_view doc;  // For the protocol's documentation.
  // A valid value as JSON text (`"2G"`, `["make test"]`), shown in the
  // errors and schemas of MCP tools' arguments (mcp/arguments.h).
  std::string_view example;
  // What leaving it out means ("no limit"): MCP schemas say "default: ...",
  // and a refused duration "leave it out for ...".
  std::string_view when_absent;
};

// Names of an enum on the wire. Specialize with
//   static constexpr std::pair<E, std::string_view> kNames[] = {...};
template <class E>
struct JsonEnum;

namespace json_fields_internal {

// `Fields` is a member template returning void: naming it with any
// visitor type is valid without instantiating its body.
template <class T>
concept HasFields = requires(T& t, int& v) {
  t.Fields(v);
};
template <class T>
concept NamedEnum = std::is_enum_v<T> && requires {
  JsonEnum<T>::kNames;
};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

std::string_view TypeOf(const Json& value);

}  // namespace json_fields_internal

// The names of a named enum, in order: for a schema's "enum".
template <json_fields_internal::NamedEnum E>
std::vector<std::string_view> EnumNames() {
  std::vector<std::string_view> names;
  for (const auto& [value, name] : JsonEnum<E>::kNames)
    names.push_back(name);
  return names;
}

// The name of `value` ("" for a value without one).
template <json_fields_internal::NamedEnum E>
std::string_view EnumName(E value) {
  for (const auto& [known, name] : JsonEnum<E>::kNames) {
    if (known == value)
      return name;
  }
  return {};
}

// The value named `name`; nullopt for a name that is not one.
template <json_fields_internal::NamedEnum E>
std::optional<E> EnumFromName(std::string_view name) {
  for (const auto& [value, known] : JsonEnum<E>::kNames) {
    if (known == name)
      return value;
  }
  return std::nullopt;
}

// `text` as a JSON string literal, quotes included. Invalid UTF-8 becomes
// U+FFFD, so the line stays valid JSON whatever the bytes were.
void AppendJsonString(std::string& out, std::string_view text);

// Checks a text for what no protocol string may hold: NUL bytes. (The
// parser already refuses invalid UTF-8.)
bool HasNul(std::string_view text);
// Whether `text` is valid UTF-8 (what a JSON string can carry exactly).
bool IsValidUtf8(std::string_view text);

// ---- decoding ----------------------------------------------------------

class JsonDecoder;

// The decoders of one value; `path` names it in errors ("argv[2]").
Status DecodeValue(const Json& in, std::string& out, const FieldRules& rules,
                   std::string_view path);
Status DecodeValue(const Json& in, bool& out, const FieldRules& rules,
                   std::string_view path);
Status DecodeValue(const Json& in, int64_t& out, const FieldRules& rules,
                   std::string_view path);
Status DecodeValue(const Json& in, double& out, const FieldRules& rules,
                   std::string_view path);
Status DecodeValue(const Json& in, std::chrono::milliseconds& out,
                   const FieldRules& rules, std::string_view path);
Status DecodeValue(const Json& in, std::map<std::string, std::string>& out,
                   const FieldRules& rules, std::string_view path);
Status DecodeValue(const Json& in, Json& out, const FieldRules& rules,
                   std::string_view path);

// Smaller integer types go through int64_t with their own range.
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, int64_t> &&
         !std::is_same_v<T, bool>) Status
    DecodeValue(const Json& in, T& out, const FieldRules& rules,
                std::string_view path) {
  FieldRules narrowed = rules;
  narrowed.min = std::max<int64_t>(
      rules.min, static_cast<int64_t>(std::numeric_limits<T>::min()));
  if constexpr (sizeof(T) < sizeof(int64_t) || std::is_signed_v<T>) {
    narrowed.max = std::min<int64_t>(
        rules.max, static_cast<int64_t>(std::numeric_limits<T>::max()));
  }
  int64_t wide = 0;
  if (auto ok = DecodeValue(in, wide, narrowed, path); !ok)
    return ok;
  out = static_cast<T>(wide);
  return {};
}

template <json_fields_internal::NamedEnum E>
Status DecodeValue(const Json& in, E& out, const FieldRules&,
                   std::string_view path) {
  std::string names;
  if (in.is_string()) {
    const auto& text = in.get_ref<const std::string&>();
    for (const auto& [value, name] : JsonEnum<E>::kNames) {
      if (name == text) {
        out = value;
        return {};
      }
    }
  }
  for (const auto& [value, name] : JsonEnum<E>::kNames)
    names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", name);
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("'{}' must be one of {}", path, names));
}

template <class T>
Status DecodeValue(const Json& in, std::optional<T>& out,
                   const FieldRules& rules, std::string_view path) {
  if (in.is_null()) {
    out.reset();
    return {};
  }
  T value{};
  if (auto ok = DecodeValue(in, value, rules, path); !ok)
    return ok;
  out = std::move(value);
  return {};
}

template <class T>
Status DecodeValue(const Json& in, std::vector<T>& out, const FieldRules& rules,
                   std::string_view path) {
  size_t max_items = rules.max_items ? rules.max_items : SIZE_MAX;
  if (!in.is_array()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' must be a list, not {}", path,
                                 json_fields_internal::TypeOf(in)));
  }
  if (in.size() > max_items) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' has {} items; at most {} are allowed",
                                 path, in.size(), max_items));
  }
  if (rules.non_empty && in.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' must not be empty", path));
  }
  FieldRules item_rules = rules;
  item_rules.non_empty = false;
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    T item{};
    if (auto ok = DecodeValue(in[i], item, item_rules,
                              fmt::format("{}[{}]", path, i));
        !ok) {
      return ok;
    }
    out.push_back(std::move(item));
  }
  return {};
}

// A struct with Fields: an object, decoded field by field.
template <json_fields_internal::HasFields T>
Status DecodeValue(const Json& in, T& out, const FieldRules& rules,
                   std::string_view path);

// Reads the fields of one object. Each call checks one field; the first
// error sticks and later calls do nothing.
class JsonDecoder {
 public:
  // `what` names the object in errors ("run request"); `prefix` is put
  // before each field's name ("task." for a nested object).
  JsonDecoder(const Json& object, std::string what, std::string prefix = "")
      : object_(object), what_(std::move(what)), prefix_(std::move(prefix)) {}

  template <class T>
  void operator()(std::string_view key, T& value,
                  const FieldRules& rules = {}) {
    known_.push_back(key);
    if (error_)
      return;
    auto it = object_.find(key);
    if (it == object_.end() || (it->is_null() && !rules.required)) {
      if (rules.required)
        Fail(fmt::format("'{}{}' is required", prefix_, key));
      return;
    }
    if (auto ok = DecodeValue(*it, value, rules, prefix_ + std::string(key));
        !ok) {
      Fail(ok.error().message);
      return;
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (rules.non_empty && value.empty())
        Fail(fmt::format("'{}{}' must not be empty", prefix_, key));
    }
  }

  // Marks a key as known without decoding it (an envelope's "id").
  void Known(std::string_view key) { known_.push_back(key); }

  // The first error, or, with `reject_unknown`, a key no field named (a
  // typo, or a field of a newer protocol) as an error.
  Status Finish(bool reject_unknown) const;

 private:
  void Fail(std::string message);

  const Json& object_;
  std::string what_;
  std::string prefix_;
  std::vector<std::string_view> known_;
  std::optional<Error> error_;
};

template <json_fields_internal::HasFields T>
Status DecodeValue(const Json& in, T& out, const FieldRules&,
                   std::string_view path) {
  if (!in.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' must be an object, not {}", path,
                                 json_fields_internal::TypeOf(in)));
  }
  JsonDecoder decoder(in, "", std::string(path) + ".");
  out.Fields(decoder);
  return decoder.Finish(false);
}

// Decodes a whole object of type T. `what` names it in errors.
template <class T>
Result<T> DecodeObject(const Json& in, std::string_view what,
                       bool reject_unknown) {
  if (!in.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} must be a JSON object, not {}", what,
                                 json_fields_internal::TypeOf(in)));
  }
  T out{};
  JsonDecoder decoder(in, std::string(what));
  out.Fields(decoder);
  if (auto ok = decoder.Finish(reject_unknown); !ok)
    return std::unexpected(ok.error());
  return out;
}

// ---- encoding ----------------------------------------------------------

void EncodeValue(std::string& out, const std::string& value);
void EncodeValue(std::string& out, std::string_view value);
void EncodeValue(std::string& out, bool value);
void EncodeValue(std::string& out, int64_t value);
void EncodeValue(std::string& out, double value);
void EncodeValue(std::string& out, std::chrono::milliseconds value);
void EncodeValue(std::string& out,
                 const std::map<std::string, std::string>& value);
void EncodeValue(std::string& out, const Json& value);

template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, int64_t> &&
         !std::is_same_v<T, bool>) void EncodeValue(std::string& out, T value) {
  fmt::format_to(std::back_inserter(out), "{}", value);
}

template <json_fields_internal::NamedEnum E>
void EncodeValue(std::string& out, E value) {
  for (const auto& [known, name] : JsonEnum<E>::kNames) {
    if (known == value)
      return AppendJsonString(out, name);
  }
  out += "null";
}

template <class T>
void EncodeValue(std::string& out, const std::optional<T>& value) {
  if (!value) {
    out += "null";
    return;
  }
  EncodeValue(out, *value);
}

template <class T>
void EncodeValue(std::string& out, const std::vector<T>& value) {
  out.push_back('[');
  for (size_t i = 0; i < value.size(); ++i) {
    if (i)
      out.push_back(',');
    EncodeValue(out, value[i]);
  }
  out.push_back(']');
}

namespace json_fields_internal {
template <class T>
bool IsEmptyValue(const T& value) {
  if constexpr (IsOptional<T>::value) {
    return !value.has_value();
  } else if constexpr (requires { value.empty(); }) {
    return value.empty();
  } else {
    return false;
  }
}
}  // namespace json_fields_internal

// Writes an object's fields as text, in the order Fields lists them.
class JsonEncoder {
 public:
  explicit JsonEncoder(std::string& out) : out_(out) { out_.push_back('{'); }
  template <class T>
  void operator()(std::string_view key, const T& value,
                  const FieldRules& rules = {}) {
    if (rules.omit_when_empty && json_fields_internal::IsEmptyValue(value))
      return;
    if (!std::exchange(first_, false))
      out_.push_back(',');
    AppendJsonString(out_, key);
    out_.push_back(':');
    EncodeValue(out_, value);
  }
  void Finish() { out_.push_back('}'); }

 private:
  std::string& out_;
  bool first_ = true;
};

template <json_fields_internal::HasFields T>
void EncodeValue(std::string& out, const T& value) {
  JsonEncoder encoder(out);
  // Fields takes a non-const object to serve the decoder too; the encoder
  // only reads.
  const_cast<T&>(value).Fields(encoder);
  encoder.Finish();
}

template <class T>
std::string EncodeObject(const T& value) {
  std::string out;
  EncodeValue(out, value);
  return out;
}

// ---- documentation -----------------------------------------------------

// One row per field: what the protocol's documentation shows.
struct FieldDoc {
  std::string name;
  std::string type;  // "string", "list of string", "`all` \\| `new`", ...
  bool required = false;
  std::string doc;
  FieldRules rules;  // Its bounds (rules.doc is `doc`'s source).
};

namespace json_fields_internal {
template <class T>
std::string TypeName();
}

class JsonFieldDocs {
 public:
  template <class T>
  void operator()(std::string_view key, const T&,
                  const FieldRules& rules = {}) {
    rows_.push_back({std::string(key), json_fields_internal::TypeName<T>(),
                     rules.required, std::string(rules.doc), rules});
  }
  const std::vector<FieldDoc>& rows() const { return rows_; }

 private:
  std::vector<FieldDoc> rows_;
};

template <class T>
std::vector<FieldDoc> DocumentFields() {
  T value{};
  JsonFieldDocs docs;
  value.Fields(docs);
  return docs.rows();
}

namespace json_fields_internal {
template <class T>
std::string TypeName() {
  if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
    return "milliseconds";
  } else if constexpr (std::is_integral_v<T>) {
    return "integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "number";
  } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
    return "object of strings";
  } else if constexpr (std::is_same_v<T, Json>) {
    return "any JSON";
  } else if constexpr (NamedEnum<T>) {
    std::string names;
    for (const auto& [value, name] : JsonEnum<T>::kNames)
      names += fmt::format("{}`{}`", names.empty() ? "" : " \\| ", name);
    return names;
  } else if constexpr (IsOptional<T>::value) {
    return TypeName<typename T::value_type>() + " or null";
  } else if constexpr (IsVector<T>::value) {
    return "list of " + TypeName<typename T::value_type>();
  } else {
    return "object";
  }
}
}  // namespace json_fields_internal

// ---- parsing -------------------------------------------------------------

struct JsonParseLimits {
  size_t max_depth = 64;  // Objects and arrays inside each other.
};

// A parsed document, and the exact text of each number among the top-level
// object's members that does not fit a 64-bit integer (so an id such as
// 18446744073709551616 or 1e400 can be echoed exactly as it came).
struct ParsedJson {
  Json value;
  std::map<std::string, std::string, std::less<>> raw_numbers;
};

// Parses `text` without exceptions and without recursion beyond
// `limits.max_depth` (a line of 60,000 '[' must not overflow the stack).
// Fails with kInvalidArgument and where the text went wrong.
Result<ParsedJson> ParseJson(std::string_view text,
                             const JsonParseLimits& limits = {});

// ---- lenient reading -----------------------------------------------------

// For JSON whose shape is advice, not a contract: the agent CLIs' streams
// (a newer CLI may send anything), records baton wrote and reads back
// (journals, events.jsonl), events rendered for people. A member that is
// missing, or of another type, or an `object` that is no object, reads as
// the fallback: never an error, never an exception (nlohmann's value()
// throws on a type mismatch). A request from outside is decoded with
// DecodeObject instead, and refused with the field named.
std::string StringAt(const Json& object, std::string_view key,
                     std::string_view fallback = "");
int64_t IntAt(const Json& object, std::string_view key, int64_t fallback = 0);
bool BoolAt(const Json& object, std::string_view key, bool fallback = false);
// The member if it is an object (an array), else an empty one.
const Json& ObjectAt(const Json& object, std::string_view key);
const Json& ArrayAt(const Json& object, std::string_view key);
// The member whatever its type, or null.
const Json& MemberAt(const Json& object, std::string_view key);

}  // namespace baton

#endif  // BATON_UTIL_JSON_FIELDS_H_
