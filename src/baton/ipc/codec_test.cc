#include "baton/ipc/codec.h"

#include <gtest/gtest.h>

#include "tests/support/request_cases.h"

namespace baton {
namespace {

TaskRecord TaskWithEveryField() {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, 42};
  task.spec.label = "tab\there \"quoted\" back\\slash \x01 ünïcødé";
  task.spec.argv = {"printf", "%s\n", "a b"};
  task.spec.cwd = "/tmp/x";
  task.spec.env_overrides = {{"A", "1"}, {"B", "line\nbreak"}};
  task.spec.owner = "alice";
  task.spec.timeout = std::chrono::milliseconds(30'000);
  task.spec.checks = {"make test"};
  task.status = TaskStatus::kKilled;
  task.detail = "killed: by request";
  task.signal = 9;
  task.pid = 1234;
  task.created_ms = 1'795'960'000'000;
  task.started_ms = 1'795'960'000'123;
  task.ended_ms = 1'795'960'005'000;
  task.kill_reason = "by request";
  task.output_path = "/state/tasks/shell-42/output.log";
  task.evidence = Evidence{"git", {"a.cc"}, {{"make test", 2, "FAIL"}}, {}};
  return task;
}

TaskView RoundTrip(const TaskView& view) {
  std::string text;
  EncodeValue(text, view);
  auto parsed = ParseJson(text);
  EXPECT_TRUE(parsed) << text;
  TaskView back;
  auto ok = DecodeValue(parsed->value, back, {}, "task");
  EXPECT_TRUE(ok) << (ok ? "" : ok.error().message);
  return back;
}

TEST(CodecTest, ATaskComesBackAsItWent) {
  TaskView full{TaskWithEveryField(), 77, {}};
  full.questions.push_back(
      {7, {{"Which?", "", {{"red", ""}, {"blue", "the sky"}}, false}}});
  TaskRecord plain;
  plain.id = TaskId{TaskKind::kAgent, 1};
  plain.spec.shell_command = "echo hi";
  plain.spec.cwd = "/";
  plain.exit_code = 0;
  plain.spec.agent = AgentSpec{.profile = "claude", .brief = "do it"};
  plain.held = true;  // Queued: a dispatched one reads as running (below).
  for (const TaskView& view : {full, TaskView{plain, std::nullopt, {}}}) {
    TaskView back = RoundTrip(view);
    std::string first, second;
    EncodeValue(first, view);
    EncodeValue(second, back);
    EXPECT_EQ(first, second);
    EXPECT_EQ(back.task.status, view.task.status);
    EXPECT_EQ(back.task.signal, view.task.signal);
    EXPECT_EQ(back.task.ended_ms, view.task.ended_ms);
    EXPECT_EQ(back.output_bytes, view.output_bytes);
  }
}

// A task handed to the supervisor, whose spawn is not reported yet, is
// `running` with detail `starting` (doc/tasks.md, "Statuses"); a held task
// and a Slurm job that waits in Slurm's queue stay `queued`. Encoded again
// after a decode (baton serve relays tasks), each reads the same.
TEST(CodecTest, ADispatchedTaskIsRunningAndStartingAHeldOneQueued) {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, 4};
  task.spec.shell_command = "make";
  task.spec.cwd = "/";
  auto wire = [](const TaskRecord& record) {
    std::string text;
    EncodeValue(text, TaskView{record, std::nullopt, {}});
    return nlohmann::json::parse(text);
  };
  auto again = [](const TaskRecord& record) {
    std::string text;
    EncodeValue(text, RoundTrip(TaskView{record, std::nullopt, {}}));
    return nlohmann::json::parse(text);
  };
  EXPECT_EQ(wire(task)["status"], "running");
  EXPECT_EQ(wire(task)["detail"], "starting");
  EXPECT_EQ(again(task), wire(task));
  task.detail = "attempt 2 of 3";
  EXPECT_EQ(wire(task)["detail"], "starting; attempt 2 of 3");
  TaskRecord held = task;
  held.held = true;
  held.detail = "queue build: 2 of 2 running";
  EXPECT_EQ(wire(held)["status"], "queued");
  EXPECT_EQ(wire(held)["detail"], "queue build: 2 of 2 running");
  EXPECT_EQ(again(held), wire(held));
  TaskRecord job = task;
  job.spec.remote = RemoteRequest{.executor = "slurm"};
  job.detail = "pending: Resources";
  EXPECT_EQ(wire(job)["status"], "queued");
  EXPECT_EQ(wire(job)["detail"], "pending: Resources");
}

TEST(CodecTest, SecretLookingVariablesAreMaskedInTheTaskObject) {
  TaskRecord task = TaskWithEveryField();
  task.spec.env_overrides = {{"GITHUB_TOKEN", "ghp_x"}, {"MODE", "fast"}};
  std::string text;
  EncodeValue(text, TaskView{task, {}, {}});
  EXPECT_EQ(text.find("ghp_x"), std::string::npos) << text;
  EXPECT_NE(text.find("\"GITHUB_TOKEN\":\"***\""), std::string::npos);
  EXPECT_NE(text.find("\"MODE\":\"fast\""), std::string::npos);
}

TEST(CodecTest, NamesThatLookSecretIncludePassAndAuthButNotAuthor) {
  for (const char* name : {"DB_PASS", "PASSPHRASE", "smtp_passwd", "BASIC_AUTH",
                           "AUTH_HEADER", "SSH_PRIVATE", "API_KEY"})
    EXPECT_TRUE(LooksSecret(name)) << name;
  for (const char* name : {"GIT_AUTHOR_NAME", "MODE", "PATH", "PWD", "HOME"})
    EXPECT_FALSE(LooksSecret(name)) << name;
}

TEST(CodecTest, TheBriefFormHasTheFirstFieldsOfTheFullOne) {
  TaskRecord task = TaskWithEveryField();
  std::string brief_text, full_text;
  EncodeValue(brief_text, TaskBrief{task, false});
  EncodeValue(full_text, TaskView{task, {}, {}});
  Json brief = Json::parse(brief_text);
  Json full = Json::parse(full_text);
  ASSERT_EQ(brief.size(), 8u);
  for (auto& [key, value] : brief.items())
    EXPECT_EQ(value, full[key]) << key;
}

TEST(CodecTest, ARequestLineDecodesToItsType) {
  std::string line = EncodeRequestLine(
      7, "alice", KillRequest{.tasks = {"shell-1", "shell-2"}, .reason = "r"});
  auto decoded = DecodeRequestLine(line);
  ASSERT_TRUE(decoded) << decoded.error().error.message;
  EXPECT_EQ(decoded->id_json, "7");
  EXPECT_EQ(decoded->session, "alice");
  auto* kill = std::get_if<KillRequest>(&decoded->request);
  ASSERT_NE(kill, nullptr);
  EXPECT_EQ(kill->tasks, (std::vector<std::string>{"shell-1", "shell-2"}));
  EXPECT_EQ(kill->reason, "r");
}

// A view's filters are checked where they are decoded, and only go with
// `view`: a filter that would be ignored is refused instead.
TEST(CodecTest, AListViewsFiltersAreCheckedAndNeedTheView) {
  auto refused = [](const std::string& line) {
    auto decoded = DecodeRequestLine(line);
    return decoded ? std::string("accepted") : decoded.error().error.message;
  };
  EXPECT_NE(refused(R"({"id":1,"op":"list","view":true,"kind":"robot"})")
                .find("'kind' must be shell or agent"),
            std::string::npos);
  EXPECT_NE(refused(R"({"id":1,"op":"list","view":true,"status":"done"})")
                .find("'status' must be one of queued"),
            std::string::npos);
  EXPECT_NE(refused(R"({"id":1,"op":"list","status":"failed"})")
                .find("give 'view': true"),
            std::string::npos);
  auto decoded = DecodeRequestLine(
      R"({"id":1,"op":"list","view":true,"status":"failed","search":"Make",)"
      R"("ended_offset":50,"ended_limit":10})");
  ASSERT_TRUE(decoded) << decoded.error().error.message;
  const auto& list = std::get<ListRequest>(decoded->request);
  EXPECT_TRUE(list.view);
  EXPECT_EQ(list.filter.status, "failed");
  EXPECT_EQ(list.filter.search, "Make");
  EXPECT_EQ(list.filter.ended_offset, 50);
  EXPECT_EQ(list.filter.ended_limit, 10);
}

// A rule across fields of one request lives in its Validate, which the
// decoder applies, so batond refuses it for every front end alike.
TEST(CodecTest, AWorktreesForceGoesWithClean) {
  auto forced = DecodeRequestLine(R"({"id":1,"op":"worktrees","force":true})");
  ASSERT_FALSE(forced);
  EXPECT_NE(forced.error().error.message.find("'force' goes with 'clean'"),
            std::string::npos)
      << forced.error().error.message;
  EXPECT_TRUE(DecodeRequestLine(
      R"({"id":1,"op":"worktrees","force":true,"clean":true})"));
}

TEST(CodecTest, EveryValidSampleDecodes) {
  for (const auto& sample : testing::ValidRequests()) {
    auto decoded = DecodeRequestLine(sample.line);
    EXPECT_TRUE(decoded) << sample.line << ": "
                         << (decoded ? "" : decoded.error().error.message);
    if (decoded) {
      EXPECT_EQ(OpOf(decoded->request), sample.op);
    }
  }
}

// Each field of each request type, missing, mistyped, oversized, out of
// range or holding a NUL: a clear error that names the field, never a
// crash (the same lines go to a real batond in the integration tests).
TEST(CodecTest, EveryBrokenFieldIsRefusedByName) {
  auto cases = testing::BrokenRequests();
  ASSERT_GT(cases.size(), 100u);
  for (const auto& c : cases) {
    auto decoded = DecodeRequestLine(c.line);
    std::string what = c.op + "." + c.field + " " + c.how;
    if (c.valid) {
      EXPECT_TRUE(decoded) << what << ": "
                           << (decoded ? "" : decoded.error().error.message);
      continue;
    }
    ASSERT_FALSE(decoded) << what << " was accepted";
    const Error& error = decoded.error().error;
    EXPECT_EQ(error.code, ErrorCode::kInvalidArgument) << what;
    EXPECT_NE(error.message.find("'" + c.field), std::string::npos)
        << what << ": " << error.message;
    EXPECT_EQ(decoded.error().id_json, "1") << what;
  }
}

TEST(CodecTest, EveryStringAndListOfARequestIsBounded) {
  auto check = [](auto request) {
    for (const FieldDoc& field : DocumentFields<decltype(request)>()) {
      bool text = field.type.find("string") != std::string::npos;
      bool list =
          field.type.starts_with("list") || field.type.starts_with("object");
      if (text) {
        EXPECT_GT(field.rules.max_bytes, 0u)
            << request.kOp << "." << field.name;
      }
      if (list) {
        EXPECT_GT(field.rules.max_items, 0u)
            << request.kOp << "." << field.name;
      }
    }
  };
  std::apply([&](auto... requests) { (check(requests), ...); },
             std::tuple<HelloRequest, RunRequest, DelegateRequest, SendRequest,
                        QueuedRequest, AnswerRequest, QuestionsRequest,
                        EventsRequest, AgentsRequest, GetRequest, ListRequest,
                        ReadRequest, KillRequest, WaitRequest, AttachRequest,
                        NoticesRequest, DaemonStatusRequest, ShutdownRequest,
                        WatchRequest, QueueSetRequest, QueueListRequest,
                        BudgetRequest, WorktreesRequest, ConflictsRequest,
                        LandRequest, LandsRequest, MetricsRequest>());
}

// A label's bound is core's one rule (kMaxLabelBytes): the codec refuses
// what the registry would, never passes a label the registry then refuses
// (1,024 against 256 before).
TEST(CodecTest, ALabelIsBoundedAsTheRegistryBoundsIt) {
  auto line = [](size_t bytes) {
    return R"({"id":1,"op":"run","command":"true","cwd":"/","label":")" +
           std::string(bytes, 'x') + R"("})";
  };
  EXPECT_TRUE(DecodeRequestLine(line(kMaxLabelBytes)));
  auto refused = DecodeRequestLine(line(kMaxLabelBytes + 1));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().error.message.find("'label'"), std::string::npos)
      << refused.error().error.message;
  for (const FieldDoc& field : DocumentFields<DelegateRequest>()) {
    if (field.name == "label") {
      EXPECT_EQ(field.rules.max_bytes, kMaxLabelBytes);
    }
  }
}

