// Sinks for adapter tests: one that records what an adapter emits and
// writes, and one that drops everything, as the agent runtime gives an
// adapter it rebuilds after a restart.
#ifndef BATON_TESTS_SUPPORT_ADAPTER_SINKS_H_
#define BATON_TESTS_SUPPORT_ADAPTER_SINKS_H_

#include <string>
#include <string_view>
#include <vector>

#include "baton/agent/adapter.h"

namespace baton::testing {

// Usage events (the worker's running totals, doc/agents.md "Budgets") go
// to `usages`, apart from the events a turn is made of.
struct RecordingSink : AdapterSink {
  void Emit(Json event) override {
    (event["type"] == "usage" ? usages : events).push_back(std::move(event));
  }
  void WriteLine(std::string line) override {
    lines.push_back(Json::parse(line));
  }
  void TurnEnded() override { ++turns_ended; }
  std::vector<Json> events;
  std::vector<Json> usages;
  std::vector<Json> lines;  // Parsed: every line must be JSON.
  int turns_ended = 0;
};

struct DroppingSink : AdapterSink {
  void Emit(Json) override {}
  void WriteLine(std::string) override {}
  void TurnEnded() override {}
};

// The events of `type` that `sink` recorded, in order.
inline std::vector<Json> OfType(const RecordingSink& sink,
                                std::string_view type) {
  std::vector<Json> out;
  for (const auto& event : sink.events) {
    if (event["type"] == type)
      out.push_back(event);
  }
  return out;
}

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_ADAPTER_SINKS_H_
