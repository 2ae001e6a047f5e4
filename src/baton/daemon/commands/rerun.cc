// The `rerun` handler: an ended task started again as a new task, through
// the same `run` or `delegate` path as a new one (doc/tasks.md, "Run
// again"). The request is rebuilt from what the task stored; what was
// never stored (the client's environment) comes from the rerunning client.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "baton/daemon/agent_profiles.h"
#include "baton/daemon/commands/client_env.h"
#include "baton/daemon/daemon.h"
#include "baton/ipc/slurm_request.h"

namespace baton {
namespace {

// What `run` and `delegate` share, as the ended task had it. Not `after`:
// what it waited for has happened.
template <class R>
void FillCommon(const TaskRecord& task, R& request) {
  const TaskSpec& spec = task.spec;
  request.label = spec.label;
  request.timeout = spec.timeout;
  request.checks = spec.checks;
  request.unowned = spec.owner.empty();
  request.schedule.queue = spec.schedule.queue;
  request.schedule.priority = spec.schedule.priority;
  request.retry.retries = spec.retry.retries;
  request.retry.retry_delay_ms = spec.retry.delay_ms;
  // Its sandbox by name: the config's profile as it reads now.
  if (spec.sandbox)
    request.sandbox = spec.sandbox->name;
}

// Its resource limits (local) or its Slurm request, as the fields a new
// request gives them. `config_args`, the config's own sbatch_args, which
// the new request gets again from the config, are left out.
template <class R>
void FillPlacement(const TaskSpec& spec,
                   const std::vector<std::string>& config_args, R& request) {
  auto asked = SlurmRequestOf(spec);
  if (!asked || !*asked) {
    const ResourceLimits& limits = spec.limits;
    if (limits.memory_bytes > 0)
      request.limits.memory_bytes = limits.memory_bytes;
    if (limits.cpu_millis > 0)
      request.limits.cpus = static_cast<double>(limits.cpu_millis) / 1000;
    if (limits.pids > 0)
      request.limits.pids = limits.pids;
    return;
  }
  const SlurmRequest& slurm = **asked;
  request.slurm.on = "slurm";
  request.slurm.partition = slurm.partition;
  request.slurm.account = slurm.account;
  if (slurm.time_limit_s > 0)
    request.slurm.time_limit_s = slurm.time_limit_s;
  request.slurm.mem = slurm.mem;
  request.slurm.gres = slurm.gres;
  auto own = slurm.sbatch_args.begin();
  if (std::equal(config_args.begin(), config_args.end(), own,
                 slurm.sbatch_args.end())) {
    own += static_cast<std::ptrdiff_t>(config_args.size());
  }
  request.slurm.sbatch_args.assign(own, slurm.sbatch_args.end());
  if (slurm.cpus > 0)
    request.limits.cpus = static_cast<double>(slurm.cpus);
}

RunRequest RunAgain(const TaskRecord& task,
                    const std::vector<std::string>& config_args) {
  const TaskSpec& spec = task.spec;
  RunRequest request;
  FillCommon(task, request);
  if (spec.shell_command) {
    request.command = spec.shell_command;
  } else {
    request.argv = spec.argv;
  }
  request.cwd = spec.cwd;
  request.env = spec.env_overrides;
  request.max_output = spec.max_output;
  if (!spec.redact)
    request.redact = false;
  FillPlacement(spec, config_args, request);
  return request;
}

// A new session with the same brief, not a resume: a rerun starts the work
// again. In its own new worktree if it had one, made from the repository
// it was asked in.
DelegateRequest DelegateAgain(const TaskRecord& task,
                              const std::vector<std::string>& config_args) {
  const TaskSpec& spec = task.spec;
  const AgentSpec& agent = *spec.agent;
  DelegateRequest request;
  FillCommon(task, request);
  request.brief = agent.brief;
  request.agent = agent.profile;
  request.model = agent.model;
  request.cwd = agent.worktree ? agent.worktree->repo : spec.cwd;
  request.worktree = agent.worktree.has_value();
  request.max_turns = agent.max_turns;
  request.max_tokens = agent.max_tokens;
  request.max_cost_usd = agent.max_cost_usd;
  request.ask = agent.ask;
  FillPlacement(spec, config_args, request);
  return request;
}

}  // namespace

void Daemon::Handle(Connection& connection, const RerunRequest& request,
                    Session session, Reply reply) {
  auto task = registry_->Get(request.task, session);
  if (!task)
    return reply(std::unexpected(task.error()));
  if (!IsTerminal(task->status)) {
    return reply(MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is still {}; a task runs again once it ended (wait "
                    "for it, or stop it first: task_kill; CLI: baton kill {})",
                    request.task, TaskStatusName(task->status), request.task)));
  }
  // The config's sbatch_args, which the new request gets again.
  std::vector<std::string> config_args;
  if (task->spec.remote) {
    auto config =
        config_cache_.Load(FindConfigFile(ClientEnvLookup(request.base_env)));
    if (!config)
      return reply(std::unexpected(config.error()));
    config_args = config->slurm.sbatch_args;
  }
  std::string rerun_of = task->id.ToString();
  if (task->spec.agent) {
    DelegateRequest again = DelegateAgain(*task, config_args);
    again.base_env = request.base_env;
    return StartAgent(connection, again, session, rerun_of, std::move(reply));
  }
  RunRequest again = RunAgain(*task, config_args);
  again.base_env = request.base_env;
  StartShell(connection, again, session, rerun_of, std::move(reply));
}

}  // namespace baton