TEST(CodecTest, MalformedLinesGetAnErrorAndTheirIdWhenItCanBeRead) {
  struct Case {
    std::string line;
    std::string id_json;
    std::string says;
  } cases[] = {
      {R"({"id":1,"op":1})", "1", "'op' must be a string"},
      {R"({"id":2})", "2", "'op' must be a string"},
      {R"({"id":"x","op":"nope"})", "\"x\"", "unknown request 'nope'"},
      {R"([1,2])", "null", "not a JSON object"},
      {R"({"id":3,"op":"get","task":"shell-1","extra":1})", "3",
       "unknown field 'extra'"},
      // A newer client's field: which batond, and the remedy.
      {R"({"id":3,"op":"get","task":"shell-1","extra":1})", "3",
       "; this batond is baton "},
      {R"({"id":3,"op":"run","argv":["a"],"cwd":"/","limits":{"gpus":1}})", "3",
       "replace batond with the client's with 'baton daemon upgrade'"},
      {R"({"id":{"a":1},"op":"list"})", "null", "'id' must be a number"},
      {"{\"id\":4,\"op\":\"list\"", "null", "not valid JSON"},
      {"\xff\xfe", "null", "not valid JSON"},
      {R"({"id":5,"op":"run","argv":["a"],"command":"b","cwd":"/"})", "5",
       "not both"},
      {R"({"id":6,"op":"run","argv":["a"],"cwd":"relative"})", "6", "absolute"},
      {R"({"id":7,"op":"run","argv":["a"],"cwd":"/","base_env":["NOEQ"]})", "7",
       "'base_env[0]' must be NAME=value"},
      {R"({"id":8,"op":"run","argv":["a"],"cwd":"/","base_env":["=x"]})", "8",
       "'base_env[0]' must be NAME=value"},
      {R"({"id":9,"op":"run","argv":["a"],"cwd":"/","timeout_ms":1e13})", "9",
       "'timeout_ms'"},
      {R"({"id":10,"op":"run","argv":["a"],"cwd":"/","timeout_ms":0})", "10",
       "'timeout_ms'"},
      {R"({"id":11,"op":"get","task":"shell-1","session":5})", "11",
       "'session'"},
  };
  for (const auto& c : cases) {
    auto decoded = DecodeRequestLine(c.line);
    ASSERT_FALSE(decoded) << c.line;
    EXPECT_EQ(decoded.error().id_json, c.id_json) << c.line;
    EXPECT_NE(decoded.error().error.message.find(c.says), std::string::npos)
        << c.line << ": " << decoded.error().error.message;
  }
}

