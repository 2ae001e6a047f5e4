// The tasks extension of the modern era (io.modelcontextprotocol/tasks,
// doc/mcp.md "Tasks"): tasks/get, tasks/update, tasks/cancel over batond's
// get, answer and kill, and subscriptions/listen with notifications/tasks
// driven by batond's waits.
#include <fmt/format.h>
#include <sys/stat.h>

#include "baton/mcp/output_text.h"
#include "baton/mcp/server.h"
#include "baton/mcp/task_mapping.h"
#include "baton/mcp/tools/tools.h"
#include "baton/util/log.h"

namespace baton::mcp {
namespace {

RpcError TaskNotFound(const std::string& task, const Error& error) {
  // batond's owner fence: another session's task is as unknown as one that
  // never was.
  return {kInvalidParams,
          fmt::format("Failed to retrieve task: {} ({})", task,
                      DaemonErrorText(error)),
          nullptr};
}

uint64_t OutputSize(const TaskView& view) {
  if (view.output_bytes)
    return *view.output_bytes;
  struct stat st {};
  if (::stat(view.task.output_path.c_str(), &st) != 0)
    return 0;
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace

// ---- Server: the tasks methods ----------------------------------------------

Json Server::DetailedTaskOf(const TaskView& view) const {
  Json result;
  if (view.task.status == TaskStatus::kCompleted ||
      view.task.status == TaskStatus::kFailed) {
    const TaskRecord& task = view.task;
    Json structured = TaskSummary(task);
    structured["cwd"] = task.spec.cwd;
    structured["wait_command"] = WaitCommand(facts_, task.id.ToString());
    if (task.spec.agent) {
      structured["agent"] = task.spec.agent->profile;
      structured["model"] = task.spec.agent->model;
    }
    // Notices go with the session's ordinary tool results, told once.
    structured["notices"] = Json::array();
    result =
        EndedToolResult(view, ReadLogTail(task.output_path, OutputSize(view)),
                        std::move(structured));
  }
  return DetailedTask(view, result);
}

void Server::HandleTasksMethod(const Message& message,
                               const RequestMeta& meta) {
  if (!meta.modern || !meta.HasExtension(kTasksExtension))
    return ReplyError(message, MissingTasksExtension(message.method));
  const Json* given = Member(message.params, "taskId");
  const auto* task = given ? given->get_ptr<const std::string*>() : nullptr;
  if (!task || task->empty()) {
    return ReplyError(
        message,
        {kInvalidParams,
         fmt::format("Invalid params: {} needs 'taskId' (a string, e.g. "
                     "\"shell-1\")",
                     message.method),
         nullptr});
  }
  if (message.method == "tasks/get")
    return TasksGet(message, meta, *task);
  if (message.method == "tasks/update")
    return TasksUpdate(message, meta, *task);
  return TasksCancel(message, meta, *task);
}

void Server::TasksGet(const Message& message, const RequestMeta& meta,
                      const std::string& task) {
  AsyncDaemonClient* daemon = DaemonOrReply(message);
  if (!daemon)
    return;
  daemon->Call(GetRequest{.task = task}, [this, message, meta,
                                          task](Result<TaskReply> reply) {
    if (!reply)
      return ReplyError(message, TaskNotFound(task, reply.error()));
    Reply(message, meta, DetailedTaskOf(reply->task));
  });
}

void Server::TasksUpdate(const Message& message, const RequestMeta& meta,
                         const std::string& task) {
  const Json* responses = Member(message.params, "inputResponses");
  if (!responses || !responses->is_object()) {
    return ReplyError(
        message, {kInvalidParams,
                  "Invalid params: tasks/update needs 'inputResponses' (an "
                  "object: the inputRequests key, then the elicitation "
                  "result, e.g. {\"q7\": {\"action\": \"accept\", "
                  "\"content\": {\"answer_1\": \"Postgres\"}}})",
                  nullptr});
  }
  AsyncDaemonClient* daemon = DaemonOrReply(message);
  if (!daemon)
    return;
  daemon->Call(GetRequest{.task = task}, [this, message, meta, task,
                                          responses = *responses](
                                             Result<TaskReply> reply) {
    if (!reply)
      return ReplyError(message, TaskNotFound(task, reply.error()));
    const TaskView& view = reply->task;
    if (view.task.status != TaskStatus::kWaiting || view.questions.empty()) {
      return ReplyError(
          message,
          {kInvalidParams,
           fmt::format("Invalid params: {} is not waiting for input (status: "
                       "{}); tasks/get shows its inputRequests when it is",
                       task, TaskStatusName(view.task.status)),
           nullptr});
    }
    // batond answers the oldest open question; responses to other keys
    // (answered, never issued) are ignored, as the extension asks.
    const OpenQuestion& question = view.questions.front();
    const Json* response = Member(responses, QuestionKey(question.seq));
    if (!response)
      return Reply(message, meta, Json::object());
    auto answers = AnswersFromElicitation(question, *response);
    if (!answers) {
      return ReplyError(
          message,
          {kInvalidParams,
           fmt::format("Invalid params: inputResponses[\"{}\"]: {}",
                       QuestionKey(question.seq), answers.error().message),
           nullptr});
    }
    AsyncDaemonClient* daemon = DaemonOrReply(message);
    if (!daemon)
      return;
    // Named, so an answer that raced another one answers nothing else.
    // Once batond took the answer the task works again: told at once, from
    // what was read before, since a re-read may already find it ended (a
    // quick agent) and a subscriber would never see it working.
    TaskView working = view;
    working.task.status = TaskStatus::kRunning;
    working.task.detail.clear();
    working.questions.clear();
    daemon->Call(AnswerRequest{.task = task,
                               .answers = std::move(*answers),
                               .question = question.seq},
                 [this, message, meta, task,
                  working = std::move(working)](Result<AnswerReply> answered) {
                   if (!answered) {
                     // Another answer came first: the first one wins.
                     return ReplyError(
                         message,
                         {kInvalidParams,
                          fmt::format("Invalid params: {}: {}", task,
                                      DaemonErrorText(answered.error())),
                          nullptr});
                   }
                   Reply(message, meta, Json::object());
                   TaskChanged(working);
                   Refresh(task);
                 });
  });
}

void Server::TasksCancel(const Message& message, const RequestMeta& meta,
                         const std::string& task) {
  AsyncDaemonClient* daemon = DaemonOrReply(message);
  if (!daemon)
    return;
  KillRequest kill;
  kill.tasks = {task};
  kill.reason = "cancelled by the MCP client (tasks/cancel)";
  daemon->Call(kill, [this, message, meta, task](Result<KillReply> reply) {
    if (!reply)
      return ReplyError(message, TaskNotFound(task, reply.error()));
    // An ended task is acknowledged too: cancelling is cooperative.
    Reply(message, meta, Json::object());
    Refresh(task);
  });
}

AsyncDaemonClient* Server::DaemonOrReply(const Message& message) {
  Error error;
  AsyncDaemonClient* daemon = MainConnection(&error);
  if (!daemon) {
    ReplyError(message, {kInternalError,
                         "cannot reach batond: " + error.message, nullptr});
  }
  return daemon;
}

void Server::Refresh(const std::string& task) {
  bool watched = false;
  for (const auto& [key, subscription] : subscriptions_)
    watched = watched || subscription->Watches(task);
  if (!watched)
    return;
  Error error;
  if (AsyncDaemonClient* daemon = MainConnection(&error)) {
    daemon->Call(GetRequest{.task = task}, [this](Result<TaskReply> reply) {
      if (reply)
        TaskChanged(reply->task);
    });
  }
}

void Server::TaskChanged(const TaskView& view) {
  // Copied: telling may not change the map, but a subscription's own
  // callbacks might end it meanwhile.
  auto subscriptions = subscriptions_;
  for (auto& [key, subscription] : subscriptions) {
    if (subscription->Watches(view.task.id.ToString()))
      subscription->Tell(view);
  }
}

void Server::HandleListen(const Message& message, const RequestMeta& meta) {
  if (!meta.modern) {
    return ReplyError(
        message,
        {kInvalidParams,
         fmt::format("Invalid params: subscriptions/listen belongs to the {} "
                     "era; its request needs _meta[\"{}\"]",
                     kModernVersion, kMetaProtocolVersion),
         nullptr});
  }
  const Json* filter = Member(message.params, "notifications");
  const Json* ids = filter ? Member(*filter, "taskIds") : nullptr;
  std::vector<std::string> tasks;
  if (ids && !ids->is_null()) {
    if (!meta.HasExtension(kTasksExtension))
      return ReplyError(message, MissingTasksExtension("taskIds"));
    if (!ParseArgument(*ids, tasks, {}, "taskIds")) {
      return ReplyError(message,
                        {kInvalidParams,
                         "Invalid params: notifications.taskIds must be a list "
                         "of task ids, e.g. [\"shell-1\"]",
                         nullptr});
    }
  }
  auto subscription =
      std::make_shared<Subscription>(this, message.id, message.exchange);
  subscriptions_[message.exchange] = subscription;
  // Only the tasks this session may see are honored: each is looked up
  // first (and told as it is then, once the acknowledgment went out).
  struct Lookup {
    std::vector<TaskView> found;
    size_t outstanding = 0;
  };
  auto lookup = std::make_shared<Lookup>();
  lookup->outstanding = tasks.size();
  auto settle = [subscription, lookup] {
    Json honored = Json::object();
    Json ids = Json::array();
    for (const auto& view : lookup->found)
      ids.push_back(view.task.id.ToString());
    if (!ids.empty())
      honored["taskIds"] = std::move(ids);
    subscription->Start(lookup->found, std::move(honored));
  };
  if (tasks.empty())
    return settle();
  Error error;
  AsyncDaemonClient* daemon = MainConnection(&error);
  if (!daemon) {
    subscriptions_.erase(message.exchange);
    return ReplyError(
        message,
        {kInternalError, "cannot reach batond: " + error.message, nullptr});
  }
  for (const auto& task : tasks) {
    daemon->Call(GetRequest{.task = task},
                 [lookup, settle](Result<TaskReply> reply) {
                   if (reply)
                     lookup->found.push_back(std::move(reply->task));
                   if (--lookup->outstanding == 0)
                     settle();
                 });
  }
}

// ---- Subscription
// -------------------------------------------------------------

void Subscription::Start(const std::vector<TaskView>& tasks, Json honored) {
  if (closed_)
    return;
  server_->Send(MakeNotification("notifications/subscriptions/acknowledged",
                                 {{"_meta", {{kMetaSubscriptionId, id_}}},
                                  {"notifications", std::move(honored)}}),
                exchange_);
  for (const auto& view : tasks)
    told_[view.task.id.ToString()] = "";
  for (const auto& view : tasks)
    Tell(view);
  Arm();
}

void Subscription::Tell(const TaskView& view) {
  if (closed_)
    return;
  std::string id = view.task.id.ToString();
  Json task = server_->DetailedTaskOf(view);
  // lastUpdatedAt moves only with baton's own times; what the client can
  // see is the status and its payload.
  std::string seen = task.dump();
  auto it = told_.find(id);
  if (it == told_.end())
    return;
  if (IsTerminal(view.task.status))
    ended_.insert(id);
  else if (ended_.contains(id))
    return;
  bool changed = it->second != seen;
  it->second = std::move(seen);
  if (changed) {
    task["_meta"] = {{kMetaSubscriptionId, id_}};
    server_->Send(MakeNotification("notifications/tasks", std::move(task)),
                  exchange_);
  }
  bool was_working = working_.count(id) > 0;
  if (IsTerminal(view.task.status) || view.task.status == TaskStatus::kWaiting)
    working_.erase(id);
  else
    working_.insert(id);
  if (was_working != (working_.count(id) > 0) && !answering_)
    Arm();
}

void Subscription::Arm() {
  auto me = shared_from_this();
  server_->Rewait(&wait_, closed_ ? std::set<std::string>() : working_,
                  "subscription " + id_.dump(), [me](Result<WaitReply> reply) {
                    me->OnWait(std::move(reply));
                  });
}

void Subscription::OnWait(Result<WaitReply> reply) {
  if (closed_)
    return;
  if (!reply) {
    auto me = shared_from_this();
    return server_->RewaitLater(&wait_, "subscription " + id_.dump(),
                                reply.error(), [me] { me->Arm(); });
  }
  answering_ = true;
  for (const auto& view : reply->ended)
    Tell(view);
  answering_ = false;
  // The wait has answered: a new one covers who still works.
  Arm();
}

void Subscription::Close() {
  closed_ = true;
  if (wait_) {
    wait_->Close();
    server_->Retire(std::move(wait_));
  }
}

}  // namespace baton::mcp
