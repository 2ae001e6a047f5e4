// Handlers of the queue requests (doc/scheduling.md): queue_set makes or
// changes a queue, queue_list lists them. The registry keeps the queues;
// a change is committed with its batch, before the reply.
#include <cmath>

#include "baton/daemon/daemon.h"

namespace baton {
namespace {

QueueInfo InfoOf(const QueueView& view) {
  return QueueInfo{.name = view.record.name,
                   .max_running = view.record.max_running,
                   .paused = view.record.paused,
                   .running = view.running,
                   .queued = view.queued,
                   .limits = view.record.limits.any()
                                 ? std::optional(view.record.limits)
                                 : std::nullopt};
}

}  // namespace

void Daemon::Handle(Connection& connection, const QueueSetRequest& request,
                    Session session, Reply reply) {
  QueueChange change{.kind = request.create ? QueueChange::Kind::kAdd
                                            : QueueChange::Kind::kSet,
                     .name = request.name,
                     .max_running = request.max_running,
                     .paused = request.paused,
                     .memory_bytes = request.memory_bytes,
                     .pids = request.pids};
  if (request.cpus)
    change.cpu_millis = std::llround(*request.cpus * 1000);
  auto changed = registry_->ChangeQueue(change);
  if (!changed)
    return reply(std::unexpected(changed.error()));
  AuditRecord audit = AuditOf(connection, session, "queue_set");
  audit.detail = EncodeObject(request);  // Exactly what it asked.
  registry_->audit().Record(std::move(audit), /*with_batch=*/true);
  reply(QueueReply{.queue = InfoOf(*changed)});
}

void Daemon::Handle(Connection&, const QueueListRequest&, Session,
                    Reply reply) {
  QueueListReply answer;
  for (const QueueView& view : registry_->Queues())
    answer.queues.push_back(InfoOf(view));
  reply(answer);
}

}  // namespace baton
