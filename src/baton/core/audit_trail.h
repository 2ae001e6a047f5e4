// The audit trail's writer (doc/audit.md): a record per control action,
// stamped with the time and written in the store's batch, so that a record
// exists exactly when its action took effect. It owns the records of the
// batch it may have to take back.
#ifndef BATON_CORE_AUDIT_TRAIL_H_
#define BATON_CORE_AUDIT_TRAIL_H_

#include <cstdint>
#include <vector>

#include "baton/core/audit.h"
#include "baton/core/ports.h"
#include "baton/util/clock.h"

namespace baton {

class AuditTrail {
 public:
  // Borrows both; they must outlive it.
  AuditTrail(TaskStore* store, const Clock* clock)
      : store_(store), clock_(clock) {}

  // `record`, with its who, what and why, stamped with the time, goes into
  // this batch. `with_batch`: a failed commit takes it back, as it takes
  // back the action (a start, a kill, a queue's or a budget's change);
  // otherwise it stays for the next commit (a message already delivered
  // stays sent). A record the store cannot take is logged: the action
  // stands.
  void Record(AuditRecord record, bool with_batch);
  Result<std::vector<AuditRecord>> List(const AuditQuery& query) {
    return store_->ListAudit(query);
  }

  // The batch was committed: nothing of it is taken back any more.
  void Committed() { kept_.clear(); }
  // The batch's commit failed and the store dropped it (DropBatch): its
  // `with_batch` records are gone with it, the others are appended again,
  // into the next batch.
  void RollBack();

 private:
  void Append(const AuditRecord& record);

  TaskStore* store_;
  const Clock* clock_;
  // This batch's records that stay if its commit fails.
  std::vector<AuditRecord> kept_;
};

}  // namespace baton

#endif  // BATON_CORE_AUDIT_TRAIL_H_
