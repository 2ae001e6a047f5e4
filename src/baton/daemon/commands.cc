// The request handlers of batond, one per op of doc/protocol.md. Each reads
// its arguments from the request, calls the registry, and answers through
// `reply` (at once, or later for "run" and "wait").
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "baton/core/model_spec.h"
#include "baton/daemon/agent_profiles.h"
#include "baton/daemon/daemon.h"
#include "baton/daemon/preflight.h"
#include "baton/util/environment.h"
#include "baton/util/log.h"

namespace baton {
namespace {

Result<std::optional<std::chrono::milliseconds>> OptionalMillis(
    const Json& request, const char* key) {
  auto it = request.find(key);
  if (it == request.end() || it->is_null()) {
    return std::optional<std::chrono::milliseconds>();
  }
  if (!it->is_number() || it->get<double>() < 0) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("'{}' must be a number of milliseconds >= 0", key));
  }
  return std::optional(std::chrono::milliseconds(it->get<int64_t>()));
}

Result<std::vector<std::string>> TaskIds(const Json& request) {
  auto it = request.find("tasks");
  if (it == request.end() || !it->is_array() || it->empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "'tasks' must be a non-empty list of task ids");
  }
  std::vector<std::string> ids;
  for (const auto& id : *it)
    ids.push_back(id.get<std::string>());
  return ids;
}

Result<TaskSpec> SpecFromRequest(const Json& request,
                                 const std::string& session) {
  TaskSpec spec;
  spec.kind = TaskKind::kShell;
  spec.owner = session;
  if (request.value("unowned", false))
    spec.owner.clear();
  if (auto command = request.find("command"); command != request.end()) {
    spec.shell_command = command->get<std::string>();
  } else if (auto argv = request.find("argv"); argv != request.end()) {
    spec.argv = argv->get<std::vector<std::string>>();
  }
  if (!spec.shell_command && spec.argv.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "empty command; give the command to run, e.g. baton run "
                     "-- make");
  }
  spec.cwd = request.value("cwd", "");
  spec.label = request.value("label", "");
  if (auto env = request.find("env"); env != request.end()) {
    spec.env_overrides = env->get<std::map<std::string, std::string>>();
  }
  if (auto base = request.find("base_env"); base != request.end()) {
    spec.base_env = base->get<std::vector<std::string>>();
  }
  auto timeout = OptionalMillis(request, "timeout_ms");
  if (!timeout)
    return std::unexpected(timeout.error());
  spec.timeout = *timeout;
  if (auto checks = request.find("checks"); checks != request.end()) {
    spec.checks = checks->get<std::vector<std::string>>();
  }
  return spec;
}

}  // namespace

const std::map<std::string, Daemon::Handler, std::less<>>& Daemon::Handlers() {
  static const std::map<std::string, Handler, std::less<>> handlers = {
      {"hello", &Daemon::HandleHello},
      {"run", &Daemon::HandleRun},
      {"get", &Daemon::HandleGet},
      {"list", &Daemon::HandleList},
      {"read", &Daemon::HandleRead},
      {"kill", &Daemon::HandleKill},
      {"wait", &Daemon::HandleWait},
      {"attach", &Daemon::HandleAttach},
      {"delegate", &Daemon::HandleDelegate},
      {"send", &Daemon::HandleSend},
      {"answer", &Daemon::HandleAnswer},
      {"events", &Daemon::HandleEvents},
      {"agents", &Daemon::HandleAgents},
      {"notices", &Daemon::HandleNotices},
      {"daemon_status", &Daemon::HandleDaemonStatus},
      {"shutdown", &Daemon::HandleShutdown},
  };
  return handlers;
}

Json Daemon::TaskJson(const TaskRecord& task) {
  auto size = executor_->OutputSize(task);
  return TaskToJson(task, size ? std::optional(*size) : std::nullopt);
}

bool Daemon::EndSurvivesACrash(const TaskRecord& task) const {
  return task.spec.checks.empty() && !task.spec.agent &&
         executor_->HoldsExitRecord(task.id);
}

void Daemon::AppendTask(std::string& out, const TaskRecord& task) {
  auto size = executor_->OutputSize(task);
  AppendTaskJson(out, task, size ? std::optional(*size) : std::nullopt);
}

