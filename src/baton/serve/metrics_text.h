// /metrics of `baton serve` (doc/metrics.md): batond's `metrics` snapshot
// in the Prometheus text exposition format (version 0.0.4), and the route
// that asks batond for it at each scrape.
#ifndef BATON_SERVE_METRICS_TEXT_H_
#define BATON_SERVE_METRICS_TEXT_H_

#include <memory>
#include <string>
#include <string_view>

#include "baton/ipc/async_daemon_client.h"
#include "baton/ipc/messages.h"
#include "baton/loop/event_loop.h"
#include "baton/serve/http_server.h"
#include "baton/util/state_paths.h"

namespace baton::serve {

inline constexpr std::string_view kMetricsContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// The snapshot as the exposition format: each family's HELP and TYPE, then
// its samples; histograms cumulative with `le` and `+Inf`, `_sum` and
// `_count`. Label values escaped (backslash, quote, newline).
std::string FormatMetrics(const MetricsReply& metrics);

// GET /metrics: asks batond (its own connection, opened at the first
// scrape and again after it closed; batond started when none runs) and
// answers with FormatMetrics; 503 when batond cannot be reached, 405 for
// another method. The gate checked the token before (serve.cc).
class MetricsRoute {
 public:
  MetricsRoute(EventLoop* loop, StatePaths paths)
      : loop_(loop), paths_(paths) {}
  void Handle(const HttpRequest& request, const ExchangePtr& exchange);

 private:
  EventLoop* loop_;
  StatePaths paths_;
  std::unique_ptr<AsyncDaemonClient> daemon_;
};

}  // namespace baton::serve

#endif  // BATON_SERVE_METRICS_TEXT_H_
