// The `task_output` tool: what tasks printed since this session last read,
// or, with wait, blocks until ANY of the tasks ends (bounded, cancellable,
// with progress) and returns the ended ones' remaining output.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "baton/mcp/agent_events.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/output_text.h"
#include "baton/mcp/task_mapping.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/clock.h"

namespace baton {
namespace mcp {
// What ends a wait: a task's end, or also an agent's turn.
enum class WaitUntil { kEnd, kTurn };
}  // namespace mcp
template <>
struct JsonEnum<mcp::WaitUntil> {
  static constexpr std::pair<mcp::WaitUntil, std::string_view> kNames[] = {
      {mcp::WaitUntil::kEnd, "end"}, {mcp::WaitUntil::kTurn, "turn"}};
};
}  // namespace baton

namespace baton::mcp {
namespace {

constexpr double kDefaultWaitS = 30;
// Every client's per-call limit we know of is 60 s or more (TS SDK and
// Codex: 60 s); returning well before it keeps a wait from ever failing.
constexpr double kMaxWaitS = 50;
// The largest offset a double holds exactly (2^53); no output is longer.
constexpr int64_t kMaxOffset = int64_t{1} << 53;

// One task's part of the answer, filled as its read comes back.
struct Entry {
  std::string id;
  std::optional<TaskRecord> task;  // Unset until known (and on error).
  std::string output;
  uint64_t from = 0, to = 0, omitted = 0;
  std::string error;
  bool read = false;  // An output read was made (not state only).
  // A waiting agent task's open questions (batond's), else unset.
  std::optional<std::vector<OpenQuestion>> questions;
  // An agent task that ended a turn and runs on (until "turn"): the turn's
  // final text.
  std::optional<std::string> turn_text;
};

// Shared by the reads of one call: they finish in any order.
struct Gather {
  ToolCallPtr call;
  std::vector<Entry> entries;
  size_t outstanding = 0;
  uint64_t cap = kOutputCap;
  bool offset_mode = false;
  // Set for waits.
  bool waited = false;
  bool timed_out = false;
  std::vector<std::string> still_running;
  // Waited tasks whose end (or question) was told before: not news.
  std::vector<std::string> already_told;
  // Waited tasks in `tasks` that were collected before this wait: with no
  // news, a wait answers at once with them (doc/mcp.md, "Waiting").
  std::vector<std::string> told_before;
  std::string note;  // A line put first (e.g. a capped timeout).
};

Entry MakeEntry(std::string id, std::optional<TaskRecord> task = {}) {
  Entry entry;
  entry.id = std::move(id);
  entry.task = std::move(task);
  return entry;
}

Json EntryJson(const Entry& entry) {
  Json json =
      entry.task ? TaskSummary(*entry.task) : Json{{"task_id", entry.id}};
  if (!entry.error.empty()) {
    json["error"] = entry.error;
    return json;
  }
  json["output"] = entry.output;
  json["output_from"] = entry.from;
  json["output_to"] = entry.to;
  json["omitted_bytes"] = entry.omitted;
  if (entry.questions)
    json["questions"] = QuestionsJson(*entry.questions);
  if (entry.turn_text) {
    json["turn_ended"] = true;
    json["turn_text"] = *entry.turn_text;
  }
  return json;
}

void FinishGather(const std::shared_ptr<Gather>& gather) {
  std::string text = gather->note;
  Json tasks = Json::array();
  size_t failures = 0;
  bool many = gather->entries.size() > 1;
  for (const auto& entry : gather->entries) {
    tasks.push_back(EntryJson(entry));
    if (!entry.error.empty() || !entry.task) {
      ++failures;
      text += fmt::format("--- {} ---\nerror: {}\n", entry.id, entry.error);
      continue;
    }
    const TaskRecord& task = *entry.task;
    if (many || gather->waited)
      text += fmt::format("--- {} ---\n", TaskName(task));
    if (entry.read) {
      if (entry.output.empty()) {
        text += gather->offset_mode ? "(no output at this offset)\n"
                                    : "(no new output)\n";
      } else {
        text += entry.output;
        if (text.back() != '\n')
          text += '\n';
      }
    }
    text += StatusLine(task) + "\n";
    if (entry.turn_text) {
      text += "ended a turn (it runs on); its final text:\n" + *entry.turn_text;
      if (text.back() != '\n')
        text += '\n';
    }
    text += EndEvidenceText(task);
    if (entry.questions) {
      text += PendingQuestionsText(entry.id, *entry.questions);
      if (task.spec.agent && task.spec.agent->AsksPerson()) {
        text +=
            "(It asks your user, in a form of your client: answer only if "
            "they cannot; the first answer wins.)\n";
      }
    }
  }
  if (gather->waited) {
    if (gather->timed_out) {
      text += "Nothing ended before the timeout. ";
    }
    if (!gather->already_told.empty()) {
      std::string ids;
      for (const auto& id : gather->already_told)
        ids += (ids.empty() ? "" : ", ") + id;
      text += fmt::format("already collected (told before): {}\n", ids);
    }
    if (!gather->told_before.empty()) {
      std::string ids;
      for (const auto& id : gather->told_before)
        ids += (ids.empty() ? "" : ", ") + id;
      text += fmt::format(
          "collected before this wait, so not news: {}. A wait on ids you "
          "have all collected answers at once; wait only on ids you have "
          "not collected.\n",
          ids);
    }
    if (!gather->still_running.empty()) {
      std::string ids;
      for (const auto& id : gather->still_running)
        ids += (ids.empty() ? "" : ", ") + id;
      text += fmt::format(
          "still running: {}. Do other work, or call task_output with wait "
          "again on the ids you are blocked on.\n",
          ids);
    }
  }
  if (failures == gather->entries.size() && failures > 0)
    return gather->call->Finish(ToolResult::Error(text));
  Json structured = {{"tasks", std::move(tasks)},
                     {"still_running", gather->still_running},
                     {"timed_out", gather->timed_out},
                     {"waited", gather->waited}};
  if (gather->waited) {
    structured["already_told"] = gather->already_told;
    structured["told_before"] = gather->told_before;
  }
  gather->call->Finish({std::move(text), std::move(structured), false});
}

// One of the call's requests came back: the last one finishes the call.
void Settle(const std::shared_ptr<Gather>& gather) {
  if (--gather->outstanding == 0)
    FinishGather(gather);
}

// Reads entry `index`'s output (mode "new", or "offset" from `offset`) and
// finishes the call when it was the last outstanding read.
void ReadEntry(const std::shared_ptr<Gather>& gather, size_t index,
               std::optional<uint64_t> offset) {
  ReadRequest request{.task = gather->entries[index].id,
                      .mode = offset ? ReadMode::kOffset : ReadMode::kNew,
                      .offset = static_cast<int64_t>(offset.value_or(0))};
  gather->call->Daemon(request, [gather, index](Result<ReadReply> reply) {
    Entry& entry = gather->entries[index];
    if (!reply) {
      entry.error = DaemonErrorText(reply.error());
      return Settle(gather);
    }
    entry.task = reply->task.task;
    entry.read = true;
    // batond decides which questions are open (withdrawn ones are not).
    if (entry.task->status == TaskStatus::kWaiting)
      entry.questions = reply->task.questions;
    uint64_t from = static_cast<uint64_t>(reply->from);
    uint64_t to = static_cast<uint64_t>(reply->to);
    // An offset read shows a page from the offset; a consuming read shows
    // head and tail of everything new.
    uint64_t end = gather->offset_mode ? std::min(to, from + gather->cap) : to;
    auto slice =
        ReadOutputSlice(reply->path, entry.id, from, end,
                        gather->offset_mode ? end - from : gather->cap);
    if (!slice) {
      entry.error =
          fmt::format("cannot read the output log: {}", slice.error().message);
      return Settle(gather);
    }
    entry.from = from;
    entry.to = slice->cut.tail_to;
    entry.omitted = slice->cut.omitted();
    entry.output = std::move(slice->text);
    if (gather->offset_mode && end < to) {
      if (!entry.output.empty() && entry.output.back() != '\n')
        entry.output += '\n';
      entry.output += MoreMarker(entry.id, end, to);
      entry.to = end;
    }
    Settle(gather);
  });
}

// Reads every entry, from `from` or what is new. A read of what is new
// consumes it, so when several ids are named they are first looked up in
// the session's list (which marks nothing seen): an unknown one refuses the
// whole call before any output is consumed.
void ReadAllEntries(const std::shared_ptr<Gather>& gather,
                    std::optional<uint64_t> from) {
  if (gather->entries.size() == 1)
    return ReadEntry(gather, 0, from);
  gather->call->Daemon(
      ListRequest{.all = true}, [gather, from](Result<ListReply> reply) {
        if (!reply) {
          return gather->call->Finish(
              ToolResult::Error(DaemonErrorText(reply.error())));
        }
        std::string unknown;
        for (const auto& entry : gather->entries) {
          bool known = std::any_of(reply->tasks.begin(), reply->tasks.end(),
                                   [&](const TaskView& view) {
                                     return view.task.id.ToString() == entry.id;
                                   });
          if (!known)
            unknown += (unknown.empty() ? "" : ", ") + entry.id;
        }
        if (!unknown.empty()) {
          return gather->call->Finish(ToolResult::Error(fmt::format(
              "not_found: no task {} in this session (task_list shows "
              "yours); nothing was read, since a read consumes output",
              unknown)));
        }
        for (size_t i = 0; i < gather->entries.size(); ++i)
          ReadEntry(gather, i, from);
      });
}

// The wait answered: reads what the ended tasks printed.
void OnWaitEnded(const std::shared_ptr<Gather>& gather, WaitReply reply) {
  gather->timed_out = reply.timed_out;
  gather->already_told = reply.already_told;
  gather->told_before = reply.told_before;
  for (const auto& brief : reply.still_running)
    gather->still_running.push_back(brief.task.id.ToString());
  if (reply.ended.empty()) {
    // Timed out: the state only, nothing consumed.
    for (auto& brief : reply.still_running) {
      std::string id = brief.task.id.ToString();
      gather->entries.push_back(
          MakeEntry(std::move(id), std::move(brief.task)));
    }
    return FinishGather(gather);
  }
  for (auto& view : reply.ended) {
    std::string id = view.task.id.ToString();
    Entry entry = MakeEntry(std::move(id), std::move(view.task));
    for (auto& turn : reply.turns) {
      if (turn.task == entry.id)
        entry.turn_text = std::move(turn.text);
    }
    gather->entries.push_back(std::move(entry));
  }
  gather->outstanding = gather->entries.size();
  gather->cap = std::max<uint64_t>(kOutputCap / gather->entries.size(), 2000);
  for (size_t i = 0; i < gather->entries.size(); ++i)
    ReadEntry(gather, i, std::nullopt);
}

// ---- Questions for the person, in the modern era (doc/mcp.md) ----------
// A wait that reports an ask: "person" task's question answers
// input_required with a form for it, before reading anything (nothing is
// consumed); the client asks its user and sends the call again with the
// answers, which are given to batond before the wait runs again. The
// requestState keeps when the first wait began, so an end it told in the
// meantime is news to the next one.

// A question's key in a tools/call's inputRequests: "<task>/q<seq>" (one
// call may carry several tasks' questions).
std::string PersonFormKey(const std::string& task, int64_t seq) {
  return fmt::format("{}/{}", task, QuestionKey(seq));
}

// A person's form of a retry: whose question it answers, and how.
struct PersonAnswer {
  std::string key;
  std::string task;
  int64_t seq = 0;
  Json response;
};

// `key` read back as PersonFormKey made it, or nullopt.
std::optional<PersonAnswer> ReadPersonFormKey(const std::string& key) {
  size_t slash = key.rfind("/q");
  if (slash == std::string::npos)
    return std::nullopt;
  PersonAnswer answer{.key = key, .task = key.substr(0, slash)};
  const char* first = key.data() + slash + 2;
  const char* last = key.data() + key.size();
  auto [end, error] = std::from_chars(first, last, answer.seq);
  if (first == last || error != std::errc() || end != last || answer.seq < 0)
    return std::nullopt;
  return answer;
}

// The forms for the person among `ended`: each waiting ask: "person" task's
// oldest open question (batond answers in order).
Json PersonForms(const std::vector<TaskView>& ended) {
  Json forms = Json::object();
  for (const auto& view : ended) {
    const TaskRecord& task = view.task;
    if (task.status != TaskStatus::kWaiting || view.questions.empty() ||
        !task.spec.agent || !task.spec.agent->AsksPerson()) {
      continue;
    }
    const OpenQuestion& oldest = view.questions.front();
    forms[PersonFormKey(task.id.ToString(), oldest.seq)] =
        QuestionForm(task, oldest);
  }
  return forms;
}

// The requestState's `news_since_ms`, or nullopt.
std::optional<int64_t> NewsSince(const std::string& state) {
  Json parsed = Json::parse(state, nullptr, /*allow_exceptions=*/false);
  const Json* since = Member(parsed, "news_since_ms");
  // A non-negative integer parses as unsigned.
  const auto* value =
      since ? since->get_ptr<const Json::number_unsigned_t*>() : nullptr;
  if (!value || *value > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return static_cast<int64_t>(*value);
}

struct PersonAnswers {
  ToolCallPtr call;
  std::vector<PersonAnswer> answers;
  size_t next = 0;
  std::function<void()> then;
};

// Gives batond the person's answers of a retry, one after the other, then
// runs `then`. A form for a question no longer open (another answer came
// first) is dropped; a form that is no answer (a label that is no option)
// fails the call, saying which.
void AnswerNext(const std::shared_ptr<PersonAnswers>& state) {
  if (state->next == state->answers.size())
    return state->then();
  size_t index = state->next++;
  state->call->Daemon(
      GetRequest{.task = state->answers[index].task},
      [state, index](Result<TaskReply> reply) {
        const PersonAnswer& answer = state->answers[index];
        if (!reply)
          return AnswerNext(state);
        const auto& questions = reply->task.questions;
        auto question =
            std::ranges::find(questions, answer.seq, &OpenQuestion::seq);
        if (question == questions.end())
          return AnswerNext(state);  // Answered already.
        auto answers = AnswersFromElicitation(*question, answer.response);
        if (!answers) {
          return state->call->Finish(ToolResult::Error(fmt::format(
              "inputResponses[\"{}\"]: {}; nothing was answered for it",
              answer.key, answers.error().message)));
        }
        state->call->Daemon(
            AnswerRequest{.task = answer.task,
                          .answers = std::move(*answers),
                          .question = answer.seq},
            // Refused: the first answer won, or the task ended.
            [state](Result<AnswerReply>) { AnswerNext(state); });
      });
}

struct TaskOutputArguments {
  TaskIdsArguments ids;
  bool wait = false;
  std::optional<Seconds> timeout_s;
  std::optional<WaitUntil> until;
  std::optional<int64_t> offset;
  template <class V>
  void Fields(V& v) {
    ids.Fields(v);
    v("wait", wait,
      {.doc = "Block until any of the tasks ends (or timeout_s passes); "
              "default false"});
    v("timeout_s", timeout_s,
      {.doc = "Longest wait in seconds (at most 50, a longer one is cut to "
              "50)",
       .example = "30",
       .when_absent = "the default wait of 30 s"});
    v("until", until,
      {.doc = "With wait: \"turn\" also returns when an agent task ends a "
              "turn (it runs on), with the turn's final text: follow a "
              "worker turn by turn without polling; default \"end\""});
    v("offset", offset,
      {.min = 0,
       .max = kMaxOffset,
       .doc = "Read one task's output from this byte offset without "
              "consuming it (to see what a long output left out)",
       .example = "8000"});
  }
};

void HandleTaskOutput(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskOutputArguments>(call->arguments());
  Result<std::vector<std::string>> ids =
      args ? args->ids.Ids() : std::unexpected(args.error());
  if (!ids)
    return call->Finish(ToolResult::Error(ids.error().message));
  if (args->until && !args->wait) {
    return call->Finish(ToolResult::Error(
        "'until' says what ends a wait: give it with wait: true, e.g. "
        "{\"task_id\": \"agent-1\", \"wait\": true, \"until\": \"turn\"}"));
  }
  const std::optional<int64_t>& offset = args->offset;
  if (offset && (args->wait || ids->size() != 1)) {
    return call->Finish(ToolResult::Error(
        "'offset' reads one task's output from a byte offset, without "
        "consuming it: give a single task_id and no wait, e.g. "
        "{\"task_id\": \"shell-1\", \"offset\": 8000}"));
  }

  auto gather = std::make_shared<Gather>();
  gather->call = call;
  if (!args->wait) {
    gather->offset_mode = offset.has_value();
    for (const auto& id : *ids)
      gather->entries.push_back(MakeEntry(id));
    gather->outstanding = ids->size();
    gather->cap = std::max<uint64_t>(kOutputCap / ids->size(), 2000);
    std::optional<uint64_t> from;
    if (offset)
      from = static_cast<uint64_t>(*offset);
    return ReadAllEntries(gather, from);
  }

  double seconds = args->timeout_s ? args->timeout_s->value : kDefaultWaitS;
  if (seconds > kMaxWaitS) {
    gather->note = fmt::format(
        "(timeout_s {} was capped at {}: a call must return before the "
        "client's own limit)\n",
        seconds, kMaxWaitS);
    seconds = kMaxWaitS;
  }
  gather->waited = true;
  std::string what;
  for (const auto& id : *ids)
    what += (what.empty() ? "" : ", ") + id;
  WaitRequest request{
      .tasks = *ids,
      .timeout = std::chrono::milliseconds(std::llround(seconds * 1000.0)),
      .turns = args->until == WaitUntil::kTurn};
  // A retry after the person answered: what the first wait told since it
  // began is news again.
  int64_t news_since = WallMillis();
  if (auto since = NewsSince(call->request_state())) {
    news_since = std::min(news_since, *since);
    request.news_since_ms = news_since;
  }
  auto start_wait = [gather, request = std::move(request), what,
                     news_since]() mutable {
    gather->call->DaemonWait(
        std::move(request), "waiting for " + what,
        [gather, news_since](Result<WaitReply> reply) {
          if (!reply) {
            return gather->call->Finish(
                ToolResult::Error(DaemonErrorText(reply.error())));
          }
          if (gather->call->meta().modern && gather->call->CanAskPerson()) {
            Json forms = PersonForms(reply->ended);
            if (!forms.empty()) {
              return gather->call->InputRequired(
                  std::move(forms), Json{{"news_since_ms", news_since}}.dump());
            }
          }
          OnWaitEnded(gather, std::move(*reply));
        });
  };
  const Json& responses = call->input_responses();
  if (!responses.is_object() || responses.empty())
    return start_wait();
  auto answers = std::make_shared<PersonAnswers>();
  answers->call = call;
  // A form is asked for only for a task this call waits on, one at a time
  // (its oldest question): any other key, or a second key of one task, is
  // no answer of ours and is ignored, as the spec asks. So a retry answers
  // at most one question per task it names, however many keys it carries.
  std::set<std::string> answered;
  for (const auto& [key, response] : responses.items()) {
    auto answer = ReadPersonFormKey(key);
    if (answer && std::ranges::find(*ids, answer->task) != ids->end() &&
        answered.insert(answer->task).second) {
      answer->response = response;
      answers->answers.push_back(std::move(*answer));
    }
  }
  answers->then = std::move(start_wait);
  AnswerNext(answers);
}

}  // namespace

ToolDefinition TaskOutputToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_output";
  tool.title = "Read or wait for task output";
  tool.description =
      "Read what tasks printed since you last read them, each with a status "
      "line like [status: running] or [status: completed, exit code: 0]. "
      "With wait: true, block until ANY of the given tasks ends (at most "
      "timeout_s, default 30, max 50) and return each ended task's remaining "
      "output and status, plus the ids still running; on timeout only their "
      "state. An agent task (delegate) also returns when it asks a question "
      "(status waiting): the question comes with it; answer with "
      "task_answer. A wait returns only for news: a task whose end or "
      "question you were already told (by a wait, a read, a status or a "
      "notice) does not end the wait again, unless every task named has "
      "ended and was told (then all come back at once). Wait on all the ids "
      "you are blocked on in one call; never "
      "poll in a loop or sleep. Long output keeps its head and tail and "
      "says how to read the rest (offset).";
  tool.input_schema = ArgumentSchema<TaskOutputArguments>();
  Json entry = TaskSummarySchema();
  entry["properties"]["output"] = {
      {"type", "string"},
      {"description",
       "The output read (head and tail with a marker if it was long)"}};
  entry["properties"]["output_from"] = {{"type", "integer"}};
  entry["properties"]["output_to"] = {{"type", "integer"}};
  entry["properties"]["omitted_bytes"] = {
      {"type", "integer"},
      {"description", "Bytes of [output_from, output_to) not shown"}};
  entry["properties"]["error"] = {{"type", "string"}};
  entry["properties"]["questions"] = PendingQuestionsSchema();
  entry["properties"]["turn_ended"] = {
      {"type", "boolean"},
      {"description", "until \"turn\": it ended a turn and runs on"}};
  entry["properties"]["turn_text"] = {{"type", "string"},
                                      {"description", "the turn's final text"}};
  entry["required"] = {"task_id"};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {
           {"tasks", {{"type", "array"}, {"items", entry}}},
           {"still_running",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description", "Ids of waited tasks that had not ended"}}},
           {"timed_out", {{"type", "boolean"}}},
           {"waited", {{"type", "boolean"}}},
           {"already_told",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description",
              "Waited tasks that had ended (or asked) and that you had "
              "already collected: not news, left out of tasks"}}},
           {"told_before",
            {{"type", "array"},
             {"items", {{"type", "string"}}},
             {"description",
              "Tasks in tasks that you had collected before this wait: "
              "when none of the waited ids is news the wait answers at "
              "once with them; wait only on ids you have not collected"}}},
       }},
      {"required", {"tasks", "still_running", "timed_out", "waited"}},
  };
  // Reading moves this session's read cursor and nothing else.
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"idempotentHint", false},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskOutput;
  return tool;
}

}  // namespace baton::mcp