void Daemon::HandleHello(Connection&, const Json&, const std::string& session,
                         Reply reply) {
  reply(Json{{"daemon_pid", getpid()},
             {"protocol", kProtocolVersion},
             {"home", options_.paths.home},
             {"session", session}});
}

void Daemon::HandleRun(Connection&, const Json& request,
                       const std::string& session, Reply reply) {
  auto spec = SpecFromRequest(request, session);
  if (!spec)
    return reply(std::unexpected(spec.error()));
  // The file-system checks live here, not in the registry, which makes no
  // system calls; they too run before anything is stored or spawned.
  if (!spec->cwd.empty() && spec->cwd[0] == '/') {
    if (auto ok = PreflightTask(*spec, &command_cache_); !ok) {
      return reply(std::unexpected(ok.error()));
    }
  }
  registry_->Start(std::move(*spec), [this, reply](Result<TaskRecord> task) {
    if (!task)
      return reply(std::unexpected(task.error()));
    checks_->Snapshot(*task);
    // No output yet: the spawn thread makes the file after this reply.
    reply(Json{{"task", TaskToJson(*task, std::nullopt)}});
  });
}

void Daemon::HandleGet(Connection&, const Json& request,
                       const std::string& session, Reply reply) {
  auto task = registry_->Get(request.at("task").get<std::string>(), session);
  if (!task)
    return reply(std::unexpected(task.error()));
  reply(Json{{"task", TaskJson(*task)}});
}

void Daemon::HandleList(Connection&, const Json& request,
                        const std::string& session, Reply reply) {
  size_t hidden = 0;
  auto tasks = registry_->List(session, request.value("all", false), &hidden);
  if (!tasks)
    return reply(std::unexpected(tasks.error()));
  std::string out = "{\"tasks\":[";
  for (size_t i = 0; i < tasks->size(); ++i) {
    if (i)
      out += ',';
    AppendTask(out, (*tasks)[i]);
  }
  out += "],\"hidden\":" + std::to_string(hidden) + "}";
  reply.Raw(std::move(out));
}

void Daemon::HandleRead(Connection&, const Json& request,
                        const std::string& session, Reply reply) {
  std::string mode_name = request.value("mode", "all");
  ReadMode mode;
  if (mode_name == "all") {
    mode = ReadMode::kAll;
  } else if (mode_name == "new") {
    mode = ReadMode::kNew;
  } else if (mode_name == "offset") {
    mode = ReadMode::kOffset;
  } else {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "'mode' must be all, new or offset"));
  }
  auto offset = request.value("offset", int64_t{0});
  if (offset < 0) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "offset must be >= 0, e.g. --offset 1024"));
  }
  auto range = registry_->Read(request.at("task").get<std::string>(), session,
                               mode, static_cast<uint64_t>(offset));
  if (!range)
    return reply(std::unexpected(range.error()));
  reply(Json{{"task", TaskJson(range->task)},
             {"path", range->path},
             {"from", range->from},
             {"to", range->to},
             {"at_end", range->at_end}});
}

void Daemon::HandleKill(Connection&, const Json& request,
                        const std::string& session, Reply reply) {
  auto ids = TaskIds(request);
  if (!ids)
    return reply(std::unexpected(ids.error()));
  auto grace = OptionalMillis(request, "grace_ms");
  if (!grace)
    return reply(std::unexpected(grace.error()));
  // All or nothing: a bad id refuses the whole request before any kill.
  for (const auto& id : *ids) {
    if (auto task = registry_->Get(id, session); !task) {
      return reply(std::unexpected(task.error()));
    }
  }
  std::string reason = request.value("reason", "");
  Json results = Json::array();
  for (const auto& id : *ids) {
    // An agent is asked to end its turn first; the signals wait a moment
    // for it to exit by itself.
    auto parsed = TaskId::Parse(id);
    bool interrupted = parsed && agents_->Interrupt(*parsed);
    auto outcome = registry_->Kill(
        id, session, reason, *grace,
        interrupted ? kAgentStopWindow : std::chrono::milliseconds(0));
    if (!outcome)
      return reply(std::unexpected(outcome.error()));
    results.push_back({{"id", id},
                       {"outcome", *outcome == KillOutcome::kRequested
                                       ? "requested"
                                       : "already-terminal"}});
  }
  reply(Json{{"results", std::move(results)}});
}

