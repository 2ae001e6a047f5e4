#include "baton/mcp/tool.h"

#include <gtest/gtest.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

// A call whose batond cannot be reached: every request fails with
// kUnavailable, from Post, as the server's would.
class UnreachableCall : public ToolCall {
 public:
  explicit UnreachableCall(Json arguments) : arguments_(std::move(arguments)) {}
  const Json& arguments() const override { return arguments_; }
  const ServerFacts& facts() const override { return facts_; }
  const RequestMeta& meta() const override { return meta_; }
  const Json& input_responses() const override { return input_responses_; }
  bool CanAskPerson() const override { return false; }
  void WatchPersonQuestions(const std::string&) override {}
  const std::string& request_state() const override { return state_; }
  void InputRequired(Json, std::string) override {
    results.push_back(ToolResult::Error("input_required"));
  }
  void DaemonWait(WaitRequest, std::string,
                  ReplyCallback<WaitRequest> done) override {
    Post([done] { done(MakeError(ErrorCode::kUnavailable, "no batond")); });
  }
  void Finish(ToolResult result) override { results.push_back(result); }
  void Drain() {
    while (!posted_.empty()) {
      auto fn = std::move(posted_.front());
      posted_.erase(posted_.begin());
      Run(fn);
    }
  }
  std::vector<ToolResult> results;

 protected:
  AsyncDaemonClient* daemon(Error* error) override {
    *error = Error{ErrorCode::kUnavailable, "no batond"};
    return nullptr;
  }
  void Run(const std::function<void()>& fn) override {
    if (results.empty())
      fn();
  }
  void Post(std::function<void()> fn) override {
    posted_.push_back(std::move(fn));
  }

 private:
  Json arguments_;
  RequestMeta meta_;
  Json input_responses_;
  std::string state_;
  ServerFacts facts_{
      .session = "s", .baton_binary = "/bin/baton", .cwd = "/tmp"};
  std::vector<std::function<void()>> posted_;
};

TEST(Tools, NoArgumentOfAnyShapeThrowsAndEveryCallEndsOnce) {
  // Values of every JSON type, and the edges of numbers, for every
  // argument each tool takes (and a few it does not).
  std::vector<Json> values = {nullptr,
                              true,
                              0,
                              -1,
                              2.5,
                              1e300,
                              -1e300,
                              18446744073709551615u,
                              "",
                              "x",
                              "shell-1",
                              Json::array(),
                              Json::array({1, "a", nullptr}),
                              Json::array({"shell-1", "agent-1"}),
                              Json::object(),
                              {{"A", 1}},
                              {{"A", "b"}, {"", "c"}}};
  const Json kValid = {{"command", "true"},    {"brief", "b"},
                       {"task_id", "shell-1"}, {"message", "m"},
                       {"answers", {"1"}},     {"reason", "r"}};
  for (const auto& tool : AllTools()) {
    std::vector<std::string> names = {"unknown_name"};
    for (const auto& [name, schema] : tool.input_schema["properties"].items())
      names.push_back(name);
    for (const auto& name : names) {
      for (const auto& value : values) {
        // The others valid, so that each check is reached.
        Json args = Json::object();
        for (const auto& [key, valid] : kValid.items()) {
          if (tool.input_schema["properties"].contains(key))
            args[key] = valid;
        }
        args[name] = value;
        SCOPED_TRACE(tool.name + " " + args.dump());
        auto call = std::make_shared<UnreachableCall>(args);
        EXPECT_NO_THROW({
          tool.handler(call);
          call->Drain();
        });
        EXPECT_EQ(call->results.size(), 1u);
      }
    }
  }
}

TEST(Tools, EveryToolHasSchemasAndHonestAnnotations) {
  for (const auto& tool : AllTools()) {
    SCOPED_TRACE(tool.name);
    EXPECT_EQ(tool.input_schema["type"], "object");
    EXPECT_EQ(tool.output_schema["type"], "object");
    EXPECT_FALSE(tool.description.empty());
    bool read_only = tool.annotations.value("readOnlyHint", false);
    bool is_read = tool.name == "task_output" || tool.name == "task_status" ||
                   tool.name == "task_list" || tool.name == "task_events" ||
                   tool.name == "task_questions" || tool.name == "conflicts" ||
                   tool.name == "land_queue";
    EXPECT_EQ(read_only, is_read);
    if (tool.name == "task_kill") {
      EXPECT_TRUE(tool.annotations.value("destructiveHint", false));
    }
  }
}

}  // namespace
}  // namespace baton::mcp
