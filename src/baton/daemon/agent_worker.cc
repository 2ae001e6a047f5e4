#include "baton/daemon/agent_worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <utility>

#include "baton/ipc/event_text.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"
#include "baton/util/secret_shapes.h"

namespace baton {
namespace {

// Every string in `value` (keys apart) with its secrets masked.
void MaskStrings(Json& value) {
  if (const auto* text = value.get_ptr<const std::string*>()) {
    std::string masked = MaskSecrets(*text);
    if (masked != *text)
      value = std::move(masked);
  } else if (value.is_structured()) {
    for (Json& member : value)
      MaskStrings(member);
  }
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string Trim(std::string_view text) {
  size_t start = text.find_first_not_of(" \t");
  size_t end = text.find_last_not_of(" \t");
  return start == std::string_view::npos
             ? ""
             : std::string(text.substr(start, end - start + 1));
}

// One answer string against one question item: option numbers ("2",
// "1,3"), labels, "skip", or free text.
Result<ItemAnswer> ResolveAnswer(const Json& item, const std::string& text,
                                 size_t index) {
  ItemAnswer answer;
  std::string trimmed = Trim(text);
  if (Lower(trimmed) == "skip") {
    answer.skipped = true;
    return answer;
  }
  const Json& options = ArrayAt(item, "options");
  std::vector<std::string> labels;
  bool all_options = !options.empty();
  size_t start = 0;
  while (all_options && start <= trimmed.size()) {
    size_t comma = trimmed.find(',', start);
    std::string token = Trim(trimmed.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start));
    bool found = false;
    if (!token.empty() &&
        std::all_of(token.begin(), token.end(),
                    [](unsigned char c) { return std::isdigit(c); })) {
      size_t number = 0;  // Stays 0, out of range, when it overflows.
      std::from_chars(token.data(), token.data() + token.size(), number);
      if (number >= 1 && number <= options.size()) {
        labels.push_back(StringAt(options[number - 1], "label"));
        found = true;
      } else {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("item {} has options 1 to {}; {} is none "
                                     "of them",
                                     index + 1, options.size(), token));
      }
    } else {
      for (const auto& option : options) {
        if (Lower(StringAt(option, "label")) == Lower(token)) {
          labels.push_back(StringAt(option, "label"));
          found = true;
          break;
        }
      }
    }
    if (!found)
      all_options = false;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (all_options && !labels.empty()) {
    if (labels.size() > 1 && !BoolAt(item, "multi_select")) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("item {} takes one choice; give one option", index + 1));
    }
    answer.labels = std::move(labels);
    return answer;
  }
  if (trimmed.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("empty answer for item {}; give an option "
                                 "number, a label, text, or skip",
                                 index + 1));
  }
  answer.text = trimmed;
  return answer;
}

// The n of a message id "m-<n>"; 0 for anything else.
int64_t MessageNumber(std::string_view id) {
  int64_t n = 0;
  if (!id.starts_with("m-"))
    return 0;
  auto [end, ec] = std::from_chars(id.data() + 2, id.data() + id.size(), n);
  return ec == std::errc() && end == id.data() + id.size() && n > 0 ? n : 0;
}

}  // namespace

void MessageLedger::Apply(const Json& event) {
  std::string type = StringAt(event, "type");
  if (type == "message") {
    int64_t n = MessageNumber(StringAt(event, "id"));
    numbers = n > 0 ? std::max(numbers, n) : numbers + 1;
    std::string id =
        n > 0 ? StringAt(event, "id") : fmt::format("m-{}", numbers);
    if (StringAt(event, "delivery").starts_with("queued"))
      queued[IntAt(event, "seq")] = {id, StringAt(event, "text")};
    else
      settled[id] = {"delivered", StringAt(event, "at")};
    return;
  }
  auto it = queued.find(IntAt(event, "message"));
  if (it == queued.end())
    return;
  if (type == "message_replaced")
    it->second.text = StringAt(event, "text");
  if (type == "delivered" || type == "message_withdrawn") {
    settled[it->second.id] = {type == "delivered" ? "delivered" : "withdrawn",
                              StringAt(event, "at")};
    queued.erase(it);
  }
}

