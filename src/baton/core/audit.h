// The audit trail (doc/audit.md): each control action on tasks or on
// batond, who did it, when, what and why. batond writes a record in the
// same commit as the action, so a record exists exactly when the action
// took effect.
#ifndef BATON_CORE_AUDIT_H_
#define BATON_CORE_AUDIT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

// The client kind of batond's own actions (a lease that ran out).
inline constexpr char kAuditByBatond[] = "batond";

// The longest `detail` kept: a command, a message or a brief is cut there
// (with "…"); the task itself keeps the whole.
inline constexpr size_t kMaxAuditDetailBytes = 300;

// How many records the trail keeps: the oldest beyond it go when batond
// starts (some 20 MB of database at 200 bytes a record).
inline constexpr int64_t kAuditRecordsKept = 100'000;

struct AuditRecord {
  int64_t seq = 0;  // Its place in the trail, from 1; 0 until stored.
  int64_t at_ms = 0;
  // What: run, delegate, kill, send, steer, withdraw, replace, answer,
  // queue_set, budget, shutdown, lease_expired.
  std::string action;
  std::string task;  // The task it acted on; "" for batond or a queue.
  // Who: the session (owner) it came from ("" = none), the client kind
  // (cli, mcp, mcp-http, board, batond, or another program's file name,
  // daemon/client_kind.h), and the peer's uid and pid as the socket saw
  // them (SO_PEERCRED).
  std::string session;
  std::string client;
  int64_t uid = -1;
  int64_t pid = 0;
  std::string detail;  // What exactly: the command, the signal, the answer.
  std::string reason;  // Why, when it was given (a kill's reason).

  template <class V>
  void Fields(V& v) {
    v("seq", seq, {.doc = "its place in the trail, from 1"});
    v("at_ms", at_ms, {.doc = "when, in ms since the epoch"});
    v("action", action,
      {.doc = "`run`, `delegate`, `kill`, `send`, `steer`, `withdraw`, "
              "`replace`, `answer`, `queue_set`, `budget`, `shutdown`, "
              "`lease_expired`"});
    v("task", task, {.omit_when_empty = true, .doc = "the task acted on"});
    v("session", session,
      {.omit_when_empty = true, .doc = "the session it came from"});
    v("client", client,
      {.doc = "`cli`, `mcp`, `mcp-http`, `board`, `batond`, or another "
              "program's file name"});
    v("uid", uid, {.doc = "the client's uid (SO_PEERCRED)"});
    v("pid", pid, {.doc = "the client's pid (SO_PEERCRED); 0 unknown"});
    v("detail", detail, {.omit_when_empty = true, .doc = "what exactly"});
    v("reason", reason, {.omit_when_empty = true, .doc = "why, if given"});
  }
};

// Which records to read: the newest `limit` of those that match, returned
// oldest first.
struct AuditQuery {
  std::string task;      // Only this task's; "" = all.
  int64_t since_ms = 0;  // Only those at or after; 0 = all.
  size_t limit = 100;    // At least 1.
};

// `text` cut to kMaxAuditDetailBytes on a UTF-8 boundary, with "…" when
// it was cut.
std::string AuditDetail(std::string_view text);

}  // namespace baton

#endif  // BATON_CORE_AUDIT_H_
