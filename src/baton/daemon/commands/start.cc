// The handlers that start tasks: `run` (a shell command) and `delegate`
// (an agent worker). Both build the spec's common part in one place
// (CommonSpec), preflight it, store it, and answer once it is stored.
#include <fmt/format.h>

#include <cmath>

#include "baton/core/model_spec.h"
#include "baton/core/sessions.h"
#include "baton/daemon/agent_profiles.h"
#include "baton/daemon/commands/client_env.h"
#include "baton/daemon/daemon.h"
#include "baton/daemon/preflight.h"
#include "baton/ipc/slurm_request.h"
#include "baton/util/environment.h"
#include "baton/util/log.h"

namespace baton {
namespace {

// `env` set over the task's environment.
void ApplyProfileEnv(const std::map<std::string, std::string>& env,
                     std::vector<std::string>& base_env) {
  if (env.empty())
    return;
  std::vector<std::string> entries;
  for (const auto& [name, value] : env)
    entries.push_back(name + "=" + value);
  base_env = SetEnvironmentEntries(base_env, entries);
}

// A codex without app-server: the same profile through `codex exec --json`,
// the brief on stdin (doc/agents.md, "Codex: app-server or exec").
void UseCodexExec(TaskSpec& spec, const std::vector<std::string>& prefix,
                  std::string note) {
  spec.agent->adapter = AdapterKind::kCodexExec;
  spec.agent->note = std::move(note);
  spec.argv = MakeAdapter(AdapterKind::kCodexExec)->Argv(prefix, *spec.agent);
  spec.stdin_pipe = false;
  spec.stdin_text = spec.agent->brief;
}

// A task's request of Slurm: its own fields over `[executors.slurm]`'s
// (sbatch_args after the config's, so that its own win), and the client's
// SLURM_CONF and PATH, which every later Slurm command about it uses.
// The request's `cpus` and `memory_bytes` are the job's request on Slurm
// (whole CPUs; memory rounded up to MiB, as Slurm counts it).
SlurmRequest SlurmRequestOf(const SlurmFields& fields,
                            const LimitFields& limits,
                            const SlurmRequest& defaults,
                            const EnvLookup& client_env) {
  SlurmRequest slurm = defaults;
  if (!fields.partition.empty())
    slurm.partition = fields.partition;
  if (!fields.account.empty())
    slurm.account = fields.account;
  if (fields.time_limit_s)
    slurm.time_limit_s = *fields.time_limit_s;
  slurm.cpus = limits.cpus ? std::llround(*limits.cpus) : 0;
  slurm.mem = fields.mem;
  if (limits.memory_bytes) {
    constexpr int64_t kMiB = int64_t{1} << 20;
    slurm.mem = fmt::format("{}M", (*limits.memory_bytes + kMiB - 1) / kMiB);
  }
  slurm.gres = fields.gres;
  slurm.sbatch_args.insert(slurm.sbatch_args.end(), fields.sbatch_args.begin(),
                           fields.sbatch_args.end());
  slurm.slurm_conf = client_env("SLURM_CONF").value_or("");
  slurm.path = client_env("PATH").value_or("");
  return slurm;
}

// The hard limits a local task gets: the request's, each over `defaults`
// (its profile's, for an agent).
ResourceLimits LimitsOf(const LimitFields& fields,
                        const ResourceLimits& defaults) {
  ResourceLimits limits = defaults;
  if (fields.memory_bytes)
    limits.memory_bytes = *fields.memory_bytes;
  if (fields.cpus)
    limits.cpu_millis = std::llround(*fields.cpus * 1000);
  if (fields.pids)
    limits.pids = *fields.pids;
  return limits;
}

// The sandbox named `name` ("": none) of `config`, for a task on Slurm
// when `on_slurm`; `from` says where the name came from, for the error.
Result<std::optional<SandboxProfile>> SandboxOf(const std::string& name,
                                                const AgentConfig& config,
                                                bool on_slurm,
                                                std::string_view from) {
  if (name.empty())
    return std::nullopt;
  auto profile = FindSandboxProfile(name, config.sandboxes);
  if (!profile)
    return std::unexpected(profile.error());
  if (on_slurm) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("sandbox {} ({}) is made on this machine "
                                 "only; a Slurm job is not sandboxed by baton "
                                 "(leave out the sandbox or the Slurm "
                                 "placement)",
                                 name, from));
  }
  return std::optional(std::move(*profile));
}