Error RefuseMessageChange(const std::string& task, const std::string& id,
                          const MessageLedger::Settled* settled,
                          const std::vector<std::string>& queued_ids) {
  if (settled) {
    return {ErrorCode::kAlreadyDelivered,
            fmt::format("{}: message {} was already {} at {}; only a queued "
                        "message can be replaced or withdrawn (send a new "
                        "message instead)",
                        task, id, settled->how, settled->at)};
  }
  return {ErrorCode::kInvalidArgument,
          fmt::format("{} has no message {}; {}", task, id,
                      queued_ids.empty()
                          ? "no message is queued now"
                          : fmt::format("the queued ones are {}",
                                        fmt::join(queued_ids, ", ")))};
}

AgentWorker::AgentWorker(EventLoop* loop, Executor* executor,
                         TaskRegistry* registry, TaskRecord task,
                         std::unique_ptr<AgentAdapter> adapter)
    : loop_(loop),
      executor_(executor),
      registry_(registry),
      task_(std::move(task)),
      adapter_(std::move(adapter)),
      dir_(executor_->TaskDir(task_.id)) {}

AgentWorker::~AgentWorker() {
  if (stream_poll_)
    loop_->Cancel(stream_poll_);
  if (inotify_)
    loop_->RemoveFd(inotify_.get());
  if (stdin_ && stdin_watched_)
    loop_->RemoveFd(stdin_.get());
}

bool AgentWorker::Stop() {
  if (turn_ != TurnState::kInTurn && turn_ != TurnState::kStopping)
    return false;
  turn_ = TurnState::kStopping;
  if (!adapter_->interactive())
    return false;
  adapter_->Interrupt(*this);
  return true;
}

void AgentWorker::Begin(bool replay) {
  int64_t last_seq = LoadEvents();
  events_ = AgentEventLog::Open(dir_ + "/" + kAgentEventsFile, last_seq);
  transcript_.reset(::open(task_.output_path.c_str(),
                           O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  stream_.reset(::open((dir_ + "/" + kAgentStreamFile).c_str(),
                       O_RDONLY | O_CREAT | O_CLOEXEC, 0600));
  if (adapter_->interactive()) {
    // A FIFO here; on Slurm, a file the job's relay follows: appended to,
    // also after a restart (doc/slurm.md, "Agent workers").
    stdin_.reset(::open((dir_ + "/" + kStdinFile).c_str(),
                        O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC));
  }
  replay_.active = replay;
  // Why batond ran another adapter than the profile's (a codex without
  // app-server), first: not an adapter event, so written once.
  if (!replay && last_seq == 0 && !task_.spec.agent->note.empty())
    Record({{"type", "note"}, {"text", task_.spec.agent->note}});
  // The first turn: one that starts in a spent session is stopped at once
  // (its end is then no finished work).
  turn_began_over_budget_ = !replay && !BudgetReason().empty();
  if (!replay &&
      replay_.attempt < static_cast<int64_t>(task_.attempts.size()) + 1) {
    BeginAttempt();
  }
  adapter_emits_ = replay_.attempt_emits;
  adapter_->Begin(*task_.spec.agent, task_.spec.cwd, *this);
  Drain();
  replay_.active = false;
  if (turn_ == TurnState::kTurnEnded)
    DeliverNextOrClose();  // Follow-ups queued before the restart.
  inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (inotify_) {
    ::inotify_add_watch(inotify_.get(), (dir_ + "/" + kAgentStreamFile).c_str(),
                        IN_MODIFY);
    (void)loop_->AddFd(inotify_.get(), EPOLLIN, [this](uint32_t) {
      char buf[4096];
      while (::read(inotify_.get(), buf, sizeof buf) > 0) {
      }
      Drain();
      CheckBudget();
    });
  }
  Drain();  // Whatever came before the watch.
  CheckBudget();
  if (task_.spec.remote)
    PollStream();
}

void AgentWorker::BeginAttempt() {
  const TaskRecord* live = registry_->FindLive(task_.id);
  replay_.attempt = static_cast<int64_t>(task_.attempts.size()) + 1;
  replay_.attempt_emits = replay_.skip_emits;
  replay_.usage_before = live && live->usage ? *live->usage : AgentUsage{};
  // The last attempt's questions died with its CLI.
  open_questions_.clear();
  auto before = ParseJson(EncodeObject(replay_.usage_before));
  Json usage_before = before ? std::move(before->value) : Json::object();
  Record(
      {{"type", "note"},
       {"text", fmt::format("attempt {} of {} (attempt {}: {}): starting "
                            "again from its brief",
                            replay_.attempt, task_.spec.retry.retries + 1,
                            replay_.attempt - 1, task_.attempts.back().detail)},
       {"attempt", replay_.attempt},
       {"emits", replay_.attempt_emits},
       {"usage_before", std::move(usage_before)}});
}

void AgentWorker::PollStream() {
  stream_poll_ = loop_->Schedule(
      std::chrono::steady_clock::now() + std::chrono::seconds(1), [this] {
        stream_poll_ = 0;
        Drain();
        CheckBudget();
        PollStream();
      });
}

// Feeds every complete line that arrived to the adapter.
void AgentWorker::Drain() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(stream_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    partial_.append(buf, static_cast<size_t>(n));
  }
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    std::string_view line(partial_.data() + start, nl - start);
    if (!line.empty())
      adapter_->OnLine(line, *this);
  }
  partial_.erase(0, start);
}

