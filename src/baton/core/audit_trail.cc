#include "baton/core/audit_trail.h"

#include "baton/util/log.h"

namespace baton {

void AuditTrail::Record(AuditRecord record, bool with_batch) {
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
  if (with_batch)
    batch_.push_back(key);
}

void AuditTrail::RollBack() {
  for (uint64_t key : batch_)
    store_->RevertAudit(key);
  batch_.clear();
}

}  // namespace baton
