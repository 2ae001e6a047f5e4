#include "baton/core/metrics.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(Histogram, EachObservationInTheFirstBucketAtOrAboveIt) {
  static constexpr std::array<double, 3> kBounds = {0.001, 0.01, 0.1};
  Histogram h(kBounds);
  h.Observe(0.0005);
  h.Observe(0.001);  // "le" is inclusive.
  h.Observe(0.05);
  h.Observe(7);
  EXPECT_EQ(h.bucket(0), 2u);
  EXPECT_EQ(h.bucket(1), 0u);
  EXPECT_EQ(h.bucket(2), 1u);
  EXPECT_EQ(h.bucket(3), 1u);  // Above every bound.
  EXPECT_EQ(h.count(), 4u);
  EXPECT_DOUBLE_EQ(h.sum(), 0.0005 + 0.001 + 0.05 + 7);
}

TEST(DaemonMetrics, CountsStartsEndsAndQueueWaitOfFirstAttempts) {
  DaemonMetrics m;
  m.TaskStarted(TaskKind::kShell, /*first_attempt=*/true, 2500);
  m.TaskStarted(TaskKind::kShell, /*first_attempt=*/false, 9000);
  m.TaskStarted(TaskKind::kAgent, /*first_attempt=*/true, -5);  // Clock step.
  m.TaskEnded(TaskKind::kShell, TaskStatus::kFailed);
  EXPECT_EQ(m.started(TaskKind::kShell), 2u);
  EXPECT_EQ(m.started(TaskKind::kAgent), 1u);
  EXPECT_EQ(m.ended(TaskKind::kShell, TaskStatus::kFailed), 1u);
  EXPECT_EQ(m.ended(TaskKind::kShell, TaskStatus::kCompleted), 0u);
  EXPECT_EQ(m.queue_wait().count(), 2u);
  EXPECT_DOUBLE_EQ(m.queue_wait().sum(), 2.5);
}

TEST(DaemonMetrics, UsageAddsWhatGrewPerProfile) {
  DaemonMetrics m;
  AgentUsage none;
  AgentUsage first{
      .input_tokens = 100, .output_tokens = 10, .cost_usd = 0.5, .turns = 1};
  AgentUsage second{
      .input_tokens = 250, .output_tokens = 30, .cost_usd = 0.75, .turns = 2};
  m.UsageMoved("claude", none, first);
  m.UsageMoved("claude", first, second);
  m.UsageMoved("codex", none, first);
  // A new attempt reports from 0 again: nothing is taken back.
  m.UsageMoved("codex", first, none);
  const AgentSpend& claude = m.agents().at("claude");
  EXPECT_EQ(claude.input_tokens, 250);
  EXPECT_EQ(claude.output_tokens, 30);
  EXPECT_EQ(claude.turns, 2);
  EXPECT_DOUBLE_EQ(claude.cost_usd, 0.75);
  EXPECT_EQ(m.agents().at("codex").input_tokens, 100);
}

}  // namespace
}  // namespace baton