void AgentWorker::DrainToEnd() {
  Drain();
  if (!partial_.empty()) {
    std::string last = std::move(partial_);
    partial_.clear();
    adapter_->OnLine(last, *this);
  }
}

Status AgentWorker::Answer(const std::vector<std::string>& texts,
                           Json* answered) {
  if (open_questions_.empty() && !last_withdrawn_.is_null()) {
    return MakeError(
        ErrorCode::kAlreadyExists,
        fmt::format("{} has no open question: its question (event {}) was "
                    "withdrawn by the agent ({}); nothing to answer",
                    task_.id.ToString(), IntAt(last_withdrawn_, "question"),
                    StringAt(last_withdrawn_, "reason", "resolved")));
  }
  if (open_questions_.empty()) {
    return MakeError(ErrorCode::kAlreadyExists,
                     fmt::format("{} has no open question (an earlier "
                                 "answer won, or none was asked)",
                                 task_.id.ToString()));
  }
  const Json question = open_questions_.front();
  const Json& items = ArrayAt(question, "items");
  if (texts.size() != items.size()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("the question has {} item(s); give one answer for "
                    "each (an option number, a label, text, or skip)",
                    items.size()));
  }
  std::vector<ItemAnswer> answers;
  Json record = Json::array();
  for (size_t i = 0; i < items.size(); ++i) {
    auto answer = ResolveAnswer(items[i], texts[i], i);
    if (!answer)
      return std::unexpected(answer.error());
    record.push_back(answer->skipped           ? Json("skip")
                     : !answer->labels.empty() ? Json(answer->labels)
                                               : Json(answer->text));
    answers.push_back(std::move(*answer));
  }
  if (auto ok = adapter_->Answer(question, answers, *this); !ok)
    return ok;
  open_questions_.pop_front();
  last_withdrawn_ = nullptr;
  Record({{"type", "answer"},
          {"question", IntAt(question, "seq")},
          {"answers", record}});
  if (open_questions_.empty())
    registry_->SetWaiting(task_.id, false);
  *answered = {{"question", IntAt(question, "seq")}, {"answers", record}};
  return {};
}