void Daemon::HandleWait(Connection& connection, const Json& request,
                        const std::string& session, Reply reply) {
  auto ids = TaskIds(request);
  if (!ids)
    return reply(std::unexpected(ids.error()));
  auto timeout = OptionalMillis(request, "timeout_ms");
  if (!timeout)
    return reply(std::unexpected(timeout.error()));
  uint64_t connection_id = connection.id;
  // The wait id is known only after Wait returns, but `done` may run
  // inside Wait; they meet in this small cell.
  struct Cell {
    WaitId id = 0;
    bool done = false;
  };
  // "ids" answers still-running tasks by id alone, "none" by their count
  // (the client knows which it asked for): a wait over a thousand ids is
  // then as quick to read as a wait over one.
  std::string running_form = request.value("still_running", "brief");
  if (running_form != "brief" && running_form != "ids" &&
      running_form != "none") {
    return reply(
        MakeError(ErrorCode::kInvalidArgument,
                  "still_running must be \"brief\", \"ids\" or \"none\""));
  }
  bool running_ids = running_form == "ids";
  bool running_count = running_form == "none";
  auto cell = std::make_shared<Cell>();
  auto wait = registry_->Wait(
      *ids, session, request.value("all", false), *timeout,
      [this, reply, connection_id, cell, running_ids,
       running_count](WaitResult result) {
        cell->done = true;
        if (auto it = connections_.find(connection_id);
            it != connections_.end()) {
          it->second.waits.erase(cell->id);
        }
        if (result.error)  // A task it names was not saved.
          return reply(std::unexpected(*result.error));
        // Tasks still running go in their short form (or as ids, or only
        // counted): a wait on a thousand ids must not pay for a thousand
        // full records.
        std::string out = "{\"ended\":[";
        for (size_t i = 0; i < result.ended.size(); ++i) {
          if (i)
            out += ',';
          AppendTask(out, result.ended[i]);
        }
        out += ']';
        if (running_count) {
          out += ",\"still_running_count\":" +
                 std::to_string(result.still_running_count());
        } else {
          out += ",\"still_running\":[";
          bool first = true;
          for (const TaskId& id : result.StillRunning()) {
            const TaskRecord* task =
                running_ids ? nullptr : registry_->FindLive(id);
            if (!running_ids && !task)
              continue;
            if (!std::exchange(first, false))
              out += ',';
            if (task) {
              AppendTaskBriefJson(out, *task);
            } else {
              AppendJsonString(out, id.ToString());
            }
          }
          out += ']';
        }
        out += ",\"timed_out\":";
        out += result.timed_out ? "true}" : "false}";
        bool reproducible = std::ranges::all_of(
            result.ended,
            [this](const TaskRecord& task) { return EndSurvivesACrash(task); });
        if (reproducible) {
          std::vector<TaskId> ends;
          for (const TaskRecord& task : result.ended)
            ends.push_back(task.id);
          reply.RawBeforeCommit(std::move(out), std::move(ends));
        } else {
          reply.Raw(std::move(out));
        }
      });
  if (!wait)
    return reply(std::unexpected(wait.error()));
  cell->id = *wait;
  // Only a wait still pending is tracked (to cancel it on disconnect).
  if (!cell->done)
    connection.waits.insert(*wait);
}

void Daemon::HandleAttach(Connection& connection, const Json&,
                          const std::string& session, Reply reply) {
  if (session.empty()) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "attach needs a session name (BATON_SESSION)"));
  }
  if (!connection.attached_session.empty() &&
      connection.attached_session != session) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "this connection is attached to another session"));
  }
  if (connection.attached_session.empty()) {
    connection.attached_session = session;
    registry_->Attach(session);
  }
  reply(Json{{"session", session}, {"lease_ms", options_.lease.count()}});
}

void Daemon::HandleNotices(Connection&, const Json&, const std::string&,
                           Reply reply) {
  reply(Json::object());  // The reply itself carries the notices.
}

