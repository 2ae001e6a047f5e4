#include "baton/ipc/protocol.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TaskRecord FullTask() {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, 42};
  task.spec.label = "tab\there \"quoted\" back\\slash \x01 ünïcødé";
  task.spec.argv = {"printf", "%s\n", "a b"};
  task.spec.cwd = "/tmp/x";
  task.spec.env_overrides = {{"A", "1"}, {"B", "line\nbreak"}};
  task.spec.owner = "alice";
  task.spec.timeout = std::chrono::milliseconds(30'000);
  task.status = TaskStatus::kKilled;
  task.detail = "killed: by request";
  task.signal = 9;
  task.pid = 1234;
  task.created_ms = 1'795'960'000'000;
  task.started_ms = 1'795'960'000'123;
  task.ended_ms = 1'795'960'005'000;
  task.kill_reason = "by request";
  task.output_path = "/state/tasks/shell-42/output.log";
  return task;
}

TEST(Protocol, DirectTaskJsonMatchesTheJsonTree) {
  TaskRecord full = FullTask();
  TaskRecord plain;
  plain.id = TaskId{TaskKind::kShell, 1};
  plain.spec.shell_command = "echo hi";
  plain.spec.cwd = "/";
  plain.exit_code = 0;
  for (const TaskRecord& task : {full, plain}) {
    for (std::optional<uint64_t> bytes :
         {std::optional<uint64_t>(), std::optional<uint64_t>(77)}) {
      std::string text;
      AppendTaskJson(text, task, bytes);
      Json parsed = Json::parse(text);
      EXPECT_EQ(parsed, TaskToJson(task, bytes)) << text;
    }
  }
}

TEST(Protocol, BriefTaskJsonIsASubsetOfTheFullOne) {
  TaskRecord task = FullTask();
  std::string text;
  AppendTaskBriefJson(text, task);
  Json brief = Json::parse(text);
  Json full = TaskToJson(task);
  ASSERT_EQ(brief.size(), 8u);
  for (auto& [key, value] : brief.items())
    EXPECT_EQ(value, full[key]) << key;
}

}  // namespace
}  // namespace baton