Result<AgentWorker::Sent> AgentWorker::Send(const std::string& message,
                                            SendMode mode) {
  if (!adapter_->interactive()) {
    // It read its brief once: the adapter says why no message goes in
    // (queueing one would drop it silently at the end).
    if (auto sent = adapter_->Send(message, mode, *this); !sent)
      return std::unexpected(sent.error());
  }
  if (turn_ == TurnState::kClosed) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} finished its turn and is ending; "
                                 "resume it as a new task: delegate with "
                                 "resume_from {}",
                                 task_.id.ToString(), task_.id.ToString()));
  }
  std::string delivery;
  bool queued = false;
  if (turn_ == TurnState::kTurnEnded) {
    if (auto sent = adapter_->Send(message, SendMode::kFollowup, *this);
        !sent) {
      return std::unexpected(sent.error());
    }
    turn_ = TurnState::kInTurn;
    delivery = "sent";
  } else if (mode == SendMode::kSteer && adapter_->can_steer()) {
    if (auto sent = adapter_->Send(message, SendMode::kSteer, *this); !sent) {
      return std::unexpected(sent.error());
    }
    delivery = "steered";
  } else {
    queued = true;
    delivery = mode == SendMode::kSteer
                   ? "queued: this agent cannot be steered mid-turn; it "
                     "gets the message when its turn ends"
                   : "queued until the current turn ends";
  }
  std::string id = fmt::format("m-{}", ++messages_);
  // "emits" marks when a turn started, for a replay (doc/agents.md).
  Record({{"type", "message"},
          {"id", id},
          {"mode", mode == SendMode::kSteer ? "steer" : "followup"},
          {"text", message},
          {"delivery", delivery},
          {"emits", adapter_emits_}});
  // Queued in events.jsonl too: a restarted batond delivers it.
  if (queued)
    followups_.push_back({events_.last_seq(), id, message});
  else
    settled_[id] = {"delivered", FormatIsoTime(WallMillis())};
  return Sent{std::move(id), std::move(delivery)};
}

std::vector<QueuedMessage> AgentWorker::Queued() const {
  std::vector<QueuedMessage> queued;
  for (const Followup& followup : followups_)
    queued.push_back({followup.id, followup.text});
  return queued;
}

Status AgentWorker::ChangeQueued(const std::string& id,
                                 std::optional<std::string> text) {
  auto followup = std::find_if(followups_.begin(), followups_.end(),
                               [&](const Followup& f) { return f.id == id; });
  if (followup == followups_.end()) {
    auto settled = settled_.find(id);
    std::vector<std::string> ids;
    for (const Followup& f : followups_)
      ids.push_back(f.id);
    return std::unexpected(RefuseMessageChange(
        task_.id.ToString(), id,
        settled == settled_.end() ? nullptr : &settled->second, ids));
  }
  if (text) {
    followup->text = *text;
    Record({{"type", "message_replaced"},
            {"id", id},
            {"message", followup->seq},
            {"text", *text}});
    return {};
  }
  Record(
      {{"type", "message_withdrawn"}, {"id", id}, {"message", followup->seq}});
  followups_.erase(followup);
  settled_[id] = {"withdrawn", FormatIsoTime(WallMillis())};
  return {};
}

void AgentWorker::Emit(Json event) {
  int64_t index = adapter_emits_++;
  if (index < replay_.skip_emits)
    return;  // On disk already (a replay).
  event["src"] = index;
  std::string type = StringAt(event, "type");
  if (type == "question_withdrawn") {
    // Only a question still open is withdrawn; adapters also report
    // requests that were answered meanwhile.
    auto open = std::find_if(
        open_questions_.begin(), open_questions_.end(),
        [&](const Json& q) { return MemberAt(q, "ref") == event["ref"]; });
    if (open == open_questions_.end())
      return;
    event["question"] = IntAt(*open, "seq");
    open_questions_.erase(open);
    last_withdrawn_ = event;
    if (open_questions_.empty())
      registry_->SetWaiting(task_.id, false);
  }
  if (type == "session")
    registry_->SetAgentSession(task_.id, StringAt(event, "session_id"));
  if (type == "usage") {
    AgentUsage usage{.input_tokens = IntAt(event, "input_tokens"),
                     .output_tokens = IntAt(event, "output_tokens"),
                     .turns = IntAt(event, "turns")};
    if (auto cost = event.find("cost_usd"); cost != event.end()) {
      double dollars = 0;
      if (DecodeValue(*cost, dollars, {}, "cost_usd"))
        usage.cost_usd = dollars;
    }
    registry_->SetUsage(task_.id, AddUsage(replay_.usage_before, usage));
  }
  Record(std::move(event));
}

