#include "baton/daemon/agent_runtime.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>

#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

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
  const Json& options = item.value("options", Json::array());
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
      // All digits; from_chars fails only past size_t's range (where
      // std::stoul threw), which names no option either.
      size_t number = 0;
      auto parsed =
          std::from_chars(token.data(), token.data() + token.size(), number);
      if (parsed.ec == std::errc() && number >= 1 && number <= options.size()) {
        labels.push_back(options[number - 1].value("label", ""));
        found = true;
      } else {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("item {} has options 1 to {}; {} is none "
                                     "of them",
                                     index + 1, options.size(), token));
      }
    } else {
      for (const auto& option : options) {
        if (Lower(option.value("label", "")) == Lower(token)) {
          labels.push_back(option.value("label", ""));
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
    if (labels.size() > 1 && !item.value("multi_select", false)) {
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

// How an event reads in the transcript (output.log).
std::string TranscriptLine(const Json& event) {
  std::string type = event.value("type", "");
  if (type == "text")
    return event.value("text", "") + "\n";
  if (type == "tool") {
    return fmt::format("> {}: {}\n", event.value("name", "?"),
                       event.value("input", ""));
  }
  if (type == "question") {
    std::string text;
    for (const auto& item : event.value("items", Json::array())) {
      text += fmt::format("? {}\n", item.value("prompt", ""));
      size_t n = 0;
      for (const auto& option : item.value("options", Json::array())) {
        text += fmt::format("  [{}] {}{}\n", ++n, option.value("label", ""),
                            option.value("description", "").empty()
                                ? ""
                                : " — " + option.value("description", ""));
      }
    }
    return text;
  }
  if (type == "answer") {
    return fmt::format("= answered: {}\n", event["answers"].dump());
  }
  if (type == "question_withdrawn") {
    return fmt::format("= withdrawn: {}\n", event.value("reason", ""));
  }
  if (type == "delivered") {
    return fmt::format("< followup (delivered): {}\n", event.value("text", ""));
  }
  if (type == "message") {
    return fmt::format("< {} ({}): {}\n", event.value("mode", ""),
                       event.value("delivery", ""), event.value("text", ""));
  }
  if (type == "result") {
    return event.value("ok", false)
               ? fmt::format("[result] {}\n", event.value("text", ""))
               : fmt::format("[failed] {}\n", event.value("detail", ""));
  }
  if (type == "error") {
    return fmt::format("[error] {}\n", event.value("message", ""));
  }
  if (type == "note")
    return fmt::format("[note] {}\n", event.value("text", ""));
  return "";
}

}  // namespace

// One live agent task: its adapter, its stream, its stdin, its events.
class AgentRuntime::Worker : public AdapterSink {
 public:
  Worker(AgentRuntime* runtime, TaskRecord task,
         std::unique_ptr<AgentAdapter> adapter)
      : runtime_(runtime),
        task_(std::move(task)),
        adapter_(std::move(adapter)) {
    dir_ = runtime_->executor_->TaskDir(task_.id);
  }

  ~Worker() override {
    if (inotify_)
      runtime_->loop_->RemoveFd(inotify_.get());
    if (stdin_ && stdin_watched_)
      runtime_->loop_->RemoveFd(stdin_.get());
  }

  const TaskRecord& task() const { return task_; }
  AgentAdapter& adapter() { return *adapter_; }

  // A kill: asks the CLI to end its turn, after which stdin closes (no
  // queued follow-up starts another) and the CLI exits by itself. False
  // when no turn runs, so there is nothing to wait for.
  bool Stop() {
    stopping_ = true;
    if (turn_ended_ || stdin_closed_ || !adapter_->interactive())
      return false;
    adapter_->Interrupt(*this);
    return true;
  }
  bool has_open_question() const { return !open_questions_.empty(); }

  // Opens the files and starts tailing. With `replay`, feeds the whole
  // stream to a fresh adapter with writes discarded and events already on
  // disk skipped, so its state is what it was before a restart.
  void Begin(bool replay) {
    LoadEvents();
    events_.reset(::open((dir_ + "/" + kAgentEventsFile).c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    transcript_.reset(::open(task_.output_path.c_str(),
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    stream_.reset(::open((dir_ + "/" + kAgentStreamFile).c_str(),
                         O_RDONLY | O_CREAT | O_CLOEXEC, 0600));
    if (adapter_->interactive() && !stdin_closed_) {
      stdin_.reset(::open((dir_ + "/" + kStdinFile).c_str(),
                          O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    }
    replaying_ = replay;
    // Why batond ran another adapter than the profile's (a codex without
    // app-server), first: not an adapter event, so written once.
    if (!replay && last_seq_ == 0 && !task_.spec.agent->note.empty())
      Record({{"type", "note"}, {"text", task_.spec.agent->note}});
    adapter_->Begin(*task_.spec.agent, task_.spec.cwd, *this);
    Drain();
    replaying_ = false;
    if (replay) {
      // Still running when a message started a turn after the last turn
      // ended (the markers count the adapter's events when they were sent).
      turn_ended_ = turn_ended_ && last_turn_end_at_ > last_start_at_;
      if (turn_ended_)
        DeliverNextOrClose();  // Follow-ups queued before the restart.
    }
    inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (inotify_) {
      ::inotify_add_watch(inotify_.get(),
                          (dir_ + "/" + kAgentStreamFile).c_str(), IN_MODIFY);
      (void)runtime_->loop_->AddFd(inotify_.get(), EPOLLIN, [this](uint32_t) {
        char buf[4096];
        while (::read(inotify_.get(), buf, sizeof buf) > 0) {
        }
        Drain();
      });
    }
    Drain();  // Whatever came before the watch.
  }

  // Feeds every complete line that arrived to the adapter.
  void Drain() {
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

  // At the process's exit: the last bytes, even without a newline.
  void DrainToEnd() {
    Drain();
    if (!partial_.empty()) {
      std::string last = std::move(partial_);
      partial_.clear();
      adapter_->OnLine(last, *this);
    }
  }

  Status Answer(const std::vector<std::string>& texts, Json* answered) {
    if (open_questions_.empty() && !last_withdrawn_.is_null()) {
      return MakeError(
          ErrorCode::kAlreadyExists,
          fmt::format("{} has no open question: its question (event {}) was "
                      "withdrawn by the agent ({}); nothing to answer",
                      task_.id.ToString(), last_withdrawn_.value("question", 0),
                      last_withdrawn_.value("reason", "resolved")));
    }
    if (open_questions_.empty()) {
      return MakeError(ErrorCode::kAlreadyExists,
                       fmt::format("{} has no open question (an earlier "
                                   "answer won, or none was asked)",
                                   task_.id.ToString()));
    }
    const Json question = open_questions_.front();
    const Json& items = question.value("items", Json::array());
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
            {"question", question.value("seq", 0)},
            {"answers", record}});
    if (open_questions_.empty())
      runtime_->registry_->SetWaiting(task_.id, false);
    *answered = {{"question", question.value("seq", 0)}, {"answers", record}};
    return {};
  }

  Result<std::string> Send(const std::string& message, SendMode mode) {
    if (!adapter_->interactive()) {
      // It read its brief once: the adapter says why no message goes in
      // (queueing one would drop it silently at the end).
      if (auto sent = adapter_->Send(message, mode, *this); !sent)
        return std::unexpected(sent.error());
    }
    if (stdin_closed_) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{} finished its turn and is ending; "
                                   "resume it as a new task: baton delegate "
                                   "--resume {} ...",
                                   task_.id.ToString(), task_.id.ToString()));
    }
    std::string delivery;
    bool queued = false;
    if (turn_ended_) {
      if (auto sent = adapter_->Send(message, SendMode::kFollowup, *this);
          !sent) {
        return std::unexpected(sent.error());
      }
      turn_ended_ = false;
      delivery = "sent";
      last_start_at_ = adapter_emits_;
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
    Record({{"type", "message"},
            {"mode", mode == SendMode::kSteer ? "steer" : "followup"},
            {"text", message},
            {"delivery", delivery},
            {"emits", adapter_emits_}});
    // Queued in events.jsonl too: a restarted batond delivers it.
    if (queued)
      followups_.push_back({last_seq_, message});
    return delivery;
  }

  // AdapterSink.
  void Emit(Json event) override {
    int64_t index = adapter_emits_++;
    if (index < skip_emits_)
      return;  // On disk already (a replay).
    event["src"] = index;
    std::string type = event.value("type", "");
    if (type == "question_withdrawn") {
      // Only a question still open is withdrawn; adapters also report
      // requests that were answered meanwhile.
      auto open = std::find_if(open_questions_.begin(), open_questions_.end(),
                               [&](const Json& q) {
                                 return q.value("ref", Json()) == event["ref"];
                               });
      if (open == open_questions_.end())
        return;
      event["question"] = open->value("seq", 0);
      open_questions_.erase(open);
      last_withdrawn_ = event;
      if (open_questions_.empty())
        runtime_->registry_->SetWaiting(task_.id, false);
    }
    if (type == "session") {
      runtime_->registry_->SetAgentSession(task_.id,
                                           event.value("session_id", ""));
    }
    Record(std::move(event));
  }

  void WriteLine(std::string line) override {
    if (replaying_)
      return;
    out_ += line;
    out_ += '\n';
    FlushStdin();
  }

  void TurnEnded() override {
    turn_ended_ = true;
    last_turn_end_at_ = adapter_emits_;
    // Questions the CLI left open are moot once its turn is over.
    if (!open_questions_.empty()) {
      open_questions_.clear();
      if (!replaying_)
        runtime_->registry_->SetWaiting(task_.id, false);
    }
    if (replaying_)
      return;
    DeliverNextOrClose();
  }

 private:
  // Appends an event (numbered) to events.jsonl and its line to the
  // transcript; keeps the registry's status in step with open questions.
  void Record(Json event) {
    event["seq"] = ++last_seq_;
    event["at"] = FormatIsoTime(WallMillis());
    std::string line =
        event.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    if (events_)
      (void)WriteAll(events_.get(), line);
    if (transcript_)
      (void)WriteAll(transcript_.get(), TranscriptLine(event));
    if (event.value("type", "") == "question") {
      open_questions_.push_back(event);
      runtime_->registry_->SetWaiting(task_.id, true);
    }
  }

  // Between turns: the oldest queued follow-up starts the next turn, else
  // stdin closes and the CLI ends. A "delivered" event marks it sent right
  // after the write to the FIFO, so a restarted batond does not send it
  // again.
  void DeliverNextOrClose() {
    if (!followups_.empty() && !stopping_) {
      Followup next = std::move(followups_.front());
      followups_.pop_front();
      int64_t at = adapter_emits_;
      auto sent = adapter_->Send(next.text, SendMode::kFollowup, *this);
      Json delivered = {{"type", "delivered"},
                        {"message", next.seq},
                        {"text", next.text},
                        {"emits", at}};
      if (!sent)
        delivered["error"] = sent.error().message;
      Record(std::move(delivered));
      if (sent) {
        turn_ended_ = false;
        last_start_at_ = at;
        return;
      }
    }
    CloseStdin();
  }

  // Numbering and open questions from an events file a previous batond
  // wrote; the adapter's events up to the last one there are not redone.
  void LoadEvents() {
    auto text = ReadFile(dir_ + "/" + kAgentEventsFile);
    if (!text)
      return;
    std::map<int64_t, Json> questions;
    std::map<int64_t, std::string> queued;
    size_t start = 0;
    for (size_t nl; (nl = text->find('\n', start)) != std::string::npos;
         start = nl + 1) {
      Json event = Json::parse(text->substr(start, nl - start), nullptr, false);
      if (!event.is_object())
        continue;
      last_seq_ = std::max<int64_t>(last_seq_, event.value("seq", 0));
      if (event.contains("src")) {
        skip_emits_ =
            std::max<int64_t>(skip_emits_, event["src"].get<int64_t>() + 1);
      }
      std::string type = event.value("type", "");
      if (type == "question")
        questions[event.value("seq", 0)] = event;
      if (type == "answer") {
        questions.erase(event.value("question", 0));
        last_withdrawn_ = nullptr;
      }
      if (type == "question_withdrawn") {
        questions.erase(event.value("question", 0));
        last_withdrawn_ = event;
      }
      if (type == "result")
        questions.clear();
      // Follow-ups: queued until a "delivered" event names them.
      if (type == "message" &&
          event.value("delivery", "").starts_with("queued")) {
        queued[event.value("seq", 0)] = event.value("text", "");
      }
      if (type == "delivered")
        queued.erase(event.value("message", 0));
      if ((type == "message" && event.value("delivery", "") == "sent") ||
          type == "delivered") {
        last_start_at_ = std::max<int64_t>(last_start_at_,
                                           event.value("emits", int64_t{-1}));
      }
    }
    for (auto& [seq, question] : questions)
      open_questions_.push_back(question);
    for (auto& [seq, text] : queued)
      followups_.push_back({seq, std::move(text)});
  }

  void FlushStdin() {
    while (stdin_ && !out_.empty()) {
      ssize_t n = ::write(stdin_.get(), out_.data(), out_.size());
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN) {
        if (!stdin_watched_) {
          stdin_watched_ = true;
          (void)runtime_->loop_->AddFd(stdin_.get(), EPOLLOUT,
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
      runtime_->loop_->RemoveFd(stdin_.get());
      stdin_watched_ = false;
    }
  }

  void CloseStdin() {
    if (stdin_closed_)
      return;
    stdin_closed_ = true;
    if (!adapter_->interactive())
      return;
    FlushStdin();
    if (stdin_ && stdin_watched_)
      runtime_->loop_->RemoveFd(stdin_.get());
    stdin_watched_ = false;
    stdin_.reset();
    runtime_->executor_->CloseStdin(task_.id);
  }

  AgentRuntime* runtime_;
  TaskRecord task_;
  std::unique_ptr<AgentAdapter> adapter_;
  std::string dir_;
  UniqueFd stream_, events_, transcript_, stdin_, inotify_;
  std::string partial_;  // Stream bytes after the last newline.
  std::string out_;      // Lines not yet taken by the stdin pipe.
  bool stdin_watched_ = false;
  bool replaying_ = false;
  bool turn_ended_ = false;
  bool stdin_closed_ = false;
  bool stopping_ = false;  // Killed: the turn ends, nothing follows.
  int64_t last_seq_ = 0;
  int64_t adapter_emits_ = 0;
  int64_t skip_emits_ = 0;
  struct Followup {
    int64_t seq;  // Of its "message" event.
    std::string text;
  };
  // Rebuilt from events.jsonl after a restart (LoadEvents).
  std::deque<Followup> followups_;
  // adapter_emits_ at the last TurnEnded, and when the last message that
  // started a turn was sent: after a replay, a turn runs if the start is
  // the later one.
  int64_t last_turn_end_at_ = -1;
  int64_t last_start_at_ = -1;
  std::deque<Json> open_questions_;
  Json last_withdrawn_;  // The last withdrawal, unless an answer came since.
};

AgentRuntime::AgentRuntime(EventLoop* loop, Executor* executor,
                           TaskRegistry* registry, ExecutorListener* next)
    : loop_(loop),
      executor_(executor),
      registry_(registry),
      next_(next ? next : registry) {}

AgentRuntime::~AgentRuntime() = default;

AgentRuntime::Worker* AgentRuntime::Find(const TaskId& id) {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : it->second.get();
}

void AgentRuntime::Start(const TaskRecord& task, bool replay) {
  auto adapter = MakeAdapter(task.spec.agent->adapter);
  if (!adapter) {
    BATON_LOG_ERROR("{}: unknown adapter {}", task.id.ToString(),
                    task.spec.agent->adapter);
    return;
  }
  auto worker = std::make_unique<Worker>(this, task, std::move(adapter));
  Worker* raw = worker.get();
  workers_[task.id] = std::move(worker);
  raw->Begin(replay);
}

void AgentRuntime::Recover(const std::vector<TaskRecord>& live) {
  for (const auto& task : live) {
    if (task.spec.agent && task.status != TaskStatus::kQueued &&
        !Find(task.id)) {
      Start(task, /*replay=*/true);
    }
  }
}

void AgentRuntime::OnTaskSpawned(const TaskId& id, int64_t pid,
                                 int64_t started_ms) {
  next_->OnTaskSpawned(id, pid, started_ms);
  const TaskRecord* task = registry_->FindLive(id);
  if (task && task->spec.agent && !Find(id))
    Start(*task, /*replay=*/false);
}

void AgentRuntime::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  next_->OnTaskSpawnFailed(id, error);
}

void AgentRuntime::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  const TaskRecord* task = registry_->FindLive(id);
  if (!task || !task->spec.agent)
    return next_->OnTaskExited(id, exit);
  // An agent that ended while no batond ran: rebuild what it said.
  if (!Find(id) && task->status != TaskStatus::kQueued)
    Start(*task, true);
  Worker* worker = Find(id);
  ExitInfo verdict_exit = exit;
  if (worker) {
    worker->DrainToEnd();
    if (auto verdict = worker->adapter().verdict()) {
      verdict_exit.verdict = verdict->first;
      verdict_exit.verdict_detail = verdict->second;
    }
  }
  if (!verdict_exit.verdict && exit.cause == ExitCause::kNatural &&
      exit.exit_code.value_or(1) != 0) {
    // A CLI that died at once usually said why on stderr.
    auto stderr_text =
        ReadFile(executor_->TaskDir(id) + "/" + kAgentStderrFile);
    if (stderr_text && !stderr_text->empty()) {
      std::string last = *stderr_text;
      while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) {
        last.pop_back();
      }
      last = last.substr(
          last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
      if (last.size() > 200)
        last = last.substr(0, 200) + "...";
      verdict_exit.verdict = TaskStatus::kFailed;
      verdict_exit.verdict_detail =
          exit.exit_code
              ? fmt::format("exit code: {}; stderr: {}", *exit.exit_code, last)
              : fmt::format("signal: {}; stderr: {}",
                            SignalName(exit.signal.value_or(0)), last);
      if (std::string why =
              worker ? worker->adapter().ExplainExit(*stderr_text) : "";
          !why.empty()) {
        verdict_exit.verdict_detail =
            fmt::format("{} (exit code: {})", why, exit.exit_code.value_or(-1));
      }
    }
  }
  workers_.erase(id);
  next_->OnTaskExited(id, verdict_exit);
}

Result<std::string> AgentRuntime::Send(const TaskRecord& task,
                                       const std::string& message,
                                       SendMode mode) {
  Worker* worker = Find(task.id);
  if (!worker) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is {}, not a running agent; messages go "
                    "to running agent tasks",
                    task.id.ToString(), TaskStatusName(task.status)));
  }
  if (message.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "empty message");
  }
  return worker->Send(message, mode);
}

Result<Json> AgentRuntime::Answer(const TaskRecord& task,
                                  const std::vector<std::string>& answers) {
  Worker* worker = Find(task.id);
  if (!worker) {
    return MakeError(
        ErrorCode::kAlreadyExists,
        fmt::format("{} is {}: no open question to answer", task.id.ToString(),
                    TaskStatusName(task.status)));
  }
  Json answered;
  if (auto ok = worker->Answer(answers, &answered); !ok) {
    return std::unexpected(ok.error());
  }
  return answered;
}

bool AgentRuntime::Interrupt(const TaskId& id) {
  Worker* worker = Find(id);
  return worker && worker->Stop();
}

Result<Json> AgentRuntime::Events(const TaskRecord& task, int64_t after) const {
  if (!task.spec.agent) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} is a shell task; only agent tasks have "
                                 "events (its output: baton output {})",
                                 task.id.ToString(), task.id.ToString()));
  }
  Json events = Json::array();
  auto text = ReadFile(executor_->TaskDir(task.id) + "/" + kAgentEventsFile);
  if (!text)
    return events;
  size_t start = 0;
  for (size_t nl; (nl = text->find('\n', start)) != std::string::npos;
       start = nl + 1) {
    Json event = Json::parse(text->substr(start, nl - start), nullptr, false);
    if (event.is_object() && event.value("seq", 0) > after) {
      events.push_back(std::move(event));
    }
  }
  return events;
}

}  // namespace baton
