// SqliteTaskStore's batches (core/ports.h, DropBatch): the journal of the
// writes since the last Flush(), and how a failed one's are taken back. Split
// from sqlite_task_store.cc, which holds everything else.
#include "baton/store/sqlite_task_store.h"

namespace baton {

namespace {

// The value under `key` in `pending`, nullopt when there is none.
template <class Map>
std::optional<typename Map::mapped_type> Pending(
    const Map& pending, const typename Map::key_type& key) {
  auto it = pending.find(key);
  if (it == pending.end())
    return std::nullopt;
  return it->second;
}

// Puts `key` in `pending` back to `before` (nullopt: absent).
template <class Map>
void Restore(Map& pending, const typename Map::key_type& key,
             const std::optional<typename Map::mapped_type>& before) {
  if (before) {
    pending.insert_or_assign(key, *before);
  } else {
    pending.erase(key);
  }
}

}  // namespace

void SqliteTaskStore::JournalTask(const TaskId& id) {
  task_journal_.try_emplace(id, Pending(pending_tasks_, id));
}

void SqliteTaskStore::JournalCounter(TaskKind kind) {
  counter_journal_.try_emplace(kind, Pending(pending_counters_, kind));
}

void SqliteTaskStore::JournalCursor(const std::pair<TaskId, std::string>& key) {
  cursor_journal_.try_emplace(key, Pending(pending_cursors_, key));
}

void SqliteTaskStore::ClearJournal() {
  task_journal_.clear();
  cursor_journal_.clear();
  counter_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
  land_journal_.clear();
  session_journal_.clear();
  audit_journal_.clear();
}

void SqliteTaskStore::StartWrite() {
  if (!batch_flushed_)
    return;
  batch_flushed_ = false;
  ClearJournal();
}

void SqliteTaskStore::DropBatch() {
  for (const auto& [session, before] : budget_journal_)
    Restore(pending_budgets_, session, before);
  for (const auto& [name, before] : queue_journal_)
    Restore(pending_queues_, name, before);
  for (const auto& [id, before] : land_journal_)
    Restore(pending_lands_, id, before);
  for (const auto& [key, before] : cursor_journal_)
    Restore(pending_cursors_, key, before);
  for (const std::string& session : session_journal_)
    pending_sessions_.erase(session);
  for (int64_t seq : audit_journal_)
    pending_audit_.erase(seq);
  for (const auto& [id, before] : task_journal_)
    Restore(pending_tasks_, id, before);
  // A task new in the batch keeps its number used here (last_numbers_):
  // only the counter's write goes, so a batch that created nothing else
  // leaves nothing to flush.
  for (const auto& [kind, before] : counter_journal_)
    Restore(pending_counters_, kind, before);
  ClearJournal();
}

}  // namespace baton
