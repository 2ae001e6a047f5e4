#include "baton/core/audit_trail.h"

#include <utility>

#include "baton/util/log.h"

namespace baton {

void AuditTrail::Record(AuditRecord record, bool with_batch) {
  record.at_ms = clock_->WallNowMillis();
  record.detail = AuditDetail(record.detail);
  record.reason = AuditDetail(record.reason);
  Append(record);
  if (!with_batch)
    kept_.push_back(std::move(record));
}

void AuditTrail::RollBack() {
  // Kept for the next batch too: it may fail as well.
  for (const AuditRecord& record : kept_)
    Append(record);
}

void AuditTrail::Append(const AuditRecord& record) {
  uint64_t key = 0;
  if (auto appended = store_->AppendAudit(record, &key); !appended) {
    // The action stands: an audit that cannot be kept must not undo it.
    BATON_LOG_ERROR("audit record of {} {} not kept: {}", record.action,
                    record.task, appended.error().message);
  }
}

}  // namespace baton