// Why an ended task has no session a delegate can resume, "" when it has
// one: a shell task, an agent whose CLI baton cannot resume (a `command`
// profile without resume_flag, such as dsh), or one that never reported
// its session (it failed before its first turn).
std::string NoSessionToResume(const TaskRecord& task) {
  std::string id = task.id.ToString();
  if (!task.spec.agent) {
    return fmt::format(
        "{} is a shell task: only an agent task's session can "
        "be resumed; start it again (run; CLI: baton run)",
        id);
  }
  const AgentSpec& agent = *task.spec.agent;
  if (agent.adapter == AdapterKind::kCommand && agent.resume_flag.empty()) {
    return fmt::format(
        "{} ran agent {}, whose CLI baton cannot resume (its profile sets "
        "no resume_flag, doc/agents.md); delegate a new brief instead, with "
        "what it did (task_output; CLI: baton output {})",
        id, agent.profile, id);
  }
  if (task.agent_session.empty()) {
    return fmt::format(
        "{} has no agent session to resume: its CLI never "
        "reported one (it ended before its first turn; "
        "task_status tells how; CLI: baton status {})",
        id, id);
  }
  return "";
}

}  // namespace

template <class R>
TaskSpec Daemon::CommonSpec(const R& request, TaskKind kind, Session session) {
  TaskSpec spec;
  spec.kind = kind;
  // A person's session owns nothing it starts (core/sessions.h).
  spec.owner = request.unowned || IsPersonSession(session) ? "" : session;
  spec.label = request.label;
  spec.cwd = request.cwd;
  spec.base_env = ClientEnvironment(request.base_env);
  // Started from inside a running task (its process, or a `baton mcp` it
  // runs, has its BATON_TASK_ID): that task's sub-task, whose questions
  // reach its director too (doc/agents.md, "Questions of a tree of
  // agents"). Only a live task can start one. A scan, not a look-up
  // table: this runs for every task.
  constexpr std::string_view kTaskIdVar = "BATON_TASK_ID=";
  for (const std::string& entry : spec.base_env) {
    if (!entry.starts_with(kTaskIdVar))
      continue;
    auto id = TaskId::Parse(std::string_view(entry).substr(kTaskIdVar.size()));
    if (id && registry_->FindLive(*id))
      spec.parent = id->ToString();
    break;
  }
  spec.timeout = request.timeout;
  spec.checks = request.checks;
  spec.schedule.queue = request.schedule.queue;
  spec.schedule.priority = request.schedule.priority;
  spec.schedule.after = request.schedule.after;
  spec.schedule.after_any = request.schedule.after_any;
  spec.retry.retries = request.retry.retries;
  if (request.retry.retry_delay_ms)
    spec.retry.delay_ms = *request.retry.retry_delay_ms;
  return spec;
}

Result<TaskSpec> Daemon::ShellSpec(const RunRequest& request, Session session) {
  TaskSpec spec = CommonSpec(request, TaskKind::kShell, session);
  if (request.command) {
    spec.shell_command = *request.command;
  } else {
    spec.argv = request.argv;
  }
  spec.env_overrides = request.env;
  spec.max_output = request.max_output.value_or(kDefaultMaxOutput);
  spec.redact = request.redact.value_or(true);
  if (!request.sandbox.empty()) {
    auto config =
        config_cache_.Load(FindConfigFile(ClientEnvLookup(request.base_env)));
    if (!config)
      return std::unexpected(config.error());
    auto sandbox = SandboxOf(request.sandbox, *config, request.slurm.OnSlurm(),
                             "--sandbox");
    if (!sandbox)
      return std::unexpected(sandbox.error());
    spec.sandbox = std::move(*sandbox);
  }
  if (request.slurm.OnSlurm()) {
    EnvLookup client_env = ClientEnvLookup(request.base_env);
    auto config = config_cache_.Load(FindConfigFile(client_env));
    if (!config)
      return std::unexpected(config.error());
    spec.remote = ToRemote(SlurmRequestOf(request.slurm, request.limits,
                                          config->slurm, client_env));
  } else {
    spec.limits = LimitsOf(request.limits, ResourceLimits{});
  }
  return spec;
}

