// The events file of one agent task, tasks/<id>/events.jsonl: its
// normalized events, numbered, one JSON object a line. `baton events` reads
// it and a restarted batond replays from it (doc/agents.md), so a failed
// append is reported, never ignored: it is logged, and the next append that
// succeeds first records an error event naming the events that are
// missing. Single-threaded.
#ifndef BATON_DAEMON_AGENT_EVENT_LOG_H_
#define BATON_DAEMON_AGENT_EVENT_LOG_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/util/result.h"
#include "baton/util/unique_fd.h"

namespace baton {

// Every event in the file at `path` that parses as a JSON object, in order
// (a torn or foreign line is skipped); none when the file is missing.
std::vector<nlohmann::json> ReadAgentEvents(const std::string& path);

class AgentEventLog {
 public:
  // Not open: every append fails.
  AgentEventLog() = default;
  AgentEventLog(AgentEventLog&&) = default;
  AgentEventLog& operator=(AgentEventLog&&) = default;
  // Appends to `fd` (owned), numbering after `last_seq`, the highest seq
  // already in the file. `name` says which log it is in messages.
  AgentEventLog(UniqueFd fd, int64_t last_seq, std::string name);

  // Opens `path` for appending (created 0600), after the events already
  // there. A file that cannot be opened is logged and gives a log whose
  // appends fail.
  static AgentEventLog Open(const std::string& path, int64_t last_seq);

  // Numbers `event` ("seq", the next number; "at", now) and appends it as
  // one line. On failure the number stays used, the failure is logged (the
  // first of a run of failures; the next success says how many were
  // lost), and the error says what could not be written. After a failure,
  // the next successful append first ends a torn line and records
  // {"type":"error","source":"batond","message":"...","lost":[from, to]}.
  Status Append(nlohmann::json& event);

  int64_t last_seq() const { return last_seq_; }
  // An append failed and none succeeded since.
  bool failing() const { return lost_from_ != 0; }

 private:
  Status Write(const nlohmann::json& event);

  UniqueFd fd_;
  int64_t last_seq_ = 0;
  std::string name_ = "events.jsonl";
  std::string open_error_ = "not open";  // Why fd_ is not set.
  // The events lost since the last append that succeeded: seqs [from, to]
  // and why; lost_from_ 0 when none.
  int64_t lost_from_ = 0;
  int64_t lost_to_ = 0;
  std::string lost_why_;
};

}  // namespace baton

#endif  // BATON_DAEMON_AGENT_EVENT_LOG_H_
