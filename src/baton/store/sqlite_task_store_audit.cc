// SqliteTaskStore's audit trail (core/audit.h, doc/audit.md): records
// appended to the batch, written with it, read back newest first. Split
// from sqlite_task_store.cc, which holds everything else.
#include <fmt/format.h>

#include <algorithm>

#include "baton/store/sqlite_task_store.h"

namespace baton {

namespace {

constexpr char kAuditColumns[] =
    "seq, at_ms, action, task, session, client, uid, pid, detail, reason";

AuditRecord ReadAudit(const Statement& s) {
  return AuditRecord{.seq = s.ColumnInt(0),
                     .at_ms = s.ColumnInt(1),
                     .action = s.ColumnText(2),
                     .task = s.ColumnText(3),
                     .session = s.ColumnText(4),
                     .client = s.ColumnText(5),
                     .uid = s.ColumnInt(6),
                     .pid = s.ColumnInt(7),
                     .detail = s.ColumnText(8),
                     .reason = s.ColumnText(9)};
}

bool Matches(const AuditRecord& record, const AuditQuery& query) {
  return (query.task.empty() || record.task == query.task) &&
         record.at_ms >= query.since_ms;
}

}  // namespace

Status SqliteTaskStore::LoadAudit() {
  auto max_seq = db_.QueryInt("SELECT coalesce(max(seq), 0) FROM audit");
  if (!max_seq)
    return std::unexpected(std::move(max_seq.error()));
  next_audit_seq_ = *max_seq + 1;
  // The trail keeps its newest records; the rest go at start-up, in one
  // statement (the seq is the rowid: a range delete).
  if (*max_seq > kAuditRecordsKept) {
    return db_.Exec(fmt::format("DELETE FROM audit WHERE seq <= {}",
                                *max_seq - kAuditRecordsKept),
                    "trimming the audit trail");
  }
  return {};
}

Status SqliteTaskStore::AppendAudit(const AuditRecord& record, uint64_t* key) {
  StartWrite();
  AuditRecord& pending = pending_audit_[next_audit_seq_];
  pending = record;
  pending.seq = next_audit_seq_;
  audit_journal_.push_back(next_audit_seq_);
  *key = static_cast<uint64_t>(next_audit_seq_++);
  return {};
}

Result<std::vector<AuditRecord>> SqliteTaskStore::ListAudit(
    const AuditQuery& query) {
  size_t limit = std::max<size_t>(query.limit, 1);
  std::vector<AuditRecord> newest_first;
  // Pending records are the newest.
  for (auto it = pending_audit_.rbegin();
       it != pending_audit_.rend() && newest_first.size() < limit; ++it) {
    if (Matches(it->second, query))
      newest_first.push_back(it->second);
  }
  if (newest_first.size() < limit) {
    std::string sql = fmt::format(
        "SELECT {} FROM audit WHERE {}at_ms >= ?2 ORDER BY seq DESC "
        "LIMIT ?3",
        kAuditColumns, query.task.empty() ? "" : "task = ?1 AND ");
    auto read = ForEachRow(
        sql,
        [&](Statement& s) {
          if (!query.task.empty())
            s.BindText(1, query.task);
          s.BindInt(2, query.since_ms);
          s.BindInt(3, static_cast<int64_t>(limit - newest_first.size()));
        },
        [&](const Statement& s) -> Status {
          newest_first.push_back(ReadAudit(s));
          return {};
        },
        "reading the audit trail");
    if (!read)
      return std::unexpected(std::move(read.error()));
  }
  std::reverse(newest_first.begin(), newest_first.end());
  return newest_first;
}

Status SqliteTaskStore::WriteAudit() {
  if (pending_audit_.empty())
    return {};
  auto stmt = db_.Prepare(
      fmt::format("INSERT INTO audit ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                  "?7, ?8, ?9, ?10)",
                  kAuditColumns));
  if (!stmt)
    return std::unexpected(std::move(stmt.error()));
  for (const auto& [seq, record] : pending_audit_) {
    Statement& s = **stmt;
    s.BindInt(1, record.seq);
    s.BindInt(2, record.at_ms);
    s.BindText(3, record.action);
    s.BindText(4, record.task);
    s.BindText(5, record.session);
    s.BindText(6, record.client);
    s.BindInt(7, record.uid);
    s.BindInt(8, record.pid);
    s.BindText(9, record.detail);
    s.BindText(10, record.reason);
    if (auto done = s.Run(); !done)
      return done;
    s.Reset();
  }
  return {};
}

}  // namespace baton
