#include "baton/core/task_extra.h"

namespace baton {

using Json = nlohmann::json;

Json AgentSpecToJson(const AgentSpec& agent) {
  Json json = {{"profile", agent.profile},
               {"adapter", agent.adapter},
               {"brief", agent.brief},
               {"model", agent.model},
               {"resume_session", agent.resume_session},
               {"resume_from", agent.resume_from}};
  if (!agent.note.empty())
    json["note"] = agent.note;
  return json;
}

Json EvidenceToJson(const Evidence& evidence) {
  Json checks = Json::array();
  for (const auto& check : evidence.checks) {
    checks.push_back({{"command", check.command},
                      {"exit_code", check.exit_code},
                      {"tail", check.tail}});
  }
  return {{"source", evidence.source},
          {"changed_files", evidence.changed_files},
          {"checks", checks},
          {"overlapping_tasks", evidence.overlapping_tasks}};
}

std::string EncodeTaskExtra(const TaskRecord& task) {
  Json extra = Json::object();
  if (task.spec.agent)
    extra["agent"] = AgentSpecToJson(*task.spec.agent);
  if (!task.spec.checks.empty())
    extra["checks"] = task.spec.checks;
  if (!task.agent_session.empty())
    extra["agent_session"] = task.agent_session;
  if (task.evidence)
    extra["evidence"] = EvidenceToJson(*task.evidence);
  return extra.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status DecodeTaskExtra(std::string_view text, TaskRecord& task) {
  Json extra = Json::parse(text, nullptr, false);
  if (extra.is_discarded() || !extra.is_object()) {
    return MakeError(ErrorCode::kCorrupt, "task extra is not a JSON object");
  }
  try {
    if (auto it = extra.find("agent"); it != extra.end()) {
      AgentSpec agent;
      agent.profile = it->value("profile", "");
      agent.adapter = it->value("adapter", "");
      agent.brief = it->value("brief", "");
      agent.model = it->value("model", "");
      agent.resume_session = it->value("resume_session", "");
      agent.resume_from = it->value("resume_from", "");
      agent.note = it->value("note", "");
      task.spec.agent = std::move(agent);
    }
    if (auto it = extra.find("checks"); it != extra.end()) {
      task.spec.checks = it->get<std::vector<std::string>>();
    }
    task.agent_session = extra.value("agent_session", "");
    if (auto it = extra.find("evidence"); it != extra.end()) {
      Evidence evidence;
      evidence.source = it->value("source", "");
      evidence.changed_files =
          it->value("changed_files", std::vector<std::string>());
      evidence.overlapping_tasks =
          it->value("overlapping_tasks", std::vector<std::string>());
      for (const auto& check : it->value("checks", Json::array())) {
        evidence.checks.push_back({check.value("command", ""),
                                   check.value("exit_code", -1),
                                   check.value("tail", "")});
      }
      task.evidence = std::move(evidence);
    }
  } catch (const Json::exception& e) {
    return MakeError(ErrorCode::kCorrupt,
                     std::string("task extra: ") + e.what());
  }
  return {};
}

}  // namespace baton
