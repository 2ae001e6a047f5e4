#include "baton/core/metrics.h"

#include <algorithm>

#include "baton/util/result.h"

namespace baton {

static_assert(static_cast<size_t>(TaskKind::kAgent) + 1 == kTaskKinds);
static_assert(static_cast<size_t>(TaskStatus::kInterrupted) + 1 ==
              kTaskStatuses);

Histogram::Histogram(std::span<const double> bounds) : bounds_(bounds) {
  BATON_CHECK(bounds.size() <= kMaxBounds);
}

void Histogram::Observe(double seconds) {
  // The bucket of the first bound at or above: "le" is inclusive.
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), seconds);
  ++counts_[static_cast<size_t>(it - bounds_.begin())];
  ++count_;
  sum_ += seconds;
}

DaemonMetrics::DaemonMetrics()
    : wake_(kWakeBounds), queue_wait_(kQueueWaitBounds) {}

void DaemonMetrics::TaskStarted(TaskKind kind, bool first_attempt,
                                int64_t queued_ms) {
  ++started_[static_cast<size_t>(kind)];
  if (first_attempt)
    queue_wait_.Observe(static_cast<double>(std::max<int64_t>(queued_ms, 0)) /
                        1000.0);
}

void DaemonMetrics::TaskEnded(TaskKind kind, TaskStatus status) {
  ++ended_[static_cast<size_t>(kind)][static_cast<size_t>(status)];
}

void DaemonMetrics::UsageMoved(const std::string& profile,
                               const AgentUsage& before,
                               const AgentUsage& usage) {
  AgentSpend& spend = agents_[profile];
  // A report never takes back what was spent: a smaller number (a new
  // attempt counting from 0) adds nothing.
  spend.input_tokens +=
      std::max<int64_t>(usage.input_tokens - before.input_tokens, 0);
  spend.output_tokens +=
      std::max<int64_t>(usage.output_tokens - before.output_tokens, 0);
  spend.turns += std::max<int64_t>(usage.turns - before.turns, 0);
  spend.cost_usd +=
      std::max(usage.cost_usd.value_or(0) - before.cost_usd.value_or(0), 0.0);
}

}  // namespace baton
