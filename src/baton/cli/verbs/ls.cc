// `baton ls`: the session's live tasks and the recent ended ones, as a
// table that fits the terminal (cli/task_table.h), or filtered.
#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "baton/cli/task_table.h"
#include "baton/cli/verbs.h"
#include "baton/util/split.h"

namespace baton {
namespace {

struct ListArgs {
  bool all = false;
  bool quiet = false;
  std::string statuses;  // "failed,killed"
  std::string kind, label, queue;

  bool Filters() const {
    return !statuses.empty() || !kind.empty() || !label.empty() ||
           !queue.empty();
  }
};

// What the filters let through; an error names a bad value and the good
// ones.
struct Filter {
  std::set<TaskStatus> statuses;  // Empty: every status.
  std::optional<TaskKind> kind;
  std::optional<std::string> label;
  std::optional<std::string> queue;  // As stored: "" is the default queue.

  bool Matches(const TaskRecord& task) const {
    return (statuses.empty() || statuses.contains(task.status)) &&
           (!kind || task.spec.kind == *kind) &&
           (!label || task.spec.label == *label) &&
           (!queue || task.spec.schedule.queue == *queue);
  }
};

Result<Filter> FilterOf(const ListArgs& args) {
  Filter filter;
  for (std::string_view name : Split(args.statuses, ',')) {
    if (args.statuses.empty())
      break;
    auto status = ParseTaskStatus(name);
    if (!status) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("--status: '{}' is not a status; give one "
                                   "or more of {} (e.g. --status "
                                   "failed,killed)",
                                   name, TaskStatusNames()));
    }
    filter.statuses.insert(*status);
  }
  if (!args.kind.empty()) {
    auto kind = ParseTaskKind(args.kind);
    if (!kind) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("--kind: '{}' is not a kind; give shell or "
                                   "agent",
                                   args.kind));
    }
    filter.kind = *kind;
  }
  if (!args.label.empty())
    filter.label = args.label;
  if (!args.queue.empty())
    filter.queue = args.queue == kDefaultQueue ? "" : args.queue;
  return filter;
}

int DoListTasks(const Context& ctx, const ListArgs& args) {
  auto filter = FilterOf(args);
  if (!filter)
    return ReportError(ctx, filter.error());
  // A filter looks for tasks: through every ended one, not the recent.
  ListRequest request{.all = args.all || args.Filters()};
  // Filtered before it is printed, so that --json lists what the table
  // would.
  auto only_matches = [&](ListReply& list) {
    std::erase_if(list.tasks, [&](const TaskView& view) {
      return !filter->Matches(view.task);
    });
  };
  return CallAdjustAndPrint(
      ctx, request, only_matches, [&](const ListReply& list) {
        if (args.quiet) {
          for (const TaskView& view : list.tasks)
            std::printf("%s\n", view.task.id.ToString().c_str());
          return kExitOk;
        }
        if (list.tasks.empty()) {
          std::printf("no tasks%s\n",
                      args.Filters() ? " match"
                      : args.all     ? ""
                                     : " (baton ls --all shows ended ones)");
        } else {
          std::fputs(TaskTable(list.tasks, StyleFor(stdout)).c_str(), stdout);
        }
        if (list.hidden && !request.all) {
          std::printf("... and %lld older ended tasks (baton ls --all)\n",
                      static_cast<long long>(list.hidden));
        }
        return kExitOk;
      });
}

}  // namespace

void DefineList(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<ListArgs>();
  command.add_flag("--all,-a", args->all, "Include all ended tasks");
  command.add_flag("--quiet,-q", args->quiet,
                   "Only the ids, one a line (what shell completion reads)");
  command.add_option("--status", args->statuses,
                     "Only tasks of these statuses, e.g. failed,killed");
  command.add_option("--kind", args->kind, "Only shell or agent tasks");
  command.add_option("--label", args->label, "Only tasks with this label");
  command.add_option("--queue", args->queue, "Only tasks of this queue");
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoListTasks(ctx, *args); };
  });
}

}  // namespace baton
