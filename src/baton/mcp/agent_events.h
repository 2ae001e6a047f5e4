// Pure helpers over an agent task's events (batond's `events` reply) and
// its open questions (TaskView::questions, decided by batond): the last
// text, the tools used, and how the questions read for the model.
#ifndef BATON_MCP_AGENT_EVENTS_H_
#define BATON_MCP_AGENT_EVENTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/messages.h"

namespace baton::mcp {

// The text of the last `text` event ("" when none).
std::string LastAgentText(const std::vector<nlohmann::json>& events);

// The names of the tools the agent used, each once, in order of first use.
std::vector<std::string> ToolNamesUsed(
    const std::vector<nlohmann::json>& events);

// The open questions as the tools' structured results show them (the
// schema of PendingQuestionsSchema in tools/tools.h): each {seq, items:
// [{prompt, header, options: [{label, description}], multi_select}]}.
nlohmann::json QuestionsJson(const std::vector<OpenQuestion>& questions);

// The open questions of `task_id` for the model: each item's prompt and
// numbered options, then how to answer with task_answer. "" when none.
std::string PendingQuestionsText(std::string_view task_id,
                                 const std::vector<OpenQuestion>& questions);

}  // namespace baton::mcp

#endif  // BATON_MCP_AGENT_EVENTS_H_