// After a batch of lines, not per event: an adapter is not re-entered
// while it handles a line, and a turn that ended in the same batch is
// over (nothing left to stop).
void AgentWorker::CheckBudget() {
  if (budget_reached_ || replay_.active || !on_budget_reached_ ||
      turn_ == TurnState::kClosed || turn_ == TurnState::kStopping) {
    return;
  }
  std::string reason = BudgetReason();
  if (reason.empty())
    return;
  budget_reached_ = true;
  on_budget_reached_(reason);
}

std::string AgentWorker::BudgetReason() const {
  const TaskRecord* live = registry_->FindLive(task_.id);
  if (!live || !live->kill_reason.empty())
    return "";
  std::string reason =
      live->usage ? BudgetReached(*task_.spec.agent, *live->usage) : "";
  if (reason.empty())
    reason = registry_->budgets().Reached(task_.spec.owner);
  return reason;
}

void AgentWorker::WriteLine(std::string line) {
  if (replay_.active)
    return;
  out_ += line;
  out_ += '\n';
  FlushStdin();
}

void AgentWorker::TurnEnded() {
  // Questions the CLI left open are moot once its turn is over.
  if (!open_questions_.empty()) {
    open_questions_.clear();
    if (!replay_.active)
      registry_->SetWaiting(task_.id, false);
  }
  if (replay_.active) {
    // A turn end before the last start ended an earlier turn.
    if (adapter_emits_ > replay_.last_start_at)
      turn_ = TurnState::kTurnEnded;
    return;
  }
  if (turn_ == TurnState::kClosed)
    return;
  if (turn_ == TurnState::kStopping) {
    // A budget's stop that came as the CLI wrote its answer: the turn
    // ended with its result, not the interrupt's.
    auto verdict = adapter_->verdict();
    work_done_at_stop_ = budget_reached_ && !turn_began_over_budget_ &&
                         followups_.empty() && verdict &&
                         verdict->first == TaskStatus::kCompleted;
    return CloseStdin();
  }
  turn_ = TurnState::kTurnEnded;
  // Waits that follow the agent turn by turn (issue 13).
  registry_->TurnEnded(task_.id, std::exchange(turn_text_, {}));
  DeliverNextOrClose();
}

void AgentWorker::Record(Json event) {
  // Kept and shown (baton events, MCP task_events, the board) like the
  // output: masked (doc/redaction.md).
  if (task_.spec.redact)
    MaskStrings(event);
  bool was_failing = events_.failing();
  Status appended = events_.Append(event);
  WriteTranscript(TranscriptText(event));
  // The first of a run of failures shows in the transcript; the events
  // file records the gap once it can (AgentEventLog).
  if (!appended && !was_failing) {
    WriteTranscript(TranscriptText(
        {{"type", "error"}, {"message", appended.error().message}}));
  }
  std::string type = StringAt(event, "type");
  if (type == "text" || type == "result") {
    std::string text = StringAt(event, "text");
    if (!text.empty())
      turn_text_ = std::move(text);
  }
  if (type == "question") {
    open_questions_.push_back(event);
    registry_->SetWaiting(task_.id, true);
  }
}

void AgentWorker::WriteTranscript(const std::string& text) {
  if (text.empty() || !transcript_)
    return;
  Status written = WriteAll(transcript_.get(), text);
  if (!written && !transcript_failed_) {
    transcript_failed_ = true;
    BATON_LOG_WARN("{}: writing its transcript: {}", task_.id.ToString(),
                   written.error().message);
  }
}