void Daemon::HandleDaemonStatus(Connection&, const Json&, const std::string&,
                                Reply reply) {
  reply(Json{{"daemon_pid", getpid()},
             {"supervisor_pid", executor_->supervisor_pid()},
             {"protocol", kProtocolVersion},
             {"home", options_.paths.home},
             {"socket", options_.paths.daemon_socket()},
             {"live_tasks", registry_->live_count()},
             {"connections", connections_.size()},
             {"uptime_ms", clock_.WallNowMillis() - started_ms_}});
}

void Daemon::HandleShutdown(Connection&, const Json& request,
                            const std::string&, Reply reply) {
  if (!request.value("kill_tasks", false)) {
    reply(Json{{"stopping", true},
               {"daemon_pid", getpid()},
               {"live_tasks", registry_->live_count()}});
    loop_.Stop();
    return;
  }
  std::vector<TaskId> ids = registry_->KillAll("daemon stopped");
  if (ids.empty()) {
    reply(
        Json{{"stopping", true}, {"daemon_pid", getpid()}, {"live_tasks", 0}});
    loop_.Stop();
    return;
  }
  BATON_LOG_INFO("stopping after killing {} tasks", ids.size());
  registry_->WaitForAll(ids, [this, reply, n = ids.size()] {
    reply(Json{{"stopping", true},
               {"daemon_pid", getpid()},
               {"killed", n},
               {"live_tasks", 0}});
    loop_.Stop();
  });
}

}  // namespace baton