TEST(CodecTest, IdsAreEchoedExactlyAsTheyCame) {
  for (std::string id : {"18446744073709551616", "-9223372036854775809",
                         "1e300", "1.50", "12", "\"abc\"", "null"}) {
    auto decoded = DecodeRequestLine(R"({"id":)" + id + R"(,"op":"notices"})");
    ASSERT_TRUE(decoded) << id;
    EXPECT_EQ(decoded->id_json, id);
  }
}

TEST(CodecTest, DeepNestingIsRefusedWithoutRecursion) {
  std::string deep(60'000, '[');
  deep += std::string(60'000, ']');
  auto decoded = DecodeRequestLine(R"({"id":)" + deep + R"(,"op":"list"})");
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.error().error.message.find("nested deeper"),
            std::string::npos)
      << decoded.error().error.message;
}

TEST(CodecTest, AReplyLineComesBackWithItsNotices) {
  TaskRecord task = TaskWithEveryField();
  std::string notices;
  EncodeValue(notices, std::vector<Notice>{{{task, 5, {}}, "shell-42 killed"}});
  std::string line = EncodeReplyLine(
      "3", EncodeObject(TaskReply{{task, std::nullopt, {}}}), notices);
  auto reply = DecodeReplyLine(line);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->id, 3);
  ASSERT_EQ(reply->notices.size(), 1u);
  EXPECT_EQ(reply->notices[0].text, "shell-42 killed");
  auto result = DecodeResult<TaskReply>(*reply, "get");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->task.task.id.ToString(), "shell-42");

  auto error = DecodeReplyLine(EncodeReplyLine(
      "4", MakeError(ErrorCode::kNotFound, "no task shell-9"), ""));
  ASSERT_TRUE(error);
  auto failed = DecodeResult<TaskReply>(*error, "get");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(failed.error().message, "no task shell-9");
}

TEST(CodecTest, AWaitReplyListsWhatStillRunsInTheFormAskedFor) {
  TaskRecord task = TaskWithEveryField();
  WaitReply counted{.still_running_count = 3};
  EXPECT_EQ(EncodeObject(counted),
            R"({"ended":[],"still_running_count":3,"timed_out":false})");
  WaitReply ids;
  ids.still_running.push_back({task, true});
  auto back =
      DecodeObject<WaitReply>(Json::parse(EncodeObject(ids)), "wait", false);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->still_running.size(), 1u);
  EXPECT_TRUE(back->still_running[0].id_only);
  EXPECT_EQ(back->still_running[0].task.id, task.id);
}

TEST(CodecTest, InvalidUtf8IsReplacedInWhatWeWrite) {
  std::string out;
  AppendJsonString(out, "ok\xff\xc3\xa9\xed\xa0\x80");
  EXPECT_EQ(out,
            "\"ok\xEF\xBF\xBD\xc3\xa9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_TRUE(ParseJson(out));
}

}  // namespace
}  // namespace baton
