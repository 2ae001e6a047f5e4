#include "baton/mcp/tool.h"

#include <gtest/gtest.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

TEST(ToolArguments, TaskIdsMergeAndExplain) {
  auto ids = TaskIdsArgument(
      {{"task_id", "shell-1"}, {"task_ids", {"shell-2", "shell-1"}}});
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, (std::vector<std::string>{"shell-1", "shell-2"}));
  auto none = TaskIdsArgument(Json::object());
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("task_id"), std::string::npos);
  auto bad = TaskIdsArgument({{"task_ids", "shell-1"}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("list"), std::string::npos);
}

TEST(ToolArguments, TypesAndUnknownNames) {
  EXPECT_FALSE(RequiredString({{"command", 3}}, "command", "\"ls\""));
  EXPECT_FALSE(RequiredString(Json::object(), "command", "\"ls\""));
  EXPECT_EQ(*RequiredString({{"command", "ls"}}, "command", "\"ls\""), "ls");
  EXPECT_FALSE(OptionalBool({{"wait", "yes"}}, "wait", false));
  EXPECT_TRUE(*OptionalBool({{"wait", true}}, "wait", false));
  EXPECT_FALSE(OptionalNumber({{"timeout_s", -1}}, "timeout_s", 0));
  EXPECT_FALSE(OptionalNumber({{"timeout_s", "5"}}, "timeout_s", 0));
  EXPECT_EQ(**OptionalNumber({{"timeout_s", 2.5}}, "timeout_s", 0), 2.5);
  auto unknown = CheckKnownArguments({{"comand", "ls"}}, {"command", "cwd"});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("comand"), std::string::npos);
}

TEST(Tools, EveryToolHasSchemasAndHonestAnnotations) {
  for (const auto& tool : AllTools()) {
    SCOPED_TRACE(tool.name);
    EXPECT_EQ(tool.input_schema["type"], "object");
    EXPECT_EQ(tool.output_schema["type"], "object");
    EXPECT_FALSE(tool.description.empty());
    bool read_only = tool.annotations.value("readOnlyHint", false);
    bool is_read = tool.name == "task_output" || tool.name == "task_status" ||
                   tool.name == "task_list";
    EXPECT_EQ(read_only, is_read);
    if (tool.name == "task_kill") {
      EXPECT_TRUE(tool.annotations.value("destructiveHint", false));
    }
  }
}

}  // namespace
}  // namespace baton::mcp
