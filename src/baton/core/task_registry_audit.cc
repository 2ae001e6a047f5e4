// TaskRegistry's audit trail (task_registry.h, Audit; doc/audit.md): a
// record per control action, in the batch of the action itself. Split
// from task_registry.cc, which holds everything else.
#include "baton/core/task_registry.h"
#include "baton/util/log.h"

namespace baton {

void TaskRegistry::Audit(AuditRecord record, bool with_batch) {
  record.at_ms = clock_->WallNowMillis();
  record.detail = AuditDetail(record.detail);
  record.reason = AuditDetail(record.reason);
  uint64_t key = 0;
  if (auto appended = store_->AppendAudit(record, &key); !appended) {
    // The action stands: an audit that cannot be kept must not undo it.
    BATON_LOG_ERROR("audit record of {} {} not kept: {}", record.action,
                    record.task, appended.error().message);
    return;
  }
  if (with_batch) {
    Undo undo(Undo::Kind::kAudit, TaskId{});
    undo.audit_key = key;
    undo_.push_back(std::move(undo));
  }
}

Result<std::vector<AuditRecord>> TaskRegistry::ListAudit(
    const AuditQuery& query) {
  return store_->ListAudit(query);
}

}  // namespace baton
