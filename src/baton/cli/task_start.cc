#include "baton/cli/task_start.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <type_traits>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"
#include "baton/cli/wait_report.h"
#include "baton/util/byte_size.h"
#include "baton/util/environment.h"

namespace baton {

void AddScheduleFlags(CLI::App& command, PlacementFlags& flags) {
  command.add_option("--queue", flags.queue,
                     "Wait in this queue for a slot (baton queue ls)");
  command
      .add_option("--priority", flags.priority,
                  "Higher starts first within its queue (default 0)")
      ->check(WholeNumber(-1'000'000, 1'000'000));
  command
      .add_option("--after", flags.after,
                  "Start once these tasks completed (ID[,ID...]); fails "
                  "without running if one of them does not")
      ->delimiter(',')
      ->allow_extra_args(false);
  command
      .add_option("--after-any", flags.after_any,
                  "Start at the first end of any of these tasks (ID[,ID...])")
      ->delimiter(',')
      ->allow_extra_args(false);
}

void AddSlurmFlags(CLI::App& command, SlurmFlags& flags) {
  command.add_option("--on", flags.on,
                     "Where it runs: local (default) or slurm, as a Slurm "
                     "job (doc/slurm.md)");
  command.add_option("--partition", flags.partition,
                     "With --on slurm: the partition (sbatch -p)");
  command.add_option("--time", flags.time,
                     "With --on slurm: the job's time limit (e.g. 10m), "
                     "in whole minutes; past it Slurm ends it");
  command.add_option("--mem", flags.mem,
                     "With --on slurm: memory for it, as Slurm writes it "
                     "(e.g. 4G)");
  command.add_option("--gres", flags.gres,
                     "With --on slurm: generic resources (e.g. gpu:1)");
  command
      .add_option("--sbatch-arg", flags.sbatch_args,
                  "With --on slurm: one more sbatch option, as one "
                  "argument (e.g. --sbatch-arg=--qos=high); repeatable")
      ->allow_extra_args(false);
}

Result<std::optional<SlurmFields>> SlurmFieldsOf(const SlurmFlags& flags) {
  if (flags.on.empty() || flags.on == "local") {
    for (auto [set, name] :
         {std::pair(!flags.partition.empty(), "--partition"),
          std::pair(!flags.time.empty(), "--time"),
          std::pair(!flags.mem.empty(), "--mem"),
          std::pair(!flags.gres.empty(), "--gres"),
          std::pair(!flags.sbatch_args.empty(), "--sbatch-arg")}) {
      if (set) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            fmt::format("{} is for a Slurm job; add --on slurm", name));
      }
    }
    return std::nullopt;
  }
  if (flags.on != "slurm") {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("--on {}: tasks run on local (the default) "
                                 "or slurm",
                                 flags.on));
  }
  SlurmFields fields;
  fields.on = "slurm";
  fields.partition = flags.partition;
  if (!flags.time.empty()) {
    auto time = ParseDurationFlag("--time", flags.time);
    if (!time)
      return std::unexpected(time.error());
    fields.time_limit_s = (time->count() + 999) / 1000;
  }
  fields.mem = flags.mem;
  fields.gres = flags.gres;
  fields.sbatch_args = flags.sbatch_args;
  return fields;
}

void AddLimitFlags(CLI::App& command, LimitFlags& flags) {
  command.add_option("--memory", flags.memory,
                     "Memory for all its processes (e.g. 2G); past it they "
                     "are killed and it fails, out of memory");
  command
      .add_option("--cpus", flags.cpus,
                  "CPU time it may use, in CPUs (e.g. 1.5); on Slurm, whole "
                  "CPUs (sbatch --cpus-per-task)")
      ->check(DecimalNumber(0.01, 65536));
  command
      .add_option("--pids", flags.pids,
                  "Processes and threads it may have at once")
      ->check(WholeNumber(1, 1 << 22));
  command.add_option("--sandbox", flags.sandbox,
                     "Run its whole process tree in a sandbox: strict (its "
                     "folder only, no network), agent, build, or a config "
                     "[sandbox.NAME] (doc/sandbox.md)");
}

void AddRetryFlags(CLI::App& command, RetryFlags& flags) {
  command
      .add_option("--retry", flags.retries,
                  "Run it again up to N times when it fails or times out")
      ->check(WholeNumber(0, kMaxRetries));
  command.add_option("--retry-delay", flags.delay,
                     "Wait before the first retry, doubled for each next "
                     "one, at most 10m (default 5s)");
}

