#include "baton/util/json_fields.h"

#include <algorithm>
#include <cmath>

namespace baton {
namespace json_fields_internal {

std::string_view TypeOf(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::number_float:
      return "a fractional number";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    default:
      return "binary data";
  }
}

}  // namespace json_fields_internal

using json_fields_internal::TypeOf;

namespace {

// The length of the valid UTF-8 sequence at text[i], or 0.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  size_t n;
  uint32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size())
    return 0;
  uint32_t code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return n;
}

Status Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(text, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}",
                         static_cast<unsigned>(c));
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0)
      return false;
    i += n;
  }
  return true;
}

bool HasNul(std::string_view text) {
  return text.find('\0') != std::string_view::npos;
}

Status DecodeValue(const Json& in, std::string& out, const FieldRules& rules,
                   std::string_view path) {
  if (!in.is_string()) {
    return Invalid(
        fmt::format("'{}' must be a string, not {}", path, TypeOf(in)));
  }
  const auto& text = in.get_ref<const std::string&>();
  size_t max = rules.max_bytes ? rules.max_bytes : SIZE_MAX;
  if (text.size() > max) {
    return Invalid(fmt::format("'{}' is {} bytes long; at most {} are allowed",
                               path, text.size(), max));
  }
  if (HasNul(text)) {
    return Invalid(fmt::format(
        "'{}' contains a NUL byte, which no command, path or name can hold",
        path));
  }
  out = text;
  return {};
}

Status DecodeValue(const Json& in, bool& out, const FieldRules&,
                   std::string_view path) {
  if (!in.is_boolean()) {
    return Invalid(
        fmt::format("'{}' must be true or false, not {}", path, TypeOf(in)));
  }
  out = in.get<bool>();
  return {};
}

Status DecodeValue(const Json& in, int64_t& out, const FieldRules& rules,
                   std::string_view path) {
  auto range = [&] {
    if (rules.min == std::numeric_limits<int64_t>::min()) {
      return fmt::format("at most {}", rules.max);
    }
    if (rules.max == std::numeric_limits<int64_t>::max()) {
      return fmt::format("at least {}", rules.min);
    }
    return fmt::format("from {} to {}", rules.min, rules.max);
  };
  if (in.is_number_unsigned()) {
    uint64_t value = in.get<uint64_t>();
    if (value > static_cast<uint64_t>(rules.max) ||
        (rules.min > 0 && value < static_cast<uint64_t>(rules.min))) {
      return Invalid(fmt::format("'{}' is {}; it must be an integer {}", path,
                                 value, range()));
    }
    out = static_cast<int64_t>(value);
    return {};
  }
  if (in.is_number_integer()) {
    int64_t value = in.get<int64_t>();
    if (value < rules.min || value > rules.max) {
      return Invalid(fmt::format("'{}' is {}; it must be an integer {}", path,
                                 value, range()));
    }
    out = value;
    return {};
  }
  return Invalid(fmt::format("'{}' must be an integer {}, not {}", path,
                             range(), TypeOf(in)));
}

Status DecodeValue(const Json& in, double& out, const FieldRules& rules,
                   std::string_view path) {
  if (!in.is_number()) {
    return Invalid(
        fmt::format("'{}' must be a number, not {}", path, TypeOf(in)));
  }
  out = in.get<double>();
  if (!std::isfinite(out))
    return Invalid(fmt::format("'{}' must be a finite number", path));
  if (rules.min != std::numeric_limits<int64_t>::min() &&
      (out < static_cast<double>(rules.min) ||
       (rules.above_min && out == static_cast<double>(rules.min)))) {
    return Invalid(fmt::format("'{}' must be {} {}", path,
                               rules.above_min ? "above" : "at least",
                               rules.min));
  }
  if (rules.max != std::numeric_limits<int64_t>::max() &&
      out > static_cast<double>(rules.max)) {
    return Invalid(fmt::format("'{}' must be at most {}", path, rules.max));
  }
  return {};
}

Status DecodeValue(const Json& in, std::chrono::milliseconds& out,
                   const FieldRules& rules, std::string_view path) {
  FieldRules ms = rules;
  ms.min = std::max<int64_t>(rules.min, 0);
  int64_t value = 0;
  if (auto ok = DecodeValue(in, value, ms, path); !ok) {
    return Invalid(ok.error().message + " (milliseconds)");
  }
  out = std::chrono::milliseconds(value);
  return {};
}

Status DecodeValue(const Json& in, std::map<std::string, std::string>& out,
                   const FieldRules& rules, std::string_view path) {
  if (!in.is_object()) {
    return Invalid(fmt::format("'{}' must be an object of strings, not {}",
                               path, TypeOf(in)));
  }
  size_t max_items = rules.max_items ? rules.max_items : SIZE_MAX;
  if (in.size() > max_items) {
    return Invalid(fmt::format("'{}' has {} entries; at most {} are allowed",
                               path, in.size(), max_items));
  }
  out.clear();
  for (const auto& [key, value] : in.items()) {
    if (HasNul(key)) {
      return Invalid(fmt::format("a name in '{}' contains a NUL byte", path));
    }
    std::string text;
    if (auto ok =
            DecodeValue(value, text, rules, fmt::format("{}.{}", path, key));
        !ok) {
      return ok;
    }
    out.emplace(key, std::move(text));
  }
  return {};
}

Status DecodeValue(const Json& in, Json& out, const FieldRules&,
                   std::string_view) {
  out = in;
  return {};
}

void JsonDecoder::Fail(std::string message) {
  if (!what_.empty())
    message = what_ + ": " + message;
  error_ = Error{ErrorCode::kInvalidArgument, std::move(message)};
}