// A "delivered" event marks the follow-up sent right after the write to
// the FIFO, so a restarted batond does not send it again.
void AgentWorker::DeliverNextOrClose() {
  // A follow-up would start a turn past the budget: it stays queued, and
  // CheckBudget stops the worker after this batch (doc/agents.md).
  if (!followups_.empty() && on_budget_reached_ && !BudgetReason().empty())
    return;
  if (!followups_.empty()) {
    Followup next = std::move(followups_.front());
    followups_.pop_front();
    int64_t at = adapter_emits_;
    auto sent = adapter_->Send(next.text, SendMode::kFollowup, *this);
    settled_[next.id] = {"delivered", FormatIsoTime(WallMillis())};
    Json delivered = {{"type", "delivered"},
                      {"id", next.id},
                      {"message", next.seq},
                      {"text", next.text},
                      {"emits", at}};
    if (!sent)
      delivered["error"] = sent.error().message;
    Record(std::move(delivered));
    if (sent) {
      turn_ = TurnState::kInTurn;
      turn_began_over_budget_ = false;
      return;
    }
  }
  CloseStdin();
}

int64_t AgentWorker::LoadEvents() {
  int64_t last_seq = 0;
  std::map<int64_t, Json> questions;
  MessageLedger messages;
  for (const Json& event : ReadAgentEvents(dir_ + "/" + kAgentEventsFile)) {
    last_seq = std::max<int64_t>(last_seq, IntAt(event, "seq"));
    if (MemberAt(event, "src").is_number_integer()) {
      replay_.skip_emits =
          std::max<int64_t>(replay_.skip_emits, IntAt(event, "src") + 1);
    }
    std::string type = StringAt(event, "type");
    if (type == "note" && IntAt(event, "attempt") > 0) {
      // A retry began here (BeginAttempt).
      replay_.attempt = IntAt(event, "attempt");
      replay_.attempt_emits = IntAt(event, "emits");
      replay_.usage_before = {};
      (void)DecodeValue(MemberAt(event, "usage_before"), replay_.usage_before,
                        {}, "usage_before");
      questions.clear();
      replay_.last_start_at = -1;
    }
    if (type == "question")
      questions[IntAt(event, "seq")] = event;
    if (type == "answer") {
      questions.erase(IntAt(event, "question"));
      last_withdrawn_ = nullptr;
    }
    if (type == "question_withdrawn") {
      questions.erase(IntAt(event, "question"));
      last_withdrawn_ = event;
    }
    if (type == "result")
      questions.clear();
    // Follow-ups: queued until a "delivered" or "message_withdrawn" event
    // names them.
    messages.Apply(event);
    if ((type == "message" && StringAt(event, "delivery") == "sent") ||
        type == "delivered") {
      replay_.last_start_at =
          std::max<int64_t>(replay_.last_start_at, IntAt(event, "emits", -1));
    }
  }
  for (auto& [seq, question] : questions)
    open_questions_.push_back(question);
  for (auto& [seq, message] : messages.queued)
    followups_.push_back({seq, message.id, std::move(message.text)});
  settled_ = std::move(messages.settled);
  messages_ = messages.numbers;
  return last_seq;
}

void AgentWorker::FlushStdin() {
  while (stdin_ && !out_.empty()) {
    ssize_t n = ::write(stdin_.get(), out_.data(), out_.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN) {
      if (!stdin_watched_) {
        stdin_watched_ = true;
        (void)loop_->AddFd(stdin_.get(), EPOLLOUT,
                           [this](uint32_t) { FlushStdin(); });
      }
      return;
    }
    if (n < 0) {
      BATON_LOG_WARN("{}: writing to the agent's stdin: {}",
                     task_.id.ToString(), std::strerror(errno));
      out_.clear();
      return;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  if (stdin_ && stdin_watched_ && out_.empty()) {
    loop_->RemoveFd(stdin_.get());
    stdin_watched_ = false;
  }
}

void AgentWorker::CloseStdin() {
  if (turn_ == TurnState::kClosed)
    return;
  turn_ = TurnState::kClosed;
  if (!adapter_->interactive())
    return;
  FlushStdin();
  if (stdin_ && stdin_watched_)
    loop_->RemoveFd(stdin_.get());
  stdin_watched_ = false;
  stdin_.reset();
  executor_->CloseStdin(task_.id);
}

}  // namespace baton