void Daemon::StartTask(TaskSpec spec, AuditRecord audit, Reply reply) {
  if (!spec.sandbox)
    return StoreTask(std::move(spec), std::move(audit), reply);
  if (spec.cwd.empty() || spec.cwd == "/") {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           fmt::format("sandbox {}: its folder is writable to "
                                       "it, so it cannot be /; give the "
                                       "task's own folder (cwd)",
                                       spec.sandbox->name)));
  }
  sandbox_probe_->Check(
      [this, reply, spec = std::move(spec),
       audit = std::move(audit)](const Status& works) mutable {
        if (!works && spec.sandbox->required)
          return reply(std::unexpected(works.error()));
        if (!works) {
          BATON_LOG_WARN("sandbox {} is not required: running unconfined: {}",
                         spec.sandbox->name, works.error().message);
          audit.reason = fmt::format(
              "sandbox {} (not required) could not be "
              "made: ran unconfined",
              spec.sandbox->name);
          spec.sandbox.reset();
        }
        StoreTask(std::move(spec), std::move(audit), reply);
      });
}

void Daemon::StoreTask(TaskSpec spec, AuditRecord audit, Reply reply) {
  registry_->Start(std::move(spec), [this, reply, audit = std::move(audit)](
                                        Result<TaskRecord> task) mutable {
    if (!task)
      return reply(std::unexpected(task.error()));
    // In the batch that stores the task: a failed commit takes back both.
    audit.task = task->id.ToString();
    if (task->spec.agent) {
      audit.detail = fmt::format("{}: {}", task->spec.agent->profile,
                                 task->spec.agent->brief);
    } else {
      audit.detail = CommandText(task->spec);
    }
    if (!task->spec.rerun_of.empty())
      audit.detail =
          fmt::format("rerun of {}: {}", task->spec.rerun_of, audit.detail);
    if (task->spec.sandbox) {
      audit.detail =
          fmt::format("sandbox {}: {}", task->spec.sandbox->name, audit.detail);
    }
    registry_->audit().Record(std::move(audit), /*with_batch=*/true);
    // No output yet: the spawn thread makes the file after this reply.
    reply(TaskReply{{std::move(*task), std::nullopt}});
  });
}

void Daemon::StartChecked(TaskSpec spec, AuditRecord audit, Reply reply) {
  if (!spec.remote)
    return StartTask(std::move(spec), std::move(audit), reply);
  // Would its executor take it? Asked before anything is stored.
  TaskSpec checked = spec;
  router_->Preflight(checked, [this, reply, spec = std::move(spec),
                               audit = std::move(audit)](Status ok) mutable {
    if (!ok)
      return reply(std::unexpected(ok.error()));
    StartTask(std::move(spec), std::move(audit), reply);
  });
}

void Daemon::Handle(Connection& connection, const RunRequest& request,
                    Session session, Reply reply) {
  StartShell(connection, request, session, "", std::move(reply));
}

void Daemon::Handle(Connection& connection, const DelegateRequest& request,
                    Session session, Reply reply) {
  StartAgent(connection, request, session, "", std::move(reply));
}

