#include "baton/mcp/arguments.h"

#include <gtest/gtest.h>

#include "baton/mcp/tools/start_arguments.h"
#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

// An error's message, or "" when it parsed.
template <class T>
std::string Refusal(const Json& args) {
  auto parsed = ParseArguments<T>(args);
  return parsed ? "" : parsed.error().message;
}

struct Sample {
  std::string name;
  bool flag = false;
  std::optional<int64_t> count;
  std::optional<double> share;
  std::optional<Seconds> timeout_s;
  std::optional<ByteSize> memory;
  std::vector<std::string> items;
  std::map<std::string, std::string> env;
  std::optional<SendMode> mode;
  template <class V>
  void Fields(V& v) {
    v("name", name,
      {.required = true,
       .non_empty = true,
       .max_bytes = 8,
       .example = "\"x\""});
    v("flag", flag);
    v("count", count, {.min = 1, .max = 5, .example = "2"});
    v("share", share, {.min = 0, .max = 10, .above_min = true});
    v("timeout_s", timeout_s);
    v("memory", memory, {.min = 1 << 20});
    v("items", items, {.max_items = 2});
    v("env", env);
    v("mode", mode, {.doc = "how"});
  }
};

TEST(ToolArguments, EachValueIsCheckedWithAMessageTheModelCanActOn) {
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}}), "");
  EXPECT_EQ(Refusal<Sample>(Json::object()),
            "missing argument 'name', e.g. {\"name\": \"x\"}");
  EXPECT_EQ(Refusal<Sample>({{"name", ""}}),
            "argument 'name' must be a non-empty string, e.g. {\"name\": "
            "\"x\"} (got \"\")");
  EXPECT_EQ(Refusal<Sample>({{"name", "123456789"}}),
            "argument 'name' is 9 bytes long; at most 8 are allowed");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"flag", "yes"}}),
            "argument 'flag' must be true or false (got \"yes\")");
  for (const Json& bad : {Json(0), Json(6), Json(2.5), Json("2")}) {
    EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"count", bad}}),
              "argument 'count' must be a whole number from 1 to 5, e.g. "
              "{\"count\": 2} (got " +
                  bad.dump() + ")");
  }
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"share", 0}}),
            "argument 'share' must be a number above 0 and at most 10 (got 0)");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"timeout_s", -1}}),
            "argument 'timeout_s' must be a number of seconds above 0 and at "
            "most 31622400 (got -1)");
  EXPECT_NE(Refusal<Sample>({{"name", "a"}, {"memory", "12Q"}})
                .find("argument 'memory': '12Q' is not a size"),
            std::string::npos);
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"memory", "1K"}}),
            "argument 'memory' must be at least 1 MiB (got \"1K\")");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"items", {"a", ""}}}),
            "argument 'items' must be a list of non-empty strings (got "
            "[\"a\",\"\"])");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"items", {"a", "b", "c"}}}),
            "argument 'items' has 3 items; at most 2 are allowed");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"env", {{"A=B", "c"}}}}),
            "argument 'env': 'A=B' must be a variable name with a string "
            "value");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"mode", "sideways"}}),
            "argument 'mode' must be one of \"followup\", \"steer\" (got "
            "\"sideways\")");
  EXPECT_EQ(Refusal<Sample>({{"name", "a"}, {"nmae", "b"}}),
            "unknown argument 'nmae'; this tool takes: name, flag, count, "
            "share, timeout_s, memory, items, env, mode");
  EXPECT_NE(Refusal<Sample>(Json::array()), "");
}

TEST(ToolArguments, ValuesArriveTyped) {
  // An unknown name is refused even when null; a known one that is null
  // is "not given".
  EXPECT_NE(Refusal<Sample>({{"name", "a"}, {"unset", nullptr}}), "");
  auto parsed = ParseArguments<Sample>({{"name", "a"},
                                        {"flag", true},
                                        {"count", nullptr},
                                        {"share", 0.5},
                                        {"timeout_s", 1e-9},
                                        {"memory", "2M"},
                                        {"items", {"x"}},
                                        {"env", {{"A", "b"}}},
                                        {"mode", "steer"}});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->flag);
  EXPECT_EQ(parsed->count, std::nullopt);
  EXPECT_EQ(parsed->share, 0.5);
  EXPECT_EQ(parsed->timeout_s->Milliseconds(), std::chrono::milliseconds(1));
  EXPECT_EQ(parsed->memory->bytes, 2 << 20);
  EXPECT_EQ(parsed->items, std::vector<std::string>{"x"});
  EXPECT_EQ(parsed->env.at("A"), "b");
  EXPECT_EQ(parsed->mode, SendMode::kSteer);
}

TEST(ToolArguments, TheSchemaComesFromTheSameList) {
  Json schema = ArgumentSchema<Sample>();
  EXPECT_EQ(schema["required"], Json::array({"name"}));
  EXPECT_EQ(schema["additionalProperties"], false);
  const Json& p = schema["properties"];
  EXPECT_EQ(p["name"], Json({{"type", "string"}, {"minLength", 1}}));
  EXPECT_EQ(p["count"],
            Json({{"type", "integer"}, {"minimum", 1}, {"maximum", 5}}));
  EXPECT_EQ(
      p["share"],
      Json({{"type", "number"}, {"exclusiveMinimum", 0}, {"maximum", 10}}));
  EXPECT_EQ(p["timeout_s"]["exclusiveMinimum"], 0);
  EXPECT_EQ(p["items"]["maxItems"], 2);
  EXPECT_EQ(p["env"]["additionalProperties"], Json({{"type", "string"}}));
  EXPECT_EQ(p["mode"], Json({{"type", "string"},
                             {"enum", {"followup", "steer"}},
                             {"description", "how"}}));
}

// The drift the one description prevents: a bound stated once serves the
// schema, the MCP parser and batond's decoder alike.
TEST(ToolArguments, RunAndDelegateShareTheProtocolsBounds) {
  Json schema = ArgumentSchema<StartArguments>();
  EXPECT_EQ(schema["properties"]["priority"]["maximum"], 1000000);
  EXPECT_EQ(schema["properties"]["retries"]["maximum"], kMaxRetries);
  std::string label(kMaxLabelBytes + 1, 'x');
  EXPECT_EQ(
      Refusal<StartArguments>({{"label", label}}),
      fmt::format("argument 'label' is {} bytes long; at most {} are allowed",
                  kMaxLabelBytes + 1, kMaxLabelBytes));
  EXPECT_EQ(
      Refusal<StartArguments>({{"label", std::string(kMaxLabelBytes, 'x')}}),
      "");
}

TEST(ToolArguments, TaskIdsMergeAndExplain) {
  auto ids = ParseArguments<TaskIdsArguments>(
      {{"task_id", "shell-1"}, {"task_ids", {"shell-2", "shell-1"}}});
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids->Ids(), (std::vector<std::string>{"shell-1", "shell-2"}));
  auto none = ParseArguments<TaskIdsArguments>(Json::object());
  ASSERT_TRUE(none);
  ASSERT_FALSE(none->Ids());
  EXPECT_NE(none->Ids().error().message.find("task_id"), std::string::npos);
  EXPECT_NE(Refusal<TaskIdsArguments>({{"task_ids", "shell-1"}}).find("list"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::mcp
