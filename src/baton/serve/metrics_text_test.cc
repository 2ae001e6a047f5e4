#include "baton/serve/metrics_text.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

namespace baton::serve {
namespace {

MetricsReply Sample() {
  MetricsReply m;
  m.tasks = {{"shell", "running", 2}, {"agent", "waiting", 1}};
  m.queues = {{"default", 0, 2}, {"gpu", 3, 1}};
  m.executors = {{"local", 2}, {"slurm", 1}};
  m.started = {{"shell", "", 7}};
  m.ended = {{"shell", "completed", 4}, {"shell", "failed", 1}};
  m.agents = {{"claude", 1200, 300, 4, 0.25}};
  m.redactions = {{"github-token", 2}};
  m.budgets = {{"we\"ird\\name\n", "tokens", 5000}};
  m.wake.bounds = {0.001, 0.01, 0.1};
  m.wake.buckets = {3, 0, 2, 1};  // Per bucket, then above 0.1.
  m.wake.sum = 0.5;
  m.wake.count = 6;
  m.queue_wait.bounds = {1, 10};
  m.queue_wait.buckets = {0, 0, 0};
  m.supervisor_restarts = 1;
  m.rss_bytes = 12345678;
  m.connections = 3;
  m.open_waits = 2;
  m.uptime_ms = 1500;
  return m;
}

bool Has(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line)
      return true;
  }
  return false;
}

TEST(MetricsText, SamplesCarryTheirLabelsAndValues) {
  std::string text = FormatMetrics(Sample());
  EXPECT_TRUE(Has(text, "# TYPE baton_tasks gauge")) << text;
  EXPECT_TRUE(Has(text, R"(baton_tasks{kind="shell",status="running"} 2)"));
  EXPECT_TRUE(Has(text, R"(baton_tasks{kind="agent",status="waiting"} 1)"));
  EXPECT_TRUE(Has(text, R"(baton_queued_tasks{queue="gpu"} 3)"));
  EXPECT_TRUE(Has(text, R"(baton_queue_running_tasks{queue="default"} 2)"));
  EXPECT_TRUE(Has(text, R"(baton_running_tasks{executor="slurm"} 1)"));
  EXPECT_TRUE(Has(text, "# TYPE baton_tasks_started_total counter"));
  EXPECT_TRUE(Has(text, R"(baton_tasks_started_total{kind="shell"} 7)"));
  EXPECT_TRUE(
      Has(text, R"(baton_tasks_ended_total{kind="shell",status="failed"} 1)"));
  EXPECT_TRUE(Has(
      text, R"(baton_agent_tokens_total{agent="claude",type="input"} 1200)"));
  EXPECT_TRUE(Has(
      text, R"(baton_agent_tokens_total{agent="claude",type="output"} 300)"));
  EXPECT_TRUE(Has(text, R"(baton_agent_turns_total{agent="claude"} 4)"));
  EXPECT_TRUE(Has(text, R"(baton_agent_cost_usd_total{agent="claude"} 0.25)"));
  EXPECT_TRUE(Has(text, R"(baton_redactions_total{kind="github-token"} 2)"));
  EXPECT_TRUE(Has(text, "baton_supervisor_restarts_total 1"));
  EXPECT_TRUE(Has(text, "baton_daemon_resident_memory_bytes 12345678"));
  EXPECT_TRUE(Has(text, "baton_daemon_connections 3"));
  EXPECT_TRUE(Has(text, "baton_open_waits 2"));
  EXPECT_TRUE(Has(text, "baton_daemon_uptime_seconds 1.5"));
}

TEST(MetricsText, LabelValuesAreEscaped) {
  std::string text = FormatMetrics(Sample());
  EXPECT_TRUE(Has(text,
                  "baton_session_budget_remaining{session="
                  "\"we\\\"ird\\\\name\\n\",resource=\"tokens\"} 5000"))
      << text;
}

TEST(MetricsText, HistogramsAreCumulativeWithInfSumAndCount) {
  std::string text = FormatMetrics(Sample());
  EXPECT_TRUE(Has(text, "# TYPE baton_wake_seconds histogram"));
  EXPECT_TRUE(Has(text, R"(baton_wake_seconds_bucket{le="0.001"} 3)")) << text;
  EXPECT_TRUE(Has(text, R"(baton_wake_seconds_bucket{le="0.01"} 3)"));
  EXPECT_TRUE(Has(text, R"(baton_wake_seconds_bucket{le="0.1"} 5)"));
  EXPECT_TRUE(Has(text, R"(baton_wake_seconds_bucket{le="+Inf"} 6)"));
  EXPECT_TRUE(Has(text, "baton_wake_seconds_sum 0.5"));
  EXPECT_TRUE(Has(text, "baton_wake_seconds_count 6"));
  EXPECT_TRUE(Has(text, R"(baton_queue_wait_seconds_bucket{le="10"} 0)"));
  EXPECT_TRUE(Has(text, R"(baton_queue_wait_seconds_bucket{le="+Inf"} 0)"));
}

// Every line is a HELP, a TYPE or a sample of the family the last TYPE
// named, and each family is described once.
TEST(MetricsText, EveryLineIsWellFormed) {
  std::string text = FormatMetrics(Sample());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::regex help(R"(# HELP ([a-z_]+) \S.*)");
  std::regex type(R"(# TYPE ([a-z_]+) (gauge|counter|histogram))");
  std::regex sample(
      R"re(([a-z_]+)(\{([a-z_]+="([^"\\\n]|\\[\\"n])*",?)+\})? -?[0-9.e+-]+)re");
  std::istringstream in(text);
  std::string family;
  std::set<std::string> seen;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      EXPECT_TRUE(seen.insert(m[1]).second) << "twice: " << line;
      family = m[1];
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], family) << line;
    } else {
      ASSERT_TRUE(std::regex_match(line, m, sample)) << line;
      EXPECT_TRUE(m[1].str().starts_with(family)) << line;
    }
  }
}

}  // namespace
}  // namespace baton::serve