Status JsonDecoder::Finish(bool reject_unknown) const {
  if (error_)
    return std::unexpected(*error_);
  if (!reject_unknown)
    return {};
  for (const auto& [key, value] : object_.items()) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
      std::string names;
      for (std::string_view name : known_)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      return Invalid(fmt::format("{}: unknown field '{}{}' (known: {})", what_,
                                 prefix_, key, names.empty() ? "none" : names));
    }
  }
  return {};
}

void EncodeValue(std::string& out, const std::string& value) {
  AppendJsonString(out, value);
}

void EncodeValue(std::string& out, std::string_view value) {
  AppendJsonString(out, value);
}

void EncodeValue(std::string& out, bool value) {
  out += value ? "true" : "false";
}

void EncodeValue(std::string& out, int64_t value) {
  fmt::format_to(std::back_inserter(out), "{}", value);
}

void EncodeValue(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}

void EncodeValue(std::string& out, std::chrono::milliseconds value) {
  EncodeValue(out, static_cast<int64_t>(value.count()));
}

void EncodeValue(std::string& out,
                 const std::map<std::string, std::string>& value) {
  out.push_back('{');
  bool first = true;
  for (const auto& [name, text] : value) {
    if (!std::exchange(first, false))
      out.push_back(',');
    AppendJsonString(out, name);
    out.push_back(':');
    AppendJsonString(out, text);
  }
  out.push_back('}');
}

void EncodeValue(std::string& out, const Json& value) {
  out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// ---- parsing -------------------------------------------------------------

namespace {

// nlohmann's SAX events into a document, with a depth limit (its own DOM
// builder has none) and the raw text of big top-level numbers. nlohmann's
// SAX parser itself is iterative, so only the depth of what it builds
// needs a bound.
class LimitedDomBuilder {
 public:
  LimitedDomBuilder(ParsedJson& out, size_t max_depth)
      : out_(out), max_depth_(max_depth) {}

  bool null() { return Add(Json(nullptr)); }
  bool boolean(bool value) { return Add(Json(value)); }
  bool number_integer(Json::number_integer_t value) { return Add(Json(value)); }
  bool number_unsigned(Json::number_unsigned_t value) {
    return Add(Json(value));
  }
  bool number_float(Json::number_float_t value, const std::string& text) {
    if (stack_.size() == 1 && stack_.back()->is_object())
      out_.raw_numbers[key_] = text;
    return Add(Json(value));
  }
  bool string(std::string& value) { return Add(Json(std::move(value))); }
  bool binary(Json::binary_t&) { return Fail("binary data"); }
  bool start_object(size_t) { return Open(Json::object()); }
  bool key(std::string& key) {
    key_ = key;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(size_t) { return Open(Json::array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(size_t position, const std::string& token,
                   const nlohmann::detail::exception&) {
    if (error_.empty()) {
      error_ = fmt::format("not valid JSON at byte {} (near '{}')", position,
                           token.substr(0, 40));
    }
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  // Places `value` in the current container (or as the root).
  Json* Place(Json value) {
    if (stack_.empty()) {
      out_.value = std::move(value);
      return &out_.value;
    }
    Json& parent = *stack_.back();
    if (parent.is_object()) {
      Json& slot = parent[key_];
      slot = std::move(value);
      return &slot;
    }
    parent.push_back(std::move(value));
    return &parent.back();
  }
  bool Add(Json value) {
    Place(std::move(value));
    return true;
  }
  bool Open(Json container) {
    if (stack_.size() >= max_depth_) {
      return Fail(fmt::format(
          "nested deeper than {} levels of objects and lists", max_depth_));
    }
    stack_.push_back(Place(std::move(container)));
    return true;
  }

  ParsedJson& out_;
  size_t max_depth_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string error_;
};

}  // namespace

Result<ParsedJson> ParseJson(std::string_view text,
                             const JsonParseLimits& limits) {
  ParsedJson out;
  LimitedDomBuilder builder(out, limits.max_depth);
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& e) {
    // nlohmann reports through parse_error; only allocation failures land
    // here.
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("cannot parse JSON: {}", e.what()));
  }
  if (!ok) {
    return MakeError(ErrorCode::kInvalidArgument, builder.error().empty()
                                                      ? "not valid JSON"
                                                      : builder.error());
  }
  return out;
}

namespace {
// The member of `object` named `key`, or nullptr.
const Json* FindMember(const Json& object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}
}  // namespace

std::string StringAt(const Json& object, std::string_view key,
                     std::string_view fallback) {
  const Json* member = FindMember(object, key);
  return member && member->is_string() ? member->get_ref<const std::string&>()
                                       : std::string(fallback);
}

int64_t IntAt(const Json& object, std::string_view key, int64_t fallback) {
  const Json* member = FindMember(object, key);
  if (!member || !member->is_number_integer())
    return fallback;
  // An unsigned value past int64_t's range would wrap: out of range is as
  // good as absent.
  if (member->is_number_unsigned() &&
      member->get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return fallback;
  }
  return member->get<int64_t>();
}

bool BoolAt(const Json& object, std::string_view key, bool fallback) {
  const Json* member = FindMember(object, key);
  return member && member->is_boolean() ? member->get<bool>() : fallback;
}

const Json& ObjectAt(const Json& object, std::string_view key) {
  static const Json kEmpty = Json::object();
  const Json* member = FindMember(object, key);
  return member && member->is_object() ? *member : kEmpty;
}

const Json& ArrayAt(const Json& object, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json* member = FindMember(object, key);
  return member && member->is_array() ? *member : kEmpty;
}

const Json& MemberAt(const Json& object, std::string_view key) {
  static const Json kNull;
  const Json* member = FindMember(object, key);
  return member ? *member : kNull;
}

}  // namespace baton
