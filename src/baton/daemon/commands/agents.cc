// Handlers of the requests to agent workers and about them: send, queued,
// answer, questions, events, agents (the profiles).
#include <fmt/format.h>

#include <algorithm>

#include "baton/daemon/agent_profiles.h"
#include "baton/daemon/commands/client_env.h"
#include "baton/daemon/daemon.h"

namespace baton {

// The audit records of these requests stay whatever the commit does: what
// reached a worker cannot be taken back.
void Daemon::Handle(Connection& connection, const SendRequest& request,
                    Session session, Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto sent = agents_->Send(*task, request.message, request.mode);
  if (!sent)
    return reply(std::unexpected(sent.error()));
  AuditRecord audit =
      AuditOf(connection, session,
              request.mode == SendMode::kSteer ? "steer" : "send", sent->task);
  audit.detail =
      fmt::format("{} {}: {}", sent->id, sent->delivery, request.message);
  registry_->audit().Record(std::move(audit), /*with_batch=*/false);
  reply(std::move(*sent));
}

void Daemon::Handle(Connection& connection, const QueuedRequest& request,
                    Session session, Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto queued = agents_->ChangeQueued(*task, request);
  if (!queued)
    return reply(std::unexpected(queued.error()));
  if (!request.withdraw.empty() || !request.replace.empty()) {
    bool withdraw = !request.withdraw.empty();
    AuditRecord audit = AuditOf(
        connection, session, withdraw ? "withdraw" : "replace", queued->task);
    audit.detail =
        withdraw ? request.withdraw
                 : fmt::format("{}: {}", request.replace, request.message);
    registry_->audit().Record(std::move(audit), /*with_batch=*/false);
  }
  reply(std::move(*queued));
}

void Daemon::Handle(Connection& connection, const AnswerRequest& request,
                    Session session, Reply reply) {
  // A worker's sub-worker asks its director too (doc/agents.md).
  auto task = registry_->GetInTree(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  if (request.question) {
    auto open = agents_->OpenQuestions(task->id);
    if (open.empty() || open.front().seq != *request.question) {
      return reply(MakeError(
          ErrorCode::kAlreadyExists,
          fmt::format("{}: question {} is no longer open (answered already)",
                      task->id.ToString(), *request.question)));
    }
  }
  auto answered = agents_->Answer(*task, request.answers);
  if (!answered)
    return reply(std::unexpected(answered.error()));
  AnswerReply answer{.task = task->id.ToString()};
  if (auto ok = DecodeValue(*answered, answer.answered, {}, "answered"); !ok)
    return reply(MakeError(ErrorCode::kInternal, ok.error().message));
  AuditRecord audit = AuditOf(connection, session, "answer", answer.task);
  std::string answers;
  EncodeValue(answers, answer.answered.answers);
  audit.detail =
      fmt::format("question {}: {}", answer.answered.question, answers);
  registry_->audit().Record(std::move(audit), /*with_batch=*/false);
  reply(answer);
}

void Daemon::Handle(Connection&, const QuestionsRequest&, Session session,
                    Reply reply) {
  QuestionsReply answer;
  for (const TaskRecord& task : registry_->LiveTasks()) {
    if (task.status != TaskStatus::kWaiting || !task.spec.agent)
      continue;
    std::vector<std::string> chain = registry_->ChainFor(task, session);
    if (chain.empty())
      continue;
    for (OpenQuestion& question : agents_->OpenQuestions(task.id)) {
      answer.questions.push_back({.task = task.id.ToString(),
                                  .label = task.spec.label,
                                  .agent = task.spec.agent->profile,
                                  .chain = chain,
                                  .question = std::move(question)});
    }
  }
  // Oldest first: the times are ISO 8601 UTC, which sort as text.
  std::stable_sort(answer.questions.begin(), answer.questions.end(),
                   [](const TreeQuestion& a, const TreeQuestion& b) {
                     return a.question.at < b.question.at;
                   });
  reply(answer);
}

void Daemon::Handle(Connection&, const EventsRequest& request, Session session,
                    Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto events = agents_->Events(*task, request.after);
  if (!events)
    return reply(std::unexpected(events.error()));
  EventsReply answer{.task = View(std::move(*task))};
  answer.events.assign(events->begin(), events->end());
  reply(answer);
}

void Daemon::Handle(Connection&, const AgentsRequest& request, Session,
                    Reply reply) {
  ConfigFile file = FindConfigFile(ClientEnvLookup(request.base_env));
  auto config = config_cache_.Load(file);
  if (!config)
    return reply(std::unexpected(config.error()));
  AgentsReply answer;
  if (!file.path.empty())
    answer.config = file.path;
  answer.config_found = !config->path.empty();
  answer.default_agent = config->default_agent;
  answer.agent_timeout_ms = config->agent_timeout.count();
  for (const auto& profile : config->profiles) {
    AgentInfo info{
        .name = profile.name,
        .adapter = profile.adapter,
        .command = profile.command,
        .args = profile.args,
        .model = profile.default_model,
        .timeout_ms = profile.timeout.value_or(config->agent_timeout).count(),
        .origin = profile.origin,
        .is_default = profile.name == config->default_agent};
    for (const auto& [name, value] : profile.env)
      info.env.push_back(name);  // Not the values: they may be secrets.
    answer.agents.push_back(std::move(info));
  }
  reply(answer);
}

}  // namespace baton
