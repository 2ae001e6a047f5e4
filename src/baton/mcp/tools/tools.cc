#include "baton/mcp/tools/tools.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/ipc/task_text.h"
#include "baton/util/clock.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {

namespace {

// Quotes a word for a POSIX shell only when it needs it.
std::string ShellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                           "VWXYZ0123456789-_./=:,+@%") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

}  // namespace

std::string WaitCommand(const ServerFacts& facts, const std::string& id) {
  std::string line;
  if (!facts.baton_home.empty())
    line = "BATON_HOME=" + ShellWord(facts.baton_home) + " ";
  line += fmt::format("{} --session {} wait {}", ShellWord(facts.baton_binary),
                      ShellWord(facts.session), ShellWord(id));
  return line;
}

const std::vector<ToolDefinition>& AllTools() {
  static const std::vector<ToolDefinition> tools = {
      RunToolDefinition(),           DelegateToolDefinition(),
      TaskOutputToolDefinition(),    TaskStatusToolDefinition(),
      TaskListToolDefinition(),      TaskEventsToolDefinition(),
      TaskQuestionsToolDefinition(), TaskSendToolDefinition(),
      TaskAnswerToolDefinition(),    TaskKillToolDefinition(),
      SessionBudgetToolDefinition(), WorktreesToolDefinition(),
      TaskRerunToolDefinition(),     TaskEditToolDefinition(),
      ConflictsToolDefinition(),     LandToolDefinition(),
      LandQueueToolDefinition(),
  };
  return tools;
}

Json NullableString(std::string_view description) {
  return {{"type", {"string", "null"}}, {"description", description}};
}

Json NullableInteger(std::string_view description) {
  return {{"type", {"integer", "null"}}, {"description", description}};
}

Json EvidenceJson(const Evidence& evidence) {
  Json checks = Json::array();
  for (const CheckResult& check : evidence.checks) {
    checks.push_back({{"command", check.command},
                      {"exit_code", check.exit_code},
                      {"tail", check.tail}});
  }
  const auto& files = evidence.changed_files;
  size_t shown = std::min(files.size(), kShownChangedFiles);
  Json json = {{"checks", std::move(checks)},
               {"changed_files_count", files.size()},
               {"changed_files",
                std::vector<std::string>(files.begin(), files.begin() + shown)},
               {"overlapping_tasks", evidence.overlapping_tasks}};
  if (evidence.branch) {
    const BranchEvidence& branch = *evidence.branch;
    json["branch"] = {{"branch", branch.branch},
                      {"base", branch.base},
                      {"commits", branch.commits},
                      {"diff_stat", branch.diff_stat},
                      {"uncommitted", branch.uncommitted}};
  }
  if (!evidence.diff_path.empty()) {
    json["diff_path"] = evidence.diff_path;
    json["diff_truncated"] = evidence.diff_truncated;
  }
  return json;
}

Json EvidenceSchema() {
  Json check = {
      {"type", "object"},
      {"properties",
       {{"command", {{"type", "string"}}},
        {"exit_code", {{"type", "integer"}}},
        {"tail", {{"type", "string"}, {"description", "its last lines"}}}}},
      {"required", {"command", "exit_code"}}};
  Json branch = {
      {"type", "object"},
      {"description",
       "a worktree task's branch against the commit it was made from"},
      {"properties",
       {{"branch", {{"type", "string"}, {"description", "baton/<task id>"}}},
        {"base", {{"type", "string"}, {"description", "the base commit"}}},
        {"commits",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"description", "\"<short sha> <subject>\", oldest first"}}},
        {"diff_stat", {{"type", "string"}}},
        {"uncommitted",
         {{"type", "boolean"},
          {"description", "changes or new files not committed"}}}}}};
  return {{"type", "object"},
          {"description",
           "once its checks ran: each check's outcome, the files changed while "
           "it ran, a worktree task's branch and commits, the diff, the other "
           "tasks in the same folder meanwhile"},
          {"properties",
           {{"checks", {{"type", "array"}, {"items", std::move(check)}}},
            {"changed_files_count", {{"type", "integer"}}},
            {"changed_files",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"description", "the first paths (up to 10)"}}},
            {"overlapping_tasks",
             {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"branch", std::move(branch)},
            {"diff_path",
             {{"type", "string"},
              {"description",
               "the file holding the diff of its changes (against HEAD, or a "
               "worktree's base, new files included); task_status also gives "
               "its first 32 KiB as diff"}}},
            {"diff_truncated",
             {{"type", "boolean"},
              {"description", "the diff file was cut at 1 MiB"}}}}}};
}

std::string EndEvidenceText(const TaskRecord& task) {
  if (!task.evidence)
    return "";
  return EvidenceText(*task.evidence, "", 10);
}

Json TaskSummary(const TaskRecord& task) {
  Json summary = {
      {"task_id", task.id.ToString()},
      {"kind", TaskKindName(task.id.kind)},
      {"status", TaskStatusName(task.status)},
      {"detail", task.detail},
      {"exit_code", task.exit_code ? Json(*task.exit_code) : Json(nullptr)},
      {"label", task.spec.label},
      {"command", CommandText(task.spec)},
  };
  summary["started_at"] = TimeOrNull(task.started_ms);
  auto elapsed = ElapsedMs(task);
  summary["elapsed_ms"] = elapsed ? Json(*elapsed) : Json(nullptr);
  if (task.evidence)
    summary["evidence"] = EvidenceJson(*task.evidence);
  if (const auto& agent = task.spec.agent) {
    summary["agent"] = agent->profile;
    summary["model"] =
        agent->model.empty() ? Json(nullptr) : Json(agent->model);
    summary["usage"] = task.usage ? UsageJson(*task.usage) : Json(nullptr);
    if (agent->AsksPerson())
      summary["ask"] = "person";
  }
  return summary;
}

