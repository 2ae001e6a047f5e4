// `baton queue add|set|ls|pause|resume`: named queues, each with a limit of
// running tasks (doc/scheduling.md). `run --queue` and `delegate --queue`
// put tasks in one.
#include <fmt/format.h>

#include <cstdio>

#include "baton/cli/verbs.h"
#include "baton/util/byte_size.h"

namespace baton {
namespace {

std::string LimitText(const QueueInfo& queue) {
  return queue.max_running ? std::to_string(*queue.max_running) : "-";
}

// "queue build: at most 3 at once; 3 running, 7 queued (paused); its
// tasks' limits: memory 2 GiB".
std::string QueueLine(const QueueInfo& queue) {
  return fmt::format(
      "queue {}: {}; {} running, {} queued{}{}", queue.name,
      queue.max_running ? fmt::format("at most {} at once", *queue.max_running)
                        : std::string("no limit"),
      queue.running, queue.queued, queue.paused ? " (paused)" : "",
      queue.limits ? "; its tasks' limits: " + LimitsText(*queue.limits) : "");
}

// --memory, --cpus and --pids of `queue add` and `queue set`: its tasks'
// limits where they give none (doc/limits.md); 0 removes one.
struct QueueLimitFlags {
  std::string memory;
  std::optional<double> cpus;
  std::optional<int64_t> pids;
};

void AddQueueLimitFlags(CLI::App* command, QueueLimitFlags& flags) {
  command->add_option("--memory", flags.memory,
                      "Memory limit of each of its tasks that gives none "
                      "(e.g. 2G; 0: none)");
  command
      ->add_option("--cpus", flags.cpus,
                   "CPU share of each of its tasks that gives none (e.g. "
                   "1.5; 0: none)")
      ->check(DecimalNumber(0, 65536));
  command
      ->add_option("--pids", flags.pids,
                   "Processes limit of each of its tasks that gives none "
                   "(0: none)")
      ->check(WholeNumber(0, 1 << 22));
}

// Fills `request`'s limits from the flags; fails on a bad --memory.
Status ApplyQueueLimitFlags(const QueueLimitFlags& flags,
                            QueueSetRequest& request) {
  if (!flags.memory.empty()) {
    auto bytes = ParseByteSize(flags.memory);
    if (!bytes) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--memory: " + bytes.error().message);
    }
    request.memory_bytes = *bytes;
  }
  request.cpus = flags.cpus;
  request.pids = flags.pids;
  return {};
}

int DoSet(const Context& ctx, QueueSetRequest request,
          const QueueLimitFlags& limits = {}) {
  if (auto applied = ApplyQueueLimitFlags(limits, request); !applied)
    return ReportError(ctx, applied.error());
  return CallAndPrint(ctx, request, [](const QueueReply& reply) {
    std::printf("%s\n", QueueLine(reply.queue).c_str());
    return kExitOk;
  });
}

int DoList(const Context& ctx) {
  return CallAndPrint(ctx, QueueListRequest{}, [](const QueueListReply& reply) {
    std::printf("%-20s %5s %8s %7s  %-6s  %s\n", "QUEUE", "MAX", "RUNNING",
                "QUEUED", "STATE", "TASK LIMITS");
    for (const QueueInfo& queue : reply.queues) {
      std::printf("%-20s %5s %8lld %7lld  %-6s  %s\n", queue.name.c_str(),
                  LimitText(queue).c_str(),
                  static_cast<long long>(queue.running),
                  static_cast<long long>(queue.queued),
                  queue.paused ? "paused" : "open",
                  queue.limits ? LimitsText(*queue.limits).c_str() : "-");
    }
    return kExitOk;
  });
}

}  // namespace

void DefineQueue(CLI::App& command, const Context& ctx, Action& action) {
  command.require_subcommand(1);
  struct Args {
    std::string name;
    std::optional<int64_t> max;
    QueueLimitFlags limits;
  };
  auto add_args = std::make_shared<Args>();
  auto* add = command.add_subcommand("add", "Make a queue");
  add->add_option("name", add_args->name, "Its name")->required();
  add->add_option("--max", add_args->max,
                  "At most this many of its tasks run at once (0: no limit)")
      ->check(WholeNumber(0, 1'000'000));
  AddQueueLimitFlags(add, add_args->limits);
  add->callback([&ctx, &action, add_args] {
    action = [&ctx, add_args] {
      return DoSet(ctx,
                   QueueSetRequest{.name = add_args->name,
                                   .create = true,
                                   .max_running = add_args->max},
                   add_args->limits);
    };
  });
  auto set_args = std::make_shared<Args>();
  auto* set = command.add_subcommand(
      "set", "Change a queue's limits (`default` is the default queue)");
  set->add_option("name", set_args->name, "Its name")->required();
  set->add_option("--max", set_args->max,
                  "At most this many of its tasks run at once (0: no limit)")
      ->check(WholeNumber(0, 1'000'000));
  AddQueueLimitFlags(set, set_args->limits);
  set->callback([&ctx, &action, set_args] {
    action = [&ctx, set_args] {
      const QueueLimitFlags& limits = set_args->limits;
      if (!set_args->max && limits.memory.empty() && !limits.cpus &&
          !limits.pids) {
        return ReportError(
            ctx, {ErrorCode::kInvalidArgument,
                  "nothing to change; give --max N, or its tasks' --memory, "
                  "--cpus or --pids"});
      }
      return DoSet(
          ctx,
          QueueSetRequest{.name = set_args->name, .max_running = set_args->max},
          limits);
    };
  });
  command.add_subcommand("ls", "List the queues")->callback([&ctx, &action] {
    action = [&ctx] { return DoList(ctx); };
  });
  for (bool pause : {true, false}) {
    auto name = std::make_shared<std::string>();
    auto* sub = command.add_subcommand(
        pause ? "pause" : "resume",
        pause ? "Start nothing new from a queue (running tasks go on)"
              : "Start a paused queue's tasks again");
    sub->add_option("name", *name, "The queue")->required();
    sub->callback([&ctx, &action, name, pause] {
      action = [&ctx, name, pause] {
        return DoSet(ctx, QueueSetRequest{.name = *name, .paused = pause});
      };
    });
  }
}

}  // namespace baton