Result<RetryFields> RetryFieldsOf(const RetryFlags& flags) {
  RetryFields fields{.retries = flags.retries};
  if (flags.delay.empty())
    return fields;
  auto delay = ParseDurationFlag("--retry-delay", flags.delay);
  if (!delay)
    return std::unexpected(delay.error());
  if (delay->count() > kMaxRetryBackoffMs) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("--retry-delay {} is longer than 10m, the "
                                 "longest a retry waits",
                                 flags.delay));
  }
  fields.retry_delay_ms = delay->count();
  return fields;
}

Result<LimitFields> LimitFieldsOf(const LimitFlags& flags) {
  LimitFields fields;
  if (!flags.memory.empty()) {
    auto bytes = ParseByteSize(flags.memory);
    if (!bytes) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--memory: " + bytes.error().message);
    }
    if (*bytes < (int64_t{1} << 20)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("--memory {} is below 1M, the least a task "
                                   "can run in",
                                   flags.memory));
    }
    fields.memory_bytes = *bytes;
  }
  if (flags.cpus > 0)
    fields.cpus = flags.cpus;
  if (flags.pids > 0)
    fields.pids = flags.pids;
  return fields;
}

template <class R>
Status PlaceTask(R& request, const PlacementFlags& flags,
                 const SlurmFlags& slurm_flags, const LimitFlags& limit_flags) {
  if (!flags.after.empty() && !flags.after_any.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--after and --after-any do not go together; use one");
  }
  request.schedule.queue = flags.queue;
  request.schedule.priority = flags.priority;
  request.schedule.after =
      flags.after_any.empty() ? flags.after : flags.after_any;
  request.schedule.after_any = !flags.after_any.empty();
  std::string cwd = flags.cwd.empty() ? CurrentDir() : flags.cwd;
  if (cwd[0] != '/')
    cwd = CurrentDir() + "/" + cwd;
  request.cwd = cwd;
  if (!flags.timeout.empty()) {
    auto timeout = ParseDurationFlag("--timeout", flags.timeout);
    if (!timeout)
      return std::unexpected(timeout.error());
    if (timeout->count() <= 0) {
      // MCP's timeout_s reads the same (mcp/arguments.cc, Seconds).
      constexpr bool kAgent = std::is_same_v<R, DelegateRequest>;
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("--timeout must be more than 0 (got {}); leave it out "
                      "for {}",
                      flags.timeout,
                      kAgent ? "the profile's default" : "no limit"));
    }
    request.timeout = *timeout;
  }
  request.checks = flags.checks;
  request.base_env = ProcessEnvironment();
  auto slurm = SlurmFieldsOf(slurm_flags);
  if (!slurm)
    return std::unexpected(slurm.error());
  if (*slurm)
    request.slurm = std::move(**slurm);
  auto limits = LimitFieldsOf(limit_flags);
  if (!limits)
    return std::unexpected(limits.error());
  request.limits = *limits;
  request.sandbox = limit_flags.sandbox;
  return {};
}

template Status PlaceTask(RunRequest&, const PlacementFlags&, const SlurmFlags&,
                          const LimitFlags&);
template Status PlaceTask(DelegateRequest&, const PlacementFlags&,
                          const SlurmFlags&, const LimitFlags&);

template <class R>
int StartTask(const Context& ctx, const R& request, AfterStart after) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto reply = client->Call(request);
  if (!reply)
    return ReportError(ctx, reply.error());
  const TaskView& task = reply->task;
  std::string id = task.task.id.ToString();
  PrintReply(ctx, *client, *reply, [&](const TaskReply&) {
    std::printf("%s\n", id.c_str());
    std::fflush(stdout);
    return kExitOk;
  });
  if (!ctx.json) {
    if (task.task.status == TaskStatus::kFailed)
      std::fprintf(stderr, "baton: %s\n", TaskSummaryLine(task).c_str());
    // batond ran another adapter than the profile's (doc/agents.md).
    if (task.task.spec.agent && !task.task.spec.agent->note.empty()) {
      std::fprintf(stderr, "baton: %s: %s\n", id.c_str(),
                   task.task.spec.agent->note.c_str());
    }
  }
  if (after == AfterStart::kReturn)
    return kExitOk;
  bool until_end = after == AfterStart::kWaitForEnd;
  // On a terminal a build is watched, not waited on: its output as it
  // comes, then how it ended.
  if (until_end && !ctx.json && ::isatty(1) &&
      task.task.status != TaskStatus::kFailed) {
    if (auto streamed = StreamOutput(ctx, *client, id); !streamed)
      return ReportError(ctx, streamed.error());
    return ReportEnd(ctx, *client, id);
  }
  return WaitAndReport(
      ctx, *client,
      {.ids = {id}, .all = until_end, .exit_like_task = until_end});
}

template int StartTask(const Context&, const RunRequest&, AfterStart);
template int StartTask(const Context&, const DelegateRequest&, AfterStart);
template int StartTask(const Context&, const RerunRequest&, AfterStart);

}  // namespace baton