namespace baton {

namespace {

// The client's environment (its base_env) as a lookup, else batond's own.
EnvLookup ClientEnv(const Json& request) {
  auto base = request.find("base_env");
  if (base == request.end() || !base->is_array() || base->empty()) {
    return [](const char* name) -> std::optional<std::string> {
      const char* value = std::getenv(name);
      return value && *value ? std::optional<std::string>(value) : std::nullopt;
    };
  }
  std::map<std::string, std::string, std::less<>> env;
  for (const auto& entry : *base) {
    if (!entry.is_string())
      continue;
    const std::string& text = entry.get_ref<const std::string&>();
    size_t eq = text.find('=');
    if (eq != std::string::npos && eq + 1 < text.size())
      env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return
      [env = std::move(env)](const char* name) -> std::optional<std::string> {
        auto it = env.find(std::string_view(name));
        return it == env.end() ? std::nullopt
                               : std::optional<std::string>(it->second);
      };
}

// The agent settings as the client sees them: the config file its
// environment names, read afresh (doc/agents.md, "Configuration").
Result<AgentConfig> ClientAgentConfig(const Json& request) {
  return LoadAgentConfig(FindConfigFile(ClientEnv(request)));
}

// `env` over the client's environment (or batond's, when it sent none).
void ApplyProfileEnv(const std::map<std::string, std::string>& env,
                     std::vector<std::string>& base_env) {
  if (env.empty())
    return;
  std::vector<std::string> entries;
  for (const auto& [name, value] : env)
    entries.push_back(name + "=" + value);
  base_env = SetEnvironmentEntries(
      base_env.empty() ? ProcessEnvironment() : base_env, entries);
}

// A codex without app-server: the same profile through `codex exec --json`,
// the brief on stdin (doc/agents.md, "Codex: app-server or exec").
void UseCodexExec(TaskSpec& spec, const std::vector<std::string>& prefix,
                  std::string note) {
  spec.agent->adapter = "codex-exec";
  spec.agent->note = std::move(note);
  spec.argv = MakeAdapter("codex-exec")->Argv(prefix, *spec.agent);
  spec.stdin_pipe = false;
  spec.stdin_text = spec.agent->brief;
}

}  // namespace

void Daemon::HandleDelegate(Connection&, const Json& request,
                            const std::string& session, Reply reply) {
  std::string brief = request.value("brief", "");
  if (brief.find_first_not_of(" \t\n") == std::string::npos) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "empty brief; say what the agent should do"));
  }
  auto config = ClientAgentConfig(request);
  if (!config)
    return reply(std::unexpected(config.error()));
  std::string agent_name = request.value("agent", "");
  // Resuming an agent task continues with its agent unless one is named.
  std::string resume_from = request.value("resume_from", "");
  std::string resumed_adapter;  // The adapter a resumed task ran with.
  if (TaskId::Parse(resume_from) && agent_name.empty()) {
    if (auto task = registry_->Get(resume_from, session);
        task && task->spec.agent) {
      agent_name = task->spec.agent->profile;
      resumed_adapter = task->spec.agent->adapter;
    }
  }
  auto profile =
      config->Find(agent_name.empty() ? config->default_agent : agent_name);
  if (!profile)
    return reply(std::unexpected(profile.error()));
  AgentSpec agent;
  agent.profile = profile->name;
  agent.adapter = profile->adapter;
  // A codex task that ran through exec (its codex had no app-server)
  // resumes through exec: its thread is an exec thread.
  if (agent.adapter == "codex" && resumed_adapter == "codex-exec") {
    agent.adapter = resumed_adapter;
    agent.note = fmt::format(
        "resumes {} through codex exec, as it ran (its thread is an exec "
        "thread)",
        resume_from);
  }
  agent.brief = brief;
  agent.model = request.value("model", profile->default_model);
  if (!agent.model.empty()) {
    auto model = ParseModelSpec(agent.model);
    if (!model)
      return reply(std::unexpected(model.error()));
  }
  TaskSpec spec;
  spec.kind = TaskKind::kAgent;
  spec.owner = request.value("unowned", false) ? "" : session;
  spec.label = request.value("label", "");
  spec.cwd = request.value("cwd", "");
  if (auto base = request.find("base_env"); base != request.end()) {
    spec.base_env = base->get<std::vector<std::string>>();
  }
  ApplyProfileEnv(profile->env, spec.base_env);
  std::string resume = request.value("resume_from", "");
  if (!resume.empty()) {
    if (auto from = TaskId::Parse(resume)) {
      auto task = registry_->Get(resume, session);
      if (!task)
        return reply(std::unexpected(task.error()));
      if (!IsTerminal(task->status)) {
        return reply(MakeError(
            ErrorCode::kInvalidArgument,
            fmt::format("{} is still {}; send it a message instead (baton "
                        "send), or resume it once it ended",
                        resume, TaskStatusName(task->status))));
      }
      if (task->agent_session.empty() || !task->spec.agent) {
        return reply(
            MakeError(ErrorCode::kResumeNotFound,
                      fmt::format("{} has no agent session to resume (it never "
                                  "started one)",
                                  resume)));
      }
      agent.resume_session = task->agent_session;
      agent.resume_from = resume;
      // gemini-cli (0.61.0, and qwen, its fork) names a session's file by
      // the UTC minute: a session/load in the minute the session was written
      // re-creates that file and the history is lost (doc/agent-testing.md).
      const std::string& program =
          task->spec.argv.empty() ? resume : task->spec.argv[0];
      std::string name = program.substr(program.rfind('/') + 1);
      int64_t now = clock_.WallNowMillis();
      if (task->spec.agent->adapter == "acp" &&
          (name == "gemini" || name == "qwen") &&
          now / 60000 == task->ended_ms / 60000) {
        return reply(MakeError(
            ErrorCode::kInvalidArgument,
            fmt::format("{} cannot load a session in the UTC minute it was "
                        "last written in (it would lose its history); resume "
                        "{} in {} s",
                        name, resume, 60 - (now / 1000) % 60)));
      }
      // A session is resumed where it ran (Claude keys sessions by folder).
      if (spec.cwd.empty())
        spec.cwd = task->spec.cwd;
    } else {
      agent.resume_session = resume;  // A CLI session id.
    }
  }
  auto adapter = MakeAdapter(agent.adapter);
  if (!adapter) {
    return reply(
        MakeError(ErrorCode::kInternal, "no adapter named " + agent.adapter));
  }
  spec.argv = adapter->Argv(profile->ArgvPrefix(), agent);
  if (adapter->interactive()) {
    spec.stdin_pipe = true;
  } else {
    spec.stdin_text = brief;
  }
  if (auto checks = request.find("checks"); checks != request.end()) {
    spec.checks = checks->get<std::vector<std::string>>();
  }
  auto timeout = request.find("timeout_ms");
  spec.timeout = timeout != request.end() && timeout->is_number()
                     ? std::chrono::milliseconds(timeout->get<int64_t>())
                     : profile->timeout.value_or(config->agent_timeout);
  spec.agent = std::move(agent);
  if (!spec.cwd.empty() && spec.cwd[0] == '/') {
    if (auto ok = PreflightTask(spec, &command_cache_); !ok) {
      return reply(std::unexpected(ok.error()));
    }
  }
  auto start = [this, reply](TaskSpec spec) {
    registry_->Start(std::move(spec), [this, reply](Result<TaskRecord> task) {
      if (!task)
        return reply(std::unexpected(task.error()));
      checks_->Snapshot(*task);
      reply(Json{{"task", TaskJson(*task)}});
    });
  };
  if (spec.agent->adapter != "codex")
    return start(std::move(spec));
  // Does this codex have app-server? Asked once per codex install, by a
  // probe the loop watches; the reply waits for it (doc/agents.md).
  std::vector<std::string> prefix = profile->ArgvPrefix();
  std::vector<std::string> env = spec.base_env;
  std::string cwd = spec.cwd;
  codex_probe_->Check(
      prefix, env, cwd,
      [start, prefix,
       spec = std::move(spec)](const ProbeVerdict& verdict) mutable {
        if (verdict.mode == CodexMode::kExec) {
          UseCodexExec(
              spec, prefix,
              fmt::format("this codex has no app-server (app-server --help: "
                          "{}); running it through codex exec: it cannot be "
                          "steered or asked, a follow-up is a new task "
                          "(baton delegate --resume)",
                          verdict.reason));
        } else if (verdict.mode == CodexMode::kUnknown) {
          spec.agent->note = fmt::format(
              "could not tell whether this codex has app-server ({}); "
              "running app-server",
              verdict.reason);
        }
        start(std::move(spec));
      });
}

