// The `metrics` request: a snapshot of what batond counts, for `baton
// serve`'s /metrics (doc/metrics.md). Read from what batond keeps in memory
// (the live tasks, the queues, core/metrics.h's counters): no store reads,
// so its cost follows the live tasks, never the ended ones.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "baton/daemon/daemon.h"

namespace baton {
namespace {

MetricsHistogram HistogramOf(const Histogram& histogram) {
  MetricsHistogram out;
  out.bounds.assign(histogram.bounds().begin(), histogram.bounds().end());
  for (size_t i = 0; i <= histogram.bounds().size(); ++i)
    out.buckets.push_back(static_cast<int64_t>(histogram.bucket(i)));
  out.sum = histogram.sum();
  out.count = static_cast<int64_t>(histogram.count());
  return out;
}

// batond's resident set, from /proc/self/statm (pages); 0 when unreadable.
int64_t ResidentBytes() {
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  std::array<char, 128> text{};
  ssize_t n = ::read(fd, text.data(), text.size() - 1);
  ::close(fd);
  if (n <= 0)
    return 0;
  // "size resident shared ...": the second number.
  const char* end = text.data() + n;
  const char* p = std::find(static_cast<const char*>(text.data()), end, ' ');
  if (p == end)
    return 0;
  int64_t pages = 0;
  if (std::from_chars(p + 1, end, pages).ec != std::errc())
    return 0;
  return pages * ::sysconf(_SC_PAGESIZE);
}

void AddBudgetsLeft(const SessionBudgets& budgets,
                    std::vector<MetricsBudget>& out) {
  budgets.ForEach([&out](const std::string& session, const AgentBudget& budget,
                         const AgentUsage& usage) {
    auto left = [&](std::string resource, double limit, double spent) {
      out.push_back(
          {session, std::move(resource), std::max(limit - spent, 0.0)});
    };
    if (budget.max_turns)
      left("turns", static_cast<double>(*budget.max_turns),
           static_cast<double>(usage.turns));
    if (budget.max_tokens)
      left("tokens", static_cast<double>(*budget.max_tokens),
           static_cast<double>(usage.tokens()));
    if (budget.max_cost_usd)
      left("cost_usd", *budget.max_cost_usd, usage.cost_usd.value_or(0));
  });
}

}  // namespace

void Daemon::Handle(Connection&, const MetricsRequest&, Session, Reply reply) {
  MetricsReply out;
  // Live tasks by kind and status, and those handed to each executor.
  std::array<std::array<int64_t, kTaskStatuses>, kTaskKinds> live{};
  // Both executors always, so that a dashboard's series exist at 0.
  std::map<std::string, int64_t> running{{"local", 0}, {kSlurmExecutor, 0}};
  registry_->ForEachLive([&](const TaskRecord& task) {
    ++live[static_cast<size_t>(task.spec.kind)]
          [static_cast<size_t>(task.status)];
    if (task.status != TaskStatus::kQueued)
      ++running[task.spec.remote ? task.spec.remote->executor : "local"];
  });
  for (size_t k = 0; k < kTaskKinds; ++k) {
    auto kind = static_cast<TaskKind>(k);
    out.started.push_back(
        {std::string(TaskKindName(kind)), "",
         static_cast<int64_t>(registry_->metrics().started(kind))});
    for (size_t s = 0; s < kTaskStatuses; ++s) {
      auto status = static_cast<TaskStatus>(s);
      MetricsTaskCount count{std::string(TaskKindName(kind)),
                             std::string(TaskStatusName(status)), 0};
      if (IsTerminal(status)) {
        count.count =
            static_cast<int64_t>(registry_->metrics().ended(kind, status));
        out.ended.push_back(std::move(count));
      } else {
        count.count = live[k][s];
        out.tasks.push_back(std::move(count));
      }
    }
  }
  for (const auto& [executor, count] : running)
    out.executors.push_back({executor, count});
  for (const QueueView& queue : registry_->Queues()) {
    out.queues.push_back({queue.record.name, queue.queued, queue.running});
  }
  for (const auto& [profile, spend] : registry_->metrics().agents()) {
    out.agents.push_back({profile, spend.input_tokens, spend.output_tokens,
                          spend.turns, spend.cost_usd});
  }
  for (const auto& [kind, count] : output_redactor_->masked_total())
    out.redactions.push_back({kind, count});
  AddBudgetsLeft(registry_->budgets(), out.budgets);
  out.wake = HistogramOf(registry_->metrics().wake());
  out.queue_wait = HistogramOf(registry_->metrics().queue_wait());
  out.supervisor_restarts = executor_->supervisor_losses();
  out.rss_bytes = ResidentBytes();
  out.connections = static_cast<int64_t>(connections_.size());
  out.open_waits = static_cast<int64_t>(registry_->open_waits());
  out.uptime_ms = clock_.WallNowMillis() - started_ms_;
  reply(out);
}

void Daemon::ObserveWakes(bool early) {
  if (woken_.empty())
    return;
  MonoTime now = clock_.Now();
  std::erase_if(woken_, [&](const Woken& woken) {
    if (early && !woken.early)
      return false;  // Its reply waits for the commit.
    registry_->metrics().WaiterWoken(
        std::chrono::duration<double>(now - woken.at).count());
    return true;
  });
}

}  // namespace baton
