// Sinks for adapter tests: one that records what an adapter emits and
// writes, and one that drops everything, as the agent runtime gives an
// adapter it rebuilds after a restart.
#ifndef BATON_TESTS_SUPPORT_ADAPTER_SINKS_H_
#define BATON_TESTS_SUPPORT_ADAPTER_SINKS_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

// The transcripts of the real agent CLIs (tests/agents/transcripts).
inline std::filesystem::path TranscriptDir() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "tests/agents/transcripts";
}

// What `adapter`, begun with `spec` in "/w", makes of every line of the
// transcript `name` (TranscriptDir()/NAME.jsonl), recorded by another
// client whose request ids are plain integers.
inline RecordingSink ReplayTranscript(AgentAdapter& adapter,
                                      const std::string& name,
                                      const AgentSpec& spec = {}) {
  RecordingSink sink;
  adapter.Begin(spec, "/w", sink);
  std::ifstream in(TranscriptDir() / (name + ".jsonl"));
  EXPECT_TRUE(in.good()) << name;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty())
      adapter.OnLine(line, sink);
  }
  return sink;
}

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_ADAPTER_SINKS_H_