void Daemon::HandleAgents(Connection&, const Json& request, const std::string&,
                          Reply reply) {
  ConfigFile file = FindConfigFile(ClientEnv(request));
  auto config = LoadAgentConfig(file);
  if (!config)
    return reply(std::unexpected(config.error()));
  Json agents = Json::array();
  for (const auto& profile : config->profiles) {
    Json env_names = Json::array();
    for (const auto& [name, value] : profile.env)
      env_names.push_back(name);  // Not the values: they may be secrets.
    agents.push_back({{"name", profile.name},
                      {"adapter", profile.adapter},
                      {"command", profile.command},
                      {"args", profile.args},
                      {"env", env_names},
                      {"model", profile.default_model},
                      {"timeout_ms",
                       profile.timeout.value_or(config->agent_timeout).count()},
                      {"origin", profile.origin},
                      {"default", profile.name == config->default_agent}});
  }
  reply(Json{{"config", file.path.empty() ? Json() : Json(file.path)},
             {"config_found", !config->path.empty()},
             {"default_agent", config->default_agent},
             {"agent_timeout_ms", config->agent_timeout.count()},
             {"agents", agents}});
}

void Daemon::HandleSend(Connection&, const Json& request,
                        const std::string& session, Reply reply) {
  auto task = registry_->Get(request.at("task").get<std::string>(), session);
  if (!task)
    return reply(std::unexpected(task.error()));
  std::string mode = request.value("mode", "followup");
  if (mode != "followup" && mode != "steer") {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "'mode' must be followup or steer"));
  }
  auto delivery =
      agents_->Send(*task, request.value("message", ""),
                    mode == "steer" ? SendMode::kSteer : SendMode::kFollowup);
  if (!delivery)
    return reply(std::unexpected(delivery.error()));
  reply(Json{{"task", task->id.ToString()}, {"delivery", *delivery}});
}

void Daemon::HandleAnswer(Connection&, const Json& request,
                          const std::string& session, Reply reply) {
  auto task = registry_->Get(request.at("task").get<std::string>(), session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto answers = request.value("answers", std::vector<std::string>());
  auto answered = agents_->Answer(*task, answers);
  if (!answered)
    return reply(std::unexpected(answered.error()));
  reply(Json{{"task", task->id.ToString()}, {"answered", *answered}});
}

void Daemon::HandleEvents(Connection&, const Json& request,
                          const std::string& session, Reply reply) {
  auto task = registry_->Get(request.at("task").get<std::string>(), session);
  if (!task)
    return reply(std::unexpected(task.error()));
  auto events = agents_->Events(*task, request.value("after", int64_t{0}));
  if (!events)
    return reply(std::unexpected(events.error()));
  reply(Json{{"task", TaskJson(*task)}, {"events", *events}});
}

}  // namespace baton
