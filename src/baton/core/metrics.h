// What batond counts for `baton serve`'s /metrics (doc/metrics.md): the
// counters and histograms that only grow, kept on the loop where the events
// happen. The hot path pays an array increment per event: the label sets
// are fixed arrays (kind x status), and the only maps are keyed by agent
// profile, whose entry is made once per profile name. Gauges (tasks by
// status, queues, connections) are read when asked, not kept here.
// Single-threaded, on batond's loop, as the registry.
#ifndef BATON_CORE_METRICS_H_
#define BATON_CORE_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "baton/core/task.h"

namespace baton {

// A Prometheus histogram of seconds over fixed upper bounds (`le`): one
// count per bucket (not cumulative: the formatter sums), their sum and
// count. Observe does no allocation.
class Histogram {
 public:
  static constexpr size_t kMaxBounds = 16;
  explicit Histogram(std::span<const double> bounds);

  void Observe(double seconds);

  std::span<const double> bounds() const { return bounds_; }
  // Per bound, the observations at most it and above the one before; the
  // last entry (index bounds().size()) those above every bound.
  uint64_t bucket(size_t i) const { return counts_[i]; }
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::span<const double> bounds_;
  std::array<uint64_t, kMaxBounds + 1> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

// From a task's end seen by the registry to its waiter's reply written:
// 100 us to 5 s.
inline constexpr std::array<double, 15> kWakeBounds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5};
// From a task's creation to its first dispatch: 1 ms to 4 h.
inline constexpr std::array<double, 11> kQueueWaitBounds = {
    0.001, 0.01, 0.1, 1, 10, 60, 300, 900, 3600, 14400, 86400};

// What the agent tasks of one profile spent, summed over usage reports.
struct AgentSpend {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  int64_t turns = 0;
};

inline constexpr size_t kTaskKinds = 2;     // TaskKind
inline constexpr size_t kTaskStatuses = 8;  // TaskStatus

class DaemonMetrics {
 public:
  DaemonMetrics();

  // A task handed to the executor (each attempt); its first also observes
  // how long it was queued, `queued_ms` from creation.
  void TaskStarted(TaskKind kind, bool first_attempt, int64_t queued_ms);
  // A task reached terminal `status`.
  void TaskEnded(TaskKind kind, TaskStatus status);
  // An agent task of `profile` reported `usage`, where it had `before`:
  // what grew is added.
  void UsageMoved(const std::string& profile, const AgentUsage& before,
                  const AgentUsage& usage);
  // A wait was answered `seconds` after the end that woke it.
  void WaiterWoken(double seconds) { wake_.Observe(seconds); }

  uint64_t started(TaskKind kind) const {
    return started_[static_cast<size_t>(kind)];
  }
  uint64_t ended(TaskKind kind, TaskStatus status) const {
    return ended_[static_cast<size_t>(kind)][static_cast<size_t>(status)];
  }
  const std::map<std::string, AgentSpend>& agents() const { return agents_; }
  const Histogram& wake() const { return wake_; }
  const Histogram& queue_wait() const { return queue_wait_; }

 private:
  std::array<uint64_t, kTaskKinds> started_{};
  std::array<std::array<uint64_t, kTaskStatuses>, kTaskKinds> ended_{};
  std::map<std::string, AgentSpend> agents_;
  Histogram wake_;
  Histogram queue_wait_;
};

}  // namespace baton

#endif  // BATON_CORE_METRICS_H_
