// Pure helpers over an agent task's events (the daemon's `events` op): the
// questions still open, the last text, the tools used, and how they read
// for the model.
#ifndef BATON_MCP_AGENT_EVENTS_H_
#define BATON_MCP_AGENT_EVENTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton::mcp {

// The question events not answered yet, in order, each as {seq, items:
// [{prompt, header, options: [{label, description}], multi_select}]}. An
// answer event answers the question whose seq it names ("question"), or,
// when it names none, every question before it.
nlohmann::json PendingQuestions(const nlohmann::json& events);

// The text of the last `text` event ("" when none).
std::string LastAgentText(const nlohmann::json& events);

// The names of the tools the agent used, each once, in order of first use.
std::vector<std::string> ToolNamesUsed(const nlohmann::json& events);

// The pending questions of `task_id` for the model: each item's prompt and
// numbered options, then how to answer with task_answer. "" when none.
std::string PendingQuestionsText(std::string_view task_id,
                                 const nlohmann::json& pending);

}  // namespace baton::mcp

#endif  // BATON_MCP_AGENT_EVENTS_H_
