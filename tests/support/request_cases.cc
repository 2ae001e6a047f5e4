#include "tests/support/request_cases.h"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "baton/ipc/messages.h"

namespace baton::testing {
namespace {

// The smallest valid arguments of each op.
const std::map<std::string, Json>& Samples() {
  static const std::map<std::string, Json> samples = {
      {"hello", Json::object()},
      {"run", {{"argv", {"true"}}, {"cwd", "/"}}},
      {"delegate", {{"brief", "fix it"}, {"cwd", "/"}}},
      {"rerun", {{"task", "shell-1"}}},
      {"edit", {{"task", "shell-1"}, {"priority", 5}}},
      {"send", {{"task", "agent-1"}, {"message", "go on"}}},
      {"queued", {{"task", "agent-1"}, {"replace", "m-1"}, {"message", "new"}}},
      {"answer", {{"task", "agent-1"}, {"answers", {"1"}}}},
      {"questions", Json::object()},
      {"events", {{"task", "agent-1"}}},
      {"agents", Json::object()},
      {"get", {{"task", "shell-1"}}},
      {"list", Json::object()},
      {"read", {{"task", "shell-1"}}},
      {"kill", {{"tasks", {"shell-1"}}}},
      {"remove", {{"tasks", {"shell-1"}}}},
      {"wait", {{"tasks", {"shell-1"}}, {"timeout_ms", 0}}},
      {"attach", Json::object()},
      {"notices", Json::object()},
      {"daemon_status", Json::object()},
      {"shutdown", Json::object()},
      {"watch", Json::object()},
      {"queue_set", {{"name", "build"}, {"max_running", 2}}},
      {"queue_list", Json::object()},
      {"budget", {{"max_tokens", 1000}}},
      {"audit", {{"task", "shell-1"}, {"limit", 10}}},
      {"worktrees", {{"clean", true}}},
      {"conflicts", Json::object()},
      {"land", {{"tasks", {"agent-3", "agent-4"}}, {"onto", "main"}}},
      {"lands", Json::object()},
      {"metrics", Json::object()},
  };
  return samples;
}

std::string Line(const std::string& op, Json args) {
  args["id"] = 1;
  args["op"] = op;
  return args.dump();
}

bool IsString(const FieldDoc& field) {
  return field.type == "string" || field.type == "string or null";
}
bool IsList(const FieldDoc& field) {
  return field.type.starts_with("list of");
}
bool IsNumber(const FieldDoc& field) {
  return field.type.starts_with("integer") ||
         field.type.starts_with("milliseconds");
}

// A number with a fraction (a budget in dollars).
bool IsReal(const FieldDoc& field) {
  return field.type.starts_with("number");
}

// A value of another type than the field's.
Json Mistyped(const FieldDoc& field) {
  if (field.type.starts_with("bool"))
    return "yes";
  if (IsNumber(field) || IsReal(field))
    return "12";
  if (IsList(field))
    return {{"a", 1}};
  if (field.type.starts_with("object"))
    return Json::array({1});
  return 42;  // Strings and enums.
}

template <class R>
void AddCases(std::vector<RequestCase>& out) {
  const std::string op(R::kOp);
  const Json& sample = Samples().at(op);
  auto add = [&](const FieldDoc& field, std::string how, Json args,
                 bool valid = false) {
    out.push_back(
        {op, field.name, std::move(how), Line(op, std::move(args)), valid});
  };
  for (const FieldDoc& field : DocumentFields<R>()) {
    Json without = sample;
    without.erase(field.name);
    // A run needs `command` or `argv`: the sample has argv. A remove
    // needs `tasks` or `ended`: the sample has tasks.
    bool needed = field.required || (op == "run" && field.name == "argv") ||
                  (op == "remove" && field.name == "tasks");
    add(field, "missing", without, !needed);

    Json mistyped = sample;
    mistyped[field.name] = Mistyped(field);
    add(field, "mistyped", mistyped);

    const FieldRules& rules = field.rules;
    if (rules.max_bytes) {
      std::string big(rules.max_bytes + 1, 'x');
      Json oversized = sample;
      if (IsString(field)) {
        oversized[field.name] = big;
      } else if (IsList(field)) {
        oversized[field.name] = Json::array({big});
      } else {
        oversized[field.name] = {{"NAME", big}};
      }
      add(field, "oversized", oversized);
    }
    if (rules.max_items && IsList(field)) {
      Json many = sample;
      many[field.name] = Json::array();
      for (size_t i = 0; i <= rules.max_items; ++i)
        many[field.name].push_back("x");
      add(field, "too many items", many);
    }
    if (IsNumber(field)) {
      if (rules.max != std::numeric_limits<int64_t>::max()) {
        Json big = sample;
        big[field.name] = rules.max + 1;
        add(field, "above its maximum", big);
      }
      Json negative = sample;
      negative[field.name] =
          rules.min > std::numeric_limits<int64_t>::min() ? rules.min - 1 : -1;
      bool below = rules.min > std::numeric_limits<int64_t>::min() ||
                   field.type.starts_with("milliseconds");
      if (below)
        add(field, "below its minimum", negative);
      Json fraction = sample;
      fraction[field.name] = 1.5;
      add(field, "fractional", fraction);
      Json huge = sample;
      huge[field.name] = 1e300;
      add(field, "huge", huge);
    }
    if (IsReal(field)) {
      // Real fields are amounts, which must be above 0, or settings where
      // 0 means none (`.min = 0`).
      for (double amount : {-1.0, 0.0}) {
        Json bad = sample;
        bad[field.name] = amount;
        add(field, amount < 0 ? "below 0" : "0", bad,
            /*valid=*/amount == 0 && rules.min == 0);
      }
      Json fraction = sample;
      fraction[field.name] = 1.5;
      add(field, "fractional", fraction, /*valid=*/true);
    }
    if (IsString(field) || IsList(field) || field.type.starts_with("object")) {
      Json nul = sample;
      std::string text("a\0b", 3);
      nul[field.name] = IsList(field)     ? Json::array({text})
                        : IsString(field) ? Json(text)
                                          : Json{{"NAME", text}};
      add(field, "holding a NUL byte", nul);
    }
  }
}

template <size_t I = 0>
void AddAll(std::vector<RequestCase>& out) {
  if constexpr (I < std::variant_size_v<Request>) {
    AddCases<std::variant_alternative_t<I, Request>>(out);
    AddAll<I + 1>(out);
  }
}

}  // namespace

std::vector<RequestCase> ValidRequests() {
  std::vector<RequestCase> out;
  for (const auto& [op, args] : Samples())
    out.push_back({op, "", "valid", Line(op, args), true});
  return out;
}

std::vector<RequestCase> BrokenRequests() {
  std::vector<RequestCase> out;
  AddAll(out);
  return out;
}

}  // namespace baton::testing
