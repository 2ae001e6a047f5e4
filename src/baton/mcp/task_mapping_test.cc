#include "baton/mcp/task_mapping.h"

#include <gtest/gtest.h>

namespace baton::mcp {
namespace {

TaskView Task(TaskStatus status) {
  TaskView view;
  view.task.id = TaskId{TaskKind::kAgent, 4};
  view.task.status = status;
  view.task.created_ms = 1'700'000'000'000;
  view.task.started_ms = 1'700'000'001'000;
  return view;
}

OpenQuestion QuestionToAnswer() {
  OpenQuestion question;
  question.seq = 7;
  question.items.push_back(
      {"Which database?", "DB", {{"SQLite", "file"}, {"Postgres", ""}}, false});
  question.items.push_back(
      {"Which extras?", "", {{"a", ""}, {"b,c", ""}}, true});
  question.items.push_back({"Anything else?", "", {}, false});
  return question;
}

TEST(McpTaskStatus, MapsEveryStatus) {
  EXPECT_EQ(McpTaskStatus(TaskStatus::kQueued), "working");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kRunning), "working");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kStopping), "working");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kWaiting), "input_required");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kCompleted), "completed");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kFailed), "completed");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kKilled), "cancelled");
  EXPECT_EQ(McpTaskStatus(TaskStatus::kInterrupted), "failed");
}

TEST(McpTask, HasTheTaskFields) {
  Json task = McpTask(Task(TaskStatus::kRunning).task);
  EXPECT_EQ(task["taskId"], "agent-4");
  EXPECT_EQ(task["status"], "working");
  EXPECT_EQ(task["createdAt"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(task["lastUpdatedAt"], "2023-11-14T22:13:21.000Z");
  EXPECT_TRUE(task["ttlMs"].is_null());
  EXPECT_EQ(task["pollIntervalMs"], kTaskPollIntervalMs);
}

TEST(InputRequests, OneFormPerQuestion) {
  TaskView view = Task(TaskStatus::kWaiting);
  view.questions.push_back(QuestionToAnswer());
  Json requests = InputRequests(view);
  ASSERT_TRUE(requests.contains("q7"));
  const Json& params = requests["q7"]["params"];
  EXPECT_EQ(requests["q7"]["method"], "elicitation/create");
  EXPECT_EQ(params["mode"], "form");
  const Json& fields = params["requestedSchema"]["properties"];
  EXPECT_EQ(fields["answer_1"]["enum"], Json({"SQLite", "Postgres"}));
  EXPECT_EQ(fields["answer_1"]["title"], "DB");
  EXPECT_EQ(fields["answer_2"]["type"], "array");
  EXPECT_EQ(fields["answer_3"]["type"], "string");
  EXPECT_FALSE(fields["answer_3"].contains("enum"));
  EXPECT_NE(params["message"].get<std::string>().find("2. Postgres"),
            std::string::npos);
}

TEST(AnswersFromElicitation, LabelsBecomeOptionNumbers) {
  auto answers =
      AnswersFromElicitation(QuestionToAnswer(), {{"action", "accept"},
                                                  {"content",
                                                   {{"answer_1", "Postgres"},
                                                    {"answer_2", {"b,c", "a"}},
                                                    {"answer_3", "use WAL"}}}});
  ASSERT_TRUE(answers) << answers.error().message;
  EXPECT_EQ(*answers, (std::vector<std::string>{"2", "2,1", "use WAL"}));
}

TEST(AnswersFromElicitation, LeftOutOrDeclinedIsSkip) {
  auto some = AnswersFromElicitation(
      QuestionToAnswer(),
      {{"action", "accept"}, {"content", {{"answer_1", "SQLite"}}}});
  ASSERT_TRUE(some);
  EXPECT_EQ(*some, (std::vector<std::string>{"1", "skip", "skip"}));
  for (const char* action : {"decline", "cancel"}) {
    auto none =
        AnswersFromElicitation(QuestionToAnswer(), {{"action", action}});
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, (std::vector<std::string>{"skip", "skip", "skip"}));
  }
}

TEST(AnswersFromElicitation, BadValuesSayWhat) {
  auto not_an_option = AnswersFromElicitation(
      QuestionToAnswer(),
      {{"action", "accept"}, {"content", {{"answer_1", "Mongo"}}}});
  ASSERT_FALSE(not_an_option);
  EXPECT_NE(not_an_option.error().message.find(
                "\"Mongo\" is not one of the options (SQLite, Postgres)"),
            std::string::npos);
  auto wrong_type = AnswersFromElicitation(
      QuestionToAnswer(),
      {{"action", "accept"}, {"content", {{"answer_3", 5}}}});
  ASSERT_FALSE(wrong_type);
  EXPECT_NE(wrong_type.error().message.find("'answer_3' must be a string"),
            std::string::npos);
  EXPECT_FALSE(AnswersFromElicitation(QuestionToAnswer(), {{"content", {}}}));
  EXPECT_FALSE(AnswersFromElicitation(QuestionToAnswer(), "accept"));
}

TEST(DetailedTask, CarriesWhatTheStatusNeeds) {
  TaskView done = Task(TaskStatus::kFailed);
  done.task.exit_code = 3;
  done.task.detail = "exit code: 3";
  Json result = EndedToolResult(done, "boom\n", {{"task_id", "agent-4"}});
  EXPECT_EQ(result["isError"], true);
  EXPECT_EQ(result["structuredContent"]["output_tail"], "boom\n");
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find("boom"),
            std::string::npos);
  Json detailed = DetailedTask(done, result);
  EXPECT_EQ(detailed["status"], "completed");
  EXPECT_EQ(detailed["result"], result);

  TaskView lost = Task(TaskStatus::kInterrupted);
  Json failed = DetailedTask(lost, nullptr);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["error"]["code"], -32603);
  EXPECT_FALSE(failed.contains("result"));

  TaskView asking = Task(TaskStatus::kWaiting);
  asking.questions.push_back(QuestionToAnswer());
  EXPECT_TRUE(DetailedTask(asking, nullptr)["inputRequests"].contains("q7"));
  EXPECT_FALSE(
      DetailedTask(Task(TaskStatus::kKilled), nullptr).contains("result"));
}

}  // namespace
}  // namespace baton::mcp
