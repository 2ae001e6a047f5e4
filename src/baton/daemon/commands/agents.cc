// Handlers of the requests to agent workers and about them: send, queued,
// answer, events, agents (the profiles).
#include "baton/daemon/agent_profiles.h"
#include "baton/daemon/commands/client_env.h"
#include "baton/daemon/daemon.h"

namespace baton {

void Daemon::Handle(Connection&, const SendRequest& request, Session session,
                    Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto sent = agents_->Send(*task, request.message, request.mode);
  if (!sent)
    return reply(std::unexpected(sent.error()));
  reply(std::move(*sent));
}

void Daemon::Handle(Connection&, const QueuedRequest& request, Session session,
                    Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto queued = agents_->ChangeQueued(*task, request);
  if (!queued)
    return reply(std::unexpected(queued.error()));
  reply(std::move(*queued));
}

void Daemon::Handle(Connection&, const AnswerRequest& request, Session session,
                    Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto answered = agents_->Answer(*task, request.answers);
  if (!answered)
    return reply(std::unexpected(answered.error()));
  AnswerReply answer{.task = task->id.ToString()};
  if (auto ok = DecodeValue(*answered, answer.answered, {}, "answered"); !ok)
    return reply(MakeError(ErrorCode::kInternal, ok.error().message));
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
  auto config = LoadAgentConfig(file);
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
