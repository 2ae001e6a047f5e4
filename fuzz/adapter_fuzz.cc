// Fuzzes one agent adapter (agent/adapter.h), named by kFuzzedAdapter
// ("claude", "codex", "codex-exec", "acp", "command"; one target each,
// fuzz/CMakeLists.txt). The input is what the agent CLI prints, one line at
// a time, with the director's actions between the lines. A line that starts
// with the byte 0x01 is an action instead:
//   \x01f TEXT  a follow-up     \x01s TEXT  a steer     \x01i  an interrupt
//   \x01a       answer the last question (first option, or text)
//   \x01k       answer the last question by skipping each item
// The adapter's contract is checked on the way: every event is an object
// with a string "type", every line for the CLI is one line of JSON, and
// nothing throws.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/agent/adapter.h"
#include "baton/util/json_fields.h"
#include "fuzz/fuzz_checks.h"

// Defined by each target's one-line source.
extern const char* const kFuzzedAdapter;

namespace {

using baton::Json;

class CheckingSink : public baton::AdapterSink {
 public:
  void Emit(Json event) override {
    FUZZ_CHECK(event.is_object(), "an event is an object");
    auto type = event.find("type");
    FUZZ_CHECK(type != event.end() && type->is_string(),
               "an event has a string type");
    // The runtime writes events to events.jsonl this way.
    std::string line =
        event.dump(-1, ' ', false, Json::error_handler_t::replace);
    FUZZ_CHECK(baton::fuzz::IsOneJsonLine(line), "an event is one line");
    if (*type == "question")
      last_question = std::move(event);
  }
  void WriteLine(std::string line) override {
    if (std::string_view(kFuzzedAdapter) != "command") {
      FUZZ_CHECK(baton::fuzz::IsOneJsonLine(line),
                 "a line for the CLI is one line of JSON");
    }
  }
  void TurnEnded() override {}

  std::optional<Json> last_question;
};

void AnswerLast(baton::AgentAdapter& adapter, CheckingSink& sink, bool skip) {
  if (!sink.last_question)
    return;
  Json question = *sink.last_question;
  const Json& items = question.value("items", Json::array());
  // The runtime answers each item; a question of thousands of items is
  // not worth the time here.
  if (!items.is_array() || items.size() > 64)
    return;
  std::vector<baton::ItemAnswer> answers(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (skip) {
      answers[i].skipped = true;
      continue;
    }
    const Json& options = items[i].is_object()
                              ? items[i].value("options", Json::array())
                              : Json::array();
    if (options.is_array() && !options.empty() && options[0].is_object() &&
        options[0].value("label", Json()).is_string()) {
      answers[i].labels.push_back(options[0]["label"].get<std::string>());
    } else {
      answers[i].text = "fuzz answer";
    }
  }
  (void)adapter.Answer(question, answers, sink);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<baton::AdapterKind> kind =
      baton::EnumFromName<baton::AdapterKind>(kFuzzedAdapter);
  FUZZ_CHECK(kind.has_value(), "the adapter exists");
  std::unique_ptr<baton::AgentAdapter> adapter = baton::MakeAdapter(*kind);
  CheckingSink sink;
  baton::AgentSpec spec;
  spec.profile = kFuzzedAdapter;
  spec.adapter = *kind;
  spec.brief = "fuzz the adapter";
  adapter->Begin(spec, "/fuzz", sink);

  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (!input.empty()) {
    size_t end = input.find('\n');
    std::string_view line = input.substr(0, end);
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
    if (line.size() >= 2 && line[0] == '\x01') {
      std::string_view text = line.substr(2);
      switch (line[1]) {
        case 'f':
          (void)adapter->Send(text, baton::SendMode::kFollowup, sink);
          break;
        case 's':
          (void)adapter->Send(text, baton::SendMode::kSteer, sink);
          break;
        case 'i':
          adapter->Interrupt(sink);
          break;
        case 'a':
          AnswerLast(*adapter, sink, false);
          break;
        case 'k':
          AnswerLast(*adapter, sink, true);
          break;
      }
      continue;
    }
    adapter->OnLine(line, sink);
  }
  (void)adapter->verdict();
  // The CLI's stderr is parsed too, when it failed without a verdict.
  (void)adapter->ExplainExit(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
