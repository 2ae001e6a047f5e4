// `baton queue add|set|ls|pause|resume`: named queues, each with a limit of
// running tasks (doc/scheduling.md). `run --queue` and `delegate --queue`
// put tasks in one.
#include <fmt/format.h>

#include <cstdio>

#include "baton/cli/verbs.h"

namespace baton {
namespace {

std::string LimitText(const QueueInfo& queue) {
  return queue.max_running ? std::to_string(*queue.max_running) : "-";
}

// "queue build: at most 3 at once; 3 running, 7 queued (paused)".
std::string QueueLine(const QueueInfo& queue) {
  return fmt::format(
      "queue {}: {}; {} running, {} queued{}", queue.name,
      queue.max_running ? fmt::format("at most {} at once", *queue.max_running)
                        : std::string("no limit"),
      queue.running, queue.queued, queue.paused ? " (paused)" : "");
}

int DoSet(const Context& ctx, QueueSetRequest request) {
  return CallAndPrint(ctx, request, [](const QueueReply& reply) {
    std::printf("%s\n", QueueLine(reply.queue).c_str());
    return kExitOk;
  });
}

int DoList(const Context& ctx) {
  return CallAndPrint(ctx, QueueListRequest{}, [](const QueueListReply& reply) {
    std::printf("%-20s %5s %8s %7s  %s\n", "QUEUE", "MAX", "RUNNING", "QUEUED",
                "STATE");
    for (const QueueInfo& queue : reply.queues) {
      std::printf("%-20s %5s %8lld %7lld  %s\n", queue.name.c_str(),
                  LimitText(queue).c_str(),
                  static_cast<long long>(queue.running),
                  static_cast<long long>(queue.queued),
                  queue.paused ? "paused" : "open");
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
  };
  auto add_args = std::make_shared<Args>();
  auto* add = command.add_subcommand("add", "Make a queue");
  add->add_option("name", add_args->name, "Its name")->required();
  add->add_option("--max", add_args->max,
                  "At most this many of its tasks run at once (0: no limit)")
      ->check(WholeNumber(0, 1'000'000));
  add->callback([&ctx, &action, add_args] {
    action = [&ctx, add_args] {
      return DoSet(ctx, QueueSetRequest{.name = add_args->name,
                                        .create = true,
                                        .max_running = add_args->max});
    };
  });
  auto set_args = std::make_shared<Args>();
  auto* set = command.add_subcommand(
      "set", "Change a queue's limit (default: the default queue)");
  set->add_option("name", set_args->name, "Its name")->required();
  set->add_option("--max", set_args->max,
                  "At most this many of its tasks run at once (0: no limit)")
      ->required()
      ->check(WholeNumber(0, 1'000'000));
  set->callback([&ctx, &action, set_args] {
    action = [&ctx, set_args] {
      return DoSet(ctx, QueueSetRequest{.name = set_args->name,
                                        .max_running = set_args->max});
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