Json TimeOrNull(int64_t wall_ms) {
  return wall_ms ? Json(FormatIsoTime(wall_ms)) : Json(nullptr);
}

std::optional<int64_t> ElapsedMs(const TaskRecord& task) {
  // Live tasks count to now, as `baton ls` and the board do.
  int64_t until = task.ended_ms ? task.ended_ms : WallMillis();
  if (!task.started_ms || until < task.started_ms)
    return std::nullopt;
  return until - task.started_ms;
}

Json UsageJson(const AgentUsage& usage) {
  // The fields as AgentUsage lists them (the same object as in the task's
  // JSON): encoded by json_fields, read back as a value.
  auto parsed = ParseJson(EncodeObject(usage));
  return parsed ? std::move(parsed->value) : Json(nullptr);
}

Json TaskSummarySchema() {
  return {
      {"type", "object"},
      {"properties",
       {
           {"task_id", {{"type", "string"}, {"description", "e.g. shell-1"}}},
           {"kind", {{"type", "string"}, {"description", "shell or agent"}}},
           {"status",
            {{"type", "string"},
             {"description",
              "queued, running, waiting, stopping, or the terminal "
              "completed, failed, killed, interrupted"}}},
           {"detail",
            {{"type", "string"},
             {"description",
              "how it ended: 'exit code: 3', 'signal: SIGSEGV', 'killed: "
              "<reason>', 'timed out after 30s', 'check failed: make test "
              "(exit code 2)'; empty while running"}}},
           {"exit_code", NullableInteger("the exit code once it exited")},
           {"label", {{"type", "string"}}},
           {"command", {{"type", "string"}}},
           {"started_at", NullableString("ISO 8601 UTC")},
           {"elapsed_ms",
            NullableInteger("from its start to its end, or to now while it "
                            "runs")},
           {"evidence", EvidenceSchema()},
           {"agent",
            {{"type", "string"},
             {"description", "agent tasks: the agent profile, e.g. claude"}}},
           {"model",
            NullableString("agent tasks: the model asked for; null: the "
                           "agent's default")},
           {"usage",
            {{"type", {"object", "null"}},
             {"description",
              "agent tasks: what it spent so far, as its CLI reports it: "
              "input_tokens (cached too), output_tokens, turns, cost_usd "
              "(where the CLI reports a cost); null until it reported any"},
             {"properties",
              {{"input_tokens", {{"type", "integer"}}},
               {"output_tokens", {{"type", "integer"}}},
               {"turns", {{"type", "integer"}}},
               {"cost_usd", {{"type", "number"}}}}}}},
           {"ask",
            {{"type", "string"},
             {"description",
              "person: its questions go to the user in a form (delegate's "
              "ask)"}}},
           {"uncollected",
            {{"type", "boolean"},
             {"description",
              "task_list: it ended and you have not seen its end yet"}}},
       }},
      {"required", {"task_id", "status"}},
  };
}

Json PendingQuestionsSchema() {
  Json option = {{"type", "object"},
                 {"properties",
                  {{"label", {{"type", "string"}}},
                   {"description", {{"type", "string"}}}}},
                 {"required", {"label"}}};
  Json item = {
      {"type", "object"},
      {"properties",
       {{"prompt", {{"type", "string"}}},
        {"header", {{"type", "string"}}},
        {"options",
         {{"type", "array"},
          {"items", std::move(option)},
          {"description", "answer with an option's number (from 1) or label"}}},
        {"multi_select", {{"type", "boolean"}}}}},
      {"required", {"prompt", "options"}}};
  return {
      {"type", "array"},
      {"description",
       "open questions of a waiting agent task, oldest first; "
       "task_answer answers the first, one string per item"},
      {"items",
       {{"type", "object"},
        {"properties",
         {{"seq",
           {{"type", "integer"}, {"description", "the question event's seq"}}},
          {"items", {{"type", "array"}, {"items", std::move(item)}}}}},
        {"required", {"seq", "items"}}}}};
}

std::string TaskName(const TaskRecord& task) {
  std::string id = task.id.ToString();
  const std::string& label = task.spec.label;
  return label.empty() ? id : fmt::format("{} ({})", id, label);
}

Result<std::vector<std::string>> TaskIdsArguments::Ids() const {
  std::vector<std::string> ids;
  if (!task_id.empty())
    ids.push_back(task_id);
  for (const auto& id : task_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end())
      ids.push_back(id);
  }
  if (ids.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "give the task: {\"task_id\": \"shell-1\"} or several with "
        "{\"task_ids\": [\"shell-1\", \"shell-2\"]}; task_list shows your "
        "tasks");
  }
  return ids;
}

std::string DaemonErrorText(const Error& error) {
  std::string text =
      fmt::format("{}: {}", ErrorCodeName(error.code), error.message);
  // The daemon's messages name CLI verbs; say what to do here too.
  if (error.code == ErrorCode::kNotFound ||
      error.code == ErrorCode::kPermissionDenied) {
    text += " (task_list shows the tasks of this session)";
  }
  return text;
}

}  // namespace baton::mcp
