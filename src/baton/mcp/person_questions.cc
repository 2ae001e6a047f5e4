// Questions for the person (doc/mcp.md, "Questions for the person"): the
// legacy eras put an `ask: "person"` task's questions to the client's user
// with elicitation/create, and answer with what the form says.
#include <fmt/format.h>

#include "baton/mcp/server.h"
#include "baton/mcp/task_mapping.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/log.h"

namespace baton::mcp {
namespace {

bool AsksPerson(const TaskRecord& task) {
  return task.spec.agent && task.spec.agent->AsksPerson();
}

}  // namespace

void Server::WatchPersonQuestionsAgain() {
  Error error;
  AsyncDaemonClient* daemon = MainConnection(&error);
  if (!daemon)
    return;  // Each call reports it; the next initialize tries again.
  daemon->Call(ListRequest{}, [this](Result<ListReply> reply) {
    if (!reply)
      return;
    for (const auto& view : reply->tasks) {
      if (AsksPerson(view.task) && !IsTerminal(view.task.status))
        WatchPersonQuestions(view.task.id.ToString());
    }
  });
}

void PersonQuestions::Watch(const std::string& task) {
  if (closed_)
    return;
  for (const auto& [id, asked] : asked_) {
    if (asked.task == task)
      return;  // Its form is out; the answer brings it back.
  }
  if (working_.insert(task).second)
    Arm();
}

void PersonQuestions::Arm() {
  auto me = shared_from_this();
  server_->Rewait(&wait_, closed_ ? std::set<std::string>() : working_,
                  "questions for the person", [me](Result<WaitReply> reply) {
                    me->OnWait(std::move(reply));
                  });
}

void PersonQuestions::OnWait(Result<WaitReply> reply) {
  if (closed_)
    return;
  if (!reply) {
    auto me = shared_from_this();
    return server_->RewaitLater(&wait_, "questions for the person",
                                reply.error(), [me] { me->Arm(); });
  }
  for (const auto& view : reply->ended) {
    std::string id = view.task.id.ToString();
    if (IsTerminal(view.task.status)) {
      working_.erase(id);
    } else if (view.task.status == TaskStatus::kWaiting) {
      working_.erase(id);
      if (!view.questions.empty()) {
        Ask(view);
      } else {
        // Waiting, but its question was withdrawn meanwhile: waiting on it
        // again at once would be answered at once. A second later it
        // works again, or asks anew.
        auto me = shared_from_this();
        server_->loop()->Schedule(
            std::chrono::steady_clock::now() + std::chrono::seconds(1),
            [me, id] { me->Watch(id); });
      }
    }
  }
  Arm();
}

void PersonQuestions::Ask(const TaskView& view) {
  const OpenQuestion& question = view.questions.front();
  std::string id = fmt::format("baton-ask-{}", ++serial_);
  asked_[id] = {view.task.id.ToString(), question};
  BATON_LOG_INFO("{} asks the person (question {}, request {})",
                 view.task.id.ToString(), question.seq, id);
  server_->Send({{"jsonrpc", "2.0"},
                 {"id", id},
                 {"method", "elicitation/create"},
                 {"params", QuestionForm(view.task, question)["params"]}},
                "");
}

bool PersonQuestions::OnResponse(const Message& response) {
  const auto* id = response.id.get_ptr<const std::string*>();
  auto it = id ? asked_.find(*id) : asked_.end();
  if (it == asked_.end())
    return false;
  Asked asked = std::move(it->second);
  asked_.erase(it);
  if (closed_)
    return true;
  if (response.failed) {
    // The client could not show the form: the question stays open, for
    // the director (task_output shows it) or anyone else.
    BATON_LOG_WARN("{}: the form for question {} failed: {}", asked.task,
                   asked.question.seq, response.result.dump());
    return true;
  }
  Answer(asked, response.result);
  return true;
}

void PersonQuestions::Answer(const Asked& asked, const Json& result) {
  auto answers = AnswersFromElicitation(asked.question, result);
  if (!answers) {
    BATON_LOG_WARN(
        "{}: the form's answer to question {} is unusable ({}); "
        "it stays open",
        asked.task, asked.question.seq, answers.error().message);
    return;
  }
  Error error;
  AsyncDaemonClient* daemon = server_->MainConnection(&error);
  if (!daemon) {
    BATON_LOG_ERROR("{}: cannot reach batond to answer: {}", asked.task,
                    error.message);
    return;
  }
  auto me = shared_from_this();
  std::string task = asked.task;
  int64_t seq = asked.question.seq;
  daemon->Call(
      AnswerRequest{
          .task = task, .answers = std::move(*answers), .question = seq},
      [me, task, seq](Result<AnswerReply> reply) {
        if (!reply) {
          // Answered first from elsewhere (the first answer wins), or the
          // task ended.
          BATON_LOG_INFO(
              "{}: the person's answer to question {} came "
              "second: {}",
              task, seq, reply.error().message);
        } else {
          BATON_LOG_INFO("{}: the person answered question {}", task, seq);
        }
        // Its next question goes to the person too.
        me->Watch(task);
      });
}

void PersonQuestions::Close() {
  closed_ = true;
  if (wait_) {
    wait_->Close();
    server_->Retire(std::move(wait_));
  }
}

}  // namespace baton::mcp
