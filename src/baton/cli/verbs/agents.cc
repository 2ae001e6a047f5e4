// `baton agents`: the agent profiles, built-in and from baton's config
// file, each with where it came from.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "baton/cli/verbs.h"
#include "baton/util/duration.h"
#include "baton/util/environment.h"
#include "baton/util/json_fields.h"

namespace baton {
namespace {

// The profile's command line as a person would type it, with the names of
// its variables (never their values).
std::string CommandLine(const AgentInfo& agent) {
  std::string command;
  for (const auto& name : agent.env)
    command += name + "=... ";
  for (const auto* part : {&agent.command, &agent.args}) {
    for (const std::string& word : *part) {
      bool plain =
          !word.empty() && word.find_first_of(" \t'\"\\$") == std::string::npos;
      command += (plain ? word : "'" + word + "'") + " ";
    }
  }
  if (!command.empty())
    command.pop_back();
  return command;
}

int PrintAgents(const AgentsReply& reply) {
  std::string path = reply.config.value_or("");
  std::printf("config: %s\n",
              path.empty()         ? "none (no HOME): built-in profiles only"
              : reply.config_found ? path.c_str()
                                   : (path + " (not found): built-in "
                                             "profiles only")
                                         .c_str());
  // Columns as wide as their widest cell.
  std::vector<std::array<std::string, 4>> rows;
  std::array<size_t, 4> width{};
  rows.push_back({"NAME", "ADAPTER", "MODEL", "TIMEOUT"});
  for (const AgentInfo& agent : reply.agents) {
    rows.push_back(
        {agent.name, std::string(EnumName(agent.adapter)),
         agent.model.empty() ? "(the CLI's own)" : agent.model,
         FormatDuration(std::chrono::milliseconds(agent.timeout_ms))});
  }
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](std::string_view mark, const std::array<std::string, 4>& row,
                  std::string_view command) {
    std::printf("%s\n", fmt::format("{:<2}{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}",
                                    mark, row[0], width[0], row[1], width[1],
                                    row[2], width[2], row[3], width[3], command)
                            .c_str());
  };
  line("", rows[0], "COMMAND");
  for (size_t i = 0; i < reply.agents.size(); ++i) {
    const AgentInfo& agent = reply.agents[i];
    line(agent.is_default ? "*" : "", rows[i + 1], CommandLine(agent));
    std::printf("    from %s\n", agent.origin.c_str());
  }
  return kExitOk;
}

}  // namespace

void DefineAgents(CLI::App& command, const Context& ctx, Action& action) {
  command.callback([&ctx, &action] {
    action = [&ctx] {
      // The environment names the config file (BATON_CONFIG, ...).
      return CallAndPrint(ctx, AgentsRequest{.base_env = ProcessEnvironment()},
                          PrintAgents);
    };
  });
}

}  // namespace baton
