// Adapters turn an agent CLI's headless protocol into baton's normalized
// events (doc/agents.md: session, text, tool, question, result, error) and
// turn the director's messages, answers and interrupts into protocol lines.
// Pure protocol translation: an adapter does no I/O; what it wants written
// to the CLI's stdin goes to its AdapterSink.
#ifndef BATON_AGENT_ADAPTER_H_
#define BATON_AGENT_ADAPTER_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

using Json = nlohmann::json;

// Where an adapter's output goes. Events are JSON objects with a "type":
//   {"type":"session","session_id":...}
//   {"type":"text","text":...}
//   {"type":"tool","name":...,"input":<short text>}
//   {"type":"question","ref":<protocol id>,"kind":"ask"|"permission",
//    "items":[{"prompt","header","options":[{"label","description"}],
//              "multi_select"}]}
//   {"type":"result","ok":bool,"text":...,"detail":...,"cost_usd":...,
//    "usage":{...}}
//   {"type":"usage","input_tokens":N,"output_tokens":N,"turns":N,
//    "cost_usd":X (where the CLI reports a cost)}
//     the task's totals so far (AgentUsage), each time they change
//   {"type":"error","message":...}
//   {"type":"question_withdrawn","ref":<the question's ref>,"reason":...}
//     the CLI itself resolved or dropped a question it asked (Claude's
//     control_cancel_request, codex's serverRequest/resolved, a turn that
//     ended with a request unanswered). Adapters emit it from the stream
//     alone, also for questions that were answered meanwhile; the runtime
//     closes the question only if it is still open.
class AdapterSink {
 public:
  virtual ~AdapterSink() = default;
  virtual void Emit(Json event) = 0;
  // One line for the CLI's stdin ('\n' is added).
  virtual void WriteLine(std::string line) = 0;
  // The current turn ended (a result came): the runtime sends a queued
  // follow-up or lets the worker finish.
  virtual void TurnEnded() = 0;
};

// One item's answer, already matched against the question's options.
struct ItemAnswer {
  bool skipped = false;
  std::vector<std::string> labels;  // Chosen options (several if multi).
  std::string text;                 // Free text, when no option fits.
};

class AgentAdapter {
 public:
  virtual ~AgentAdapter() = default;

  // The command line: `command` (the profile's, e.g. {"claude"}) plus the
  // protocol's flags, the model and the session to resume.
  virtual std::vector<std::string> Argv(const std::vector<std::string>& command,
                                        const AgentSpec& spec) const = 0;
  // True when the CLI reads a stream of lines on stdin (a FIFO that stays
  // open); false when it reads the brief as a file, then EOF.
  virtual bool interactive() const = 0;
  // Right after the spawn: the handshake and the brief.
  virtual void Begin(const AgentSpec& spec, const std::string& cwd,
                     AdapterSink& sink) = 0;
  // One line of the CLI's stdout. Unknown or malformed lines are tolerated
  // (ignored, or an error event for garbage), never fatal.
  virtual void OnLine(std::string_view line, AdapterSink& sink) = 0;
  // A message from the director. kFollowup is only called between turns
  // (the runtime queues it until TurnEnded); kSteer goes into the running
  // turn, or fails with kInvalidArgument where the protocol cannot.
  virtual Status Send(std::string_view message, SendMode mode,
                      AdapterSink& sink) = 0;
  virtual bool can_steer() const = 0;
  // Answers `question` (an event this adapter emitted), one entry per item.
  virtual Status Answer(const Json& question,
                        const std::vector<ItemAnswer>& answers,
                        AdapterSink& sink) = 0;
  // Asks the CLI to stop the running turn (what a kill does first).
  virtual void Interrupt(AdapterSink& sink) = 0;
  // The status and detail the last result means, if a result came.
  virtual std::optional<std::pair<TaskStatus, std::string>> verdict() const = 0;
  // When the CLI failed without a verdict: a clearer detail than its last
  // stderr line, from the whole of its stderr; "" when there is none.
  virtual std::string ExplainExit(std::string_view /*stderr_text*/) const {
    return "";
  }
};

// What a worker spent, summed from its CLI's reports (each adapter knows
// which of its lines carry them, doc/agents.md "Budgets"); Report emits a
// "usage" event with the totals when they changed since the last one.
class UsageTally {
 public:
  AgentUsage& totals() { return totals_; }
  void Add(int64_t input_tokens, int64_t output_tokens) {
    totals_.input_tokens = AddCounts(totals_.input_tokens, input_tokens);
    totals_.output_tokens = AddCounts(totals_.output_tokens, output_tokens);
  }
  void Report(AdapterSink& sink);

  // A count as a CLI reports it, from untrusted input: missing, mistyped
  // or negative is 0, and counts (and sums of them) saturate far below
  // overflow.
  static int64_t CountAt(const Json& object, std::string_view key);
  static int64_t AddCounts(int64_t a, int64_t b);

 private:
  AgentUsage totals_;
  AgentUsage reported_;
};

// A question event's item from a CLI's question in the shape Claude Code
// and codex share (`question`, `header`, `options`: [{label, description}]).
Json AskItem(const Json& question, bool multi_select);

// A new adapter of `kind`, at the start of a CLI's stream.
std::unique_ptr<AgentAdapter> MakeAdapter(AdapterKind kind);

// How deeply a CLI's line may nest objects and lists: deeper than any real
// message (a tool's input nests a few levels), shallow enough that every
// walk of the tree (an id echoed back is dumped) stays far from the
// stack's end.
inline constexpr size_t kMaxStreamLineDepth = 256;

// One line of a CLI's stdout as a JSON object. Anything else (not JSON, not
// an object, nested deeper than kMaxStreamLineDepth) becomes an "error"
// event naming `who`, why, and the line's start (never fatal), and nullopt.
std::optional<Json> ParseStreamLine(std::string_view line, std::string_view who,
                                    AdapterSink& sink);

// A message for the CLI's stdin as one line of compact JSON. Invalid UTF-8
// (a director's text may hold any bytes) is replaced, so it never throws.
std::string ToLine(const Json& message);

// The short form of a tool input for a "tool" event: a command line, a
// path, or compact JSON, at most `max` characters.
std::string ShortToolInput(const Json& input, size_t max = 160);

}  // namespace baton

#endif  // BATON_AGENT_ADAPTER_H_
