#include "baton/serve/metrics_text.h"

#include <fmt/format.h>

#include <initializer_list>
#include <utility>

namespace baton::serve {
namespace {

using Labels =
    std::initializer_list<std::pair<std::string_view, std::string_view>>;

// A label value with backslash, double quote and newline escaped, as the
// exposition format asks.
void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

class Writer {
 public:
  void Family(std::string_view name, std::string_view type,
              std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n",
                   name, help, name, type);
  }
  template <class T>
  void Sample(std::string_view name, Labels labels, T value) {
    out_ += name;
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (const auto& [key, label] : labels) {
        if (!first)
          out_ += ',';
        first = false;
        out_ += key;
        out_ += "=\"";
        AppendEscaped(out_, label);
        out_ += '"';
      }
      out_ += '}';
    }
    fmt::format_to(std::back_inserter(out_), " {}\n", value);
  }
  void Histogram(std::string_view name, std::string_view help,
                 const MetricsHistogram& histogram) {
    Family(name, "histogram", help);
    std::string bucket = fmt::format("{}_bucket", name);
    int64_t cumulative = 0;
    for (size_t i = 0; i < histogram.bounds.size(); ++i) {
      if (i < histogram.buckets.size())
        cumulative += histogram.buckets[i];
      std::string le = fmt::format("{}", histogram.bounds[i]);
      Sample(bucket, {{"le", le}}, cumulative);
    }
    // +Inf holds every observation: the count, as the format requires.
    Sample(bucket, {{"le", "+Inf"}}, histogram.count);
    Sample(fmt::format("{}_sum", name), {}, histogram.sum);
    Sample(fmt::format("{}_count", name), {}, histogram.count);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

std::string FormatMetrics(const MetricsReply& m) {
  Writer w;
  w.Family("baton_tasks", "gauge",
           "Live tasks (not ended) by kind and status.");
  for (const auto& t : m.tasks)
    w.Sample("baton_tasks", {{"kind", t.kind}, {"status", t.status}}, t.count);
  w.Family("baton_queued_tasks", "gauge",
           "Tasks held in each queue, not yet handed to an executor.");
  for (const auto& q : m.queues)
    w.Sample("baton_queued_tasks", {{"queue", q.queue}}, q.queued);
  w.Family("baton_queue_running_tasks", "gauge",
           "Tasks of each queue handed to an executor and not ended.");
  for (const auto& q : m.queues)
    w.Sample("baton_queue_running_tasks", {{"queue", q.queue}}, q.running);
  w.Family("baton_running_tasks", "gauge",
           "Live tasks of each executor that run, wait for an answer or "
           "stop.");
  for (const auto& e : m.executors)
    w.Sample("baton_running_tasks", {{"executor", e.executor}}, e.running);
  w.Family("baton_tasks_started_total", "counter",
           "Tasks handed to an executor since batond started (a retry "
           "counts again).");
  for (const auto& t : m.started)
    w.Sample("baton_tasks_started_total", {{"kind", t.kind}}, t.count);
  w.Family("baton_tasks_ended_total", "counter",
           "Tasks that ended since batond started, by kind and status.");
  for (const auto& t : m.ended) {
    w.Sample("baton_tasks_ended_total",
             {{"kind", t.kind}, {"status", t.status}}, t.count);
  }
  w.Family("baton_agent_tokens_total", "counter",
           "Tokens agent tasks reported since batond started, by profile "
           "and type (input, cached included; output).");
  for (const auto& a : m.agents) {
    w.Sample("baton_agent_tokens_total",
             {{"agent", a.agent}, {"type", "input"}}, a.input_tokens);
    w.Sample("baton_agent_tokens_total",
             {{"agent", a.agent}, {"type", "output"}}, a.output_tokens);
  }
  w.Family("baton_agent_turns_total", "counter",
           "Model turns agent tasks reported since batond started.");
  for (const auto& a : m.agents)
    w.Sample("baton_agent_turns_total", {{"agent", a.agent}}, a.turns);
  w.Family("baton_agent_cost_usd_total", "counter",
           "US dollars agent tasks reported spending since batond started "
           "(where the CLI reports a cost).");
  for (const auto& a : m.agents)
    w.Sample("baton_agent_cost_usd_total", {{"agent", a.agent}}, a.cost_usd);
  w.Family("baton_session_budget_remaining", "gauge",
           "What each session with a budget has left of each limit it sets.");
  for (const auto& b : m.budgets) {
    w.Sample("baton_session_budget_remaining",
             {{"session", b.session}, {"resource", b.resource}}, b.left);
  }
  w.Family("baton_redactions_total", "counter",
           "Secrets masked in task logs since batond started, by kind.");
  for (const auto& r : m.redactions)
    w.Sample("baton_redactions_total", {{"kind", r.kind}}, r.count);
  w.Family("baton_supervisor_restarts_total", "counter",
           "Supervisors lost (and replaced by one that adopts their tasks) "
           "since batond started.");
  w.Sample("baton_supervisor_restarts_total", {}, m.supervisor_restarts);
  w.Histogram("baton_wake_seconds",
              "From a task's end recorded by batond to the reply of a wait "
              "it answered written.",
              m.wake);
  w.Histogram("baton_queue_wait_seconds",
              "From a task's creation to its first hand-over to an executor.",
              m.queue_wait);
  w.Family("baton_daemon_resident_memory_bytes", "gauge",
           "batond's resident memory.");
  w.Sample("baton_daemon_resident_memory_bytes", {}, m.rss_bytes);
  w.Family("baton_daemon_connections", "gauge",
           "Client connections open at batond.");
  w.Sample("baton_daemon_connections", {}, m.connections);
  w.Family("baton_open_waits", "gauge", "Waits batond has not answered yet.");
  w.Sample("baton_open_waits", {}, m.open_waits);
  w.Family("baton_daemon_uptime_seconds", "gauge",
           "Seconds since batond started.");
  w.Sample("baton_daemon_uptime_seconds", {},
           static_cast<double>(m.uptime_ms) / 1000.0);
  return w.Take();
}

void MetricsRoute::Handle(const HttpRequest& request,
                          const ExchangePtr& exchange) {
  if (request.method != "GET") {
    return exchange->Respond(
        ErrorResponse(405, "Method Not Allowed: /metrics answers GET")
            .With("Allow", "GET"));
  }
  if (!daemon_ || daemon_->closed()) {
    DaemonClient::Options client;
    client.paths = paths_;
    // A person's session, as the board's: it owns nothing, so it leases
    // nothing (core/sessions.h).
    client.session = std::string(kPersonSession);
    auto opened = AsyncDaemonClient::Open(loop_, client, [](Notice) {});
    if (!opened) {
      return exchange->Respond(
          ErrorResponse(503, "Service Unavailable: cannot reach batond: " +
                                 opened.error().message));
    }
    daemon_ = std::move(*opened);
  }
  daemon_->Call(MetricsRequest{}, [exchange](Result<MetricsReply> reply) {
    if (!reply) {
      return exchange->Respond(
          ErrorResponse(503, "Service Unavailable: batond did not answer: " +
                                 reply.error().message));
    }
    HttpResponse response;
    response.headers = {{"Content-Type", std::string(kMetricsContentType)},
                        {"Cache-Control", "no-store"}};
    response.body = FormatMetrics(*reply);
    exchange->Respond(std::move(response));
  });
}

}  // namespace baton::serve
