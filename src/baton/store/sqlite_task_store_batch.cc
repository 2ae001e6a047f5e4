// SqliteTaskStore's batches (core/ports.h, RevertTask): the journal of the
// writes since the last Flush(), and the reverts after a failed one. Split
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

void SqliteTaskStore::StartWrite() {
  if (!batch_flushed_)
    return;
  batch_flushed_ = false;
  task_journal_.clear();
  cursor_journal_.clear();
  counter_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
}

void SqliteTaskStore::RevertSessionBudget(const std::string& session) {
  auto journal = budget_journal_.find(session);
  if (journal == budget_journal_.end())
    return;
  if (journal->second) {
    pending_budgets_[session] = *journal->second;
  } else {
    pending_budgets_.erase(session);
  }
  budget_journal_.erase(journal);
}

void SqliteTaskStore::RevertQueue(const std::string& name) {
  auto journal = queue_journal_.find(name);
  if (journal == queue_journal_.end())
    return;
  if (journal->second) {
    pending_queues_[name] = *journal->second;
  } else {
    pending_queues_.erase(name);
  }
  queue_journal_.erase(journal);
}

void SqliteTaskStore::RevertTask(const TaskId& id) {
  auto entry = task_journal_.find(id);
  if (entry == task_journal_.end())
    return;
  // New in the batch: neither buffered before it nor flushed ever.
  bool created = !entry->second && !live_seqs_.contains(id) &&
                 id.number > stored_numbers_[id.kind];
  Restore(pending_tasks_, id, entry->second);
  task_journal_.erase(entry);
  if (!created)
    return;
  // The number stays used here (last_numbers_ keeps it): only the
  // counter's write goes, so a batch that created nothing else leaves
  // nothing to flush.
  if (auto counter = counter_journal_.find(id.kind);
      counter != counter_journal_.end()) {
    Restore(pending_counters_, id.kind, counter->second);
  }
}

void SqliteTaskStore::RevertCursor(const TaskId& id,
                                   const std::string& reader) {
  auto entry = cursor_journal_.find({id, reader});
  if (entry == cursor_journal_.end())
    return;
  Restore(pending_cursors_, entry->first, entry->second);
  cursor_journal_.erase(entry);
}

}  // namespace baton
