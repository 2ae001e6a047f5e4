// The audit trail's side of batond (doc/audit.md): who a request came
// from, for the records the other handlers write, and the `audit` request
// that reads them.
#include "baton/core/sessions.h"
#include "baton/daemon/client_kind.h"
#include "baton/daemon/daemon.h"

namespace baton {

AuditRecord Daemon::AuditOf(const Connection& connection, Session session,
                            std::string action, std::string task) {
  // `baton serve` holds both MCP over HTTP, whose every client has a
  // session of its own, and the board, whose session is a person's, "*"
  // (doc/board.md).
  if (!connection.client) {
    connection.client =
        connection.peer_pid > 0 ? ClientKindOf(connection.peer_pid) : "";
  }
  std::string client = *connection.client;
  if (client == "serve")
    client = IsPersonSession(session) ? "board" : "mcp-http";
  return AuditRecord{.action = std::move(action),
                     .task = std::move(task),
                     .session = session,
                     .client = std::move(client),
                     .uid = connection.peer_uid,
                     .pid = connection.peer_pid};
}

void Daemon::Handle(Connection&, const AuditRequest& request, Session,
                    Reply reply) {
  auto records =
      registry_->audit().List({.task = request.task,
                               .since_ms = request.since_ms,
                               .limit = static_cast<size_t>(request.limit)});
  if (!records)
    return reply(std::unexpected(records.error()));
  reply(AuditReply{.records = std::move(*records)});
}

}  // namespace baton