void Daemon::StartShell(Connection& connection, const RunRequest& request,
                        Session session, const std::string& rerun_of,
                        Reply reply) {
  auto spec = ShellSpec(request, session);
  if (!spec)
    return reply(std::unexpected(spec.error()));
  spec->rerun_of = rerun_of;
  // The file-system checks live here, not in the registry, which makes no
  // system calls; they too run before anything is stored or spawned.
  PreflightTask(std::move(*spec), &command_cache_, &preflight_runner_,
                [this, reply,
                 audit = AuditOf(connection, session,
                                 rerun_of.empty() ? "run" : "rerun")](
                    Result<TaskSpec> checked) mutable {
                  if (!checked)
                    return reply(std::unexpected(checked.error()));
                  StartChecked(std::move(*checked), std::move(audit), reply);
                });
}

void Daemon::StartAgent(Connection& connection, const DelegateRequest& request,
                        Session session, const std::string& rerun_of,
                        Reply reply) {
  // A spent session starts no agent (doc/agents.md, "Session budgets").
  // The detail reads "budget: session build's ..."; the error names the
  // session first.
  if (std::string spent = registry_->budgets().Reached(session);
      !spent.empty()) {
    return reply(MakeError(
        ErrorCode::kBudgetSpent,
        fmt::format("{}; no new agent task starts in it (raise or remove "
                    "its budget: CLI baton budget, MCP session_budget)",
                    spent.substr(spent.find(' ') + 1))));
  }
  auto config =
      config_cache_.Load(FindConfigFile(ClientEnvLookup(request.base_env)));
  if (!config)
    return reply(std::unexpected(config.error()));
  // The task a resume continues, read once: it gives the agent (unless one
  // is named), the session to resume and the folder.
  std::optional<TaskRecord> resumed;
  if (TaskId::Parse(request.resume_from)) {
    auto task = registry_->Get(request.resume_from, session);
    if (!task)
      return reply(std::unexpected(task.error()));
    if (!IsTerminal(task->status)) {
      return reply(MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{} is still {}; send it a message instead "
                      "(task_send; CLI: baton send), or resume it once it "
                      "ended",
                      request.resume_from, TaskStatusName(task->status))));
    }
    if (auto why = NoSessionToResume(*task); !why.empty())
      return reply(MakeError(ErrorCode::kResumeNotFound, why));
    if (auto ok = CheckResumeAllowed(*task, clock_.WallNowMillis()); !ok)
      return reply(std::unexpected(ok.error()));
    resumed = std::move(*task);
  }
  std::string agent_name = request.agent;
  if (agent_name.empty())
    agent_name = resumed ? resumed->spec.agent->profile : config->default_agent;
  auto profile = config->Find(agent_name);
  if (!profile)
    return reply(std::unexpected(profile.error()));

  AgentSpec agent;
  agent.profile = profile->name;
  agent.adapter = profile->adapter;
  agent.brief = request.brief;
  agent.model = request.model.empty() ? profile->default_model : request.model;
  agent.model_args = profile->model_args;
  agent.resume_flag = profile->resume_flag;
  agent.session_id_after = profile->session_id_after;
  if (!agent.model.empty()) {
    auto model = ParseModelSpec(agent.model);
    if (!model)
      return reply(std::unexpected(model.error()));
    if (auto reached = profile->CheckProvider(*model); !reached)
      return reply(std::unexpected(reached.error()));
  }
  TaskSpec spec = CommonSpec(request, TaskKind::kAgent, session);
  spec.rerun_of = rerun_of;
  if (!spec.timeout)
    spec.timeout = profile->timeout.value_or(config->agent_timeout);
  ApplyProfileEnv(profile->env, spec.base_env);
  auto sandbox = SandboxOf(
      request.sandbox.empty() ? profile->sandbox : request.sandbox, *config,
      request.slurm.OnSlurm(),
      request.sandbox.empty() ? "agent profile " + profile->name + "'s"
                              : std::string("delegate's"));
  if (!sandbox)
    return reply(std::unexpected(sandbox.error()));
  spec.sandbox = std::move(*sandbox);
  // The variables its profile sets are its own: the sandbox keeps them.
  for (const auto& entry : profile->env) {
    if (spec.sandbox)
      spec.sandbox->env.push_back(entry.first);
  }
  if (resumed) {
    // A codex task that ran through exec (its codex had no app-server)
    // resumes through exec: its thread is an exec thread.
    if (agent.adapter == AdapterKind::kCodex &&
        resumed->spec.agent->adapter == AdapterKind::kCodexExec) {
      agent.adapter = AdapterKind::kCodexExec;
      agent.note = fmt::format(
          "resumes {} through codex exec, as it ran (its thread is an exec "
          "thread)",
          request.resume_from);
    }
    agent.resume_session = resumed->agent_session;
    agent.resume_from = request.resume_from;
    // A session is resumed where it ran (Claude keys sessions by folder).
    if (spec.cwd.empty())
      spec.cwd = resumed->spec.cwd;
    // The same work goes on: it keeps its name unless given a new one.
    if (spec.label.empty())
      spec.label = resumed->spec.label;
  } else {
    agent.resume_session = request.resume_from;  // A CLI session id, or "".
  }
  if (agent.adapter == AdapterKind::kCommand && !agent.resume_session.empty() &&
      agent.resume_flag.empty()) {
    return reply(MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is a plain command that cannot resume a session; "
                    "give its profile resume_flag and session_id_after "
                    "(doc/agents.md, \"Plain commands\"), or start a new "
                    "task",
                    profile->name)));
  }
  auto adapter = MakeAdapter(agent.adapter);
  spec.argv = adapter->Argv(profile->ArgvPrefix(), agent);
  if (adapter->interactive()) {
    spec.stdin_pipe = true;
  } else {
    spec.stdin_text = request.brief;
  }
  // Its own worktree, made once it has its id (Daemon::Start's SetOnCreate);
  // a resume goes on in the one it ran in, locked for it there.
  const std::optional<Worktree>* ran_in =
      resumed ? &resumed->spec.agent->worktree : nullptr;
  if (ran_in && *ran_in && !(*ran_in)->path.empty() &&
      (spec.cwd + "/").starts_with((*ran_in)->path + "/")) {
    agent.worktree = **ran_in;
  } else if (request.worktree.value_or(profile->worktree)) {
    agent.worktree = Worktree{};
  }
  // Its budget: the delegate's, limit by limit, else the profile's.
  agent.max_turns = request.max_turns ? request.max_turns : profile->max_turns;
  agent.max_tokens =
      request.max_tokens ? request.max_tokens : profile->max_tokens;
  agent.max_cost_usd =
      request.max_cost_usd ? request.max_cost_usd : profile->max_cost_usd;
  if (request.ask == Asker::kPerson)
    agent.ask = Asker::kPerson;
  spec.agent = std::move(agent);
  if (spec.cwd.empty()) {
    return reply(MakeError(ErrorCode::kInvalidArgument,
                           "delegate request: give 'cwd', the agent's "
                           "folder (an absolute path)"));
  }
  if (auto ok = PreflightTask(spec, &command_cache_); !ok)
    return reply(std::unexpected(ok.error()));
  if (request.slurm.OnSlurm()) {
    spec.remote =
        ToRemote(SlurmRequestOf(request.slurm, request.limits, config->slurm,
                                ClientEnvLookup(request.base_env)));
  } else {
    spec.limits = LimitsOf(request.limits, profile->limits);
  }
  AuditRecord audit =
      AuditOf(connection, session, rerun_of.empty() ? "delegate" : "rerun");
  // The codex probe asks the codex of this machine: a job's runs elsewhere.
  if (spec.agent->adapter != AdapterKind::kCodex || spec.remote)
    return StartChecked(std::move(spec), std::move(audit), reply);
  // Does this codex have app-server? Asked once per codex install, by a
  // probe the loop watches; the reply waits for it (doc/agents.md).
  std::vector<std::string> prefix = profile->ArgvPrefix();
  std::vector<std::string> env = spec.base_env;
  std::string cwd = spec.cwd;
  codex_probe_->Check(
      prefix, env, cwd,
      [this, reply, prefix, spec = std::move(spec),
       audit = std::move(audit)](const ProbeVerdict& verdict) mutable {
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
        StartTask(std::move(spec), std::move(audit), reply);
      });
}

}  // namespace baton
