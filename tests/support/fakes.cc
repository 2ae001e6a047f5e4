#include "tests/support/fakes.h"

#include <algorithm>
#include <set>
#include <utility>

#include "baton/core/sessions.h"

namespace baton::testing {

void InMemoryTaskStore::StartWrite() {
  if (!batch_flushed_)
    return;
  batch_flushed_ = false;
  task_journal_.clear();
  cursor_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
  audit_journal_.clear();
  session_journal_.clear();
}

void InMemoryTaskStore::DropBatch() {
  std::vector<TaskId> tasks_written;
  for (const auto& [id, before] : task_journal_)
    tasks_written.push_back(id);
  for (const TaskId& id : tasks_written)
    RevertTask(id);
  std::vector<CursorKey> cursors_written;
  for (const auto& [key, before] : cursor_journal_)
    cursors_written.push_back(key);
  for (const CursorKey& key : cursors_written)
    RevertCursor(key.first, key.second);
  std::vector<std::string> queues_written;
  for (const auto& [name, before] : queue_journal_)
    queues_written.push_back(name);
  for (const std::string& name : queues_written)
    RevertQueue(name);
  std::vector<std::string> budgets_written;
  for (const auto& [session, before] : budget_journal_)
    budgets_written.push_back(session);
  for (const std::string& session : budgets_written)
    RevertSessionBudget(session);
  for (uint64_t key : std::exchange(audit_journal_, {}))
    pending_audit_.erase(key);
  for (const std::string& session : std::exchange(session_journal_, {}))
    leased_.erase(session);
}

Result<int64_t> InMemoryTaskStore::NextTaskNumber(TaskKind kind) {
  // Never handed out twice, even when the task was reverted.
  return ++next_[kind];
}

Status InMemoryTaskStore::PutTask(const TaskRecord& task) {
  StartWrite();
  auto it = tasks.find(task.id);
  task_journal_.try_emplace(
      task.id, Before<TaskRecord>{
                   it == tasks.end() ? std::nullopt : std::optional(it->second),
                   dirty_tasks_.contains(task.id)});
  dirty_tasks_.insert(task.id);
  if (it == tasks.end())
    order.push_back(task.id);
  TaskRecord copy = task;
  if (!KeepsEnvironment(task))
    copy.spec.base_env.clear();  // Persisted only while it may start again.
  tasks[task.id] = copy;
  return {};
}

Status InMemoryTaskStore::Flush() {
  batch_flushed_ = true;
  if (fail_flush) {
    ++failed_flushes;
    return std::unexpected(*fail_flush);
  }
  flushed = tasks;
  flushed_cursors_ = cursors_;
  dirty_tasks_.clear();
  dirty_cursors_.clear();
  dirty_sessions_ = false;
  flushed_queues_ = queues;
  dirty_queues_ = false;
  flushed_budgets_ = budgets;
  for (auto& [key, record] : std::exchange(pending_audit_, {})) {
    record.seq = static_cast<int64_t>(audit.size()) + 1;
    audit.push_back(std::move(record));
  }
  task_journal_.clear();
  cursor_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
  audit_journal_.clear();
  session_journal_.clear();
  return {};
}

Status InMemoryTaskStore::DeleteTasks(const std::vector<TaskId>& ids) {
  for (const TaskId& id : ids) {
    if (dirty_tasks_.contains(id))
      return MakeError(ErrorCode::kInternal, id.ToString() + " is unsaved");
  }
  for (const TaskId& id : ids) {
    tasks.erase(id);
    flushed.erase(id);
    std::erase_if(cursors_, [&](const auto& c) { return c.first.first == id; });
    std::erase_if(flushed_cursors_,
                  [&](const auto& c) { return c.first.first == id; });
  }
  return {};
}

void InMemoryTaskStore::RevertTask(const TaskId& id) {
  auto entry = task_journal_.find(id);
  if (entry == task_journal_.end())
    return;
  if (entry->second.value) {
    tasks[id] = *entry->second.value;
  } else {
    tasks.erase(id);
    std::erase(order, id);
  }
  if (!entry->second.dirty)
    dirty_tasks_.erase(id);
  task_journal_.erase(entry);
}

void InMemoryTaskStore::RevertCursor(const TaskId& id,
                                     const std::string& reader) {
  auto entry = cursor_journal_.find({id, reader});
  if (entry == cursor_journal_.end())
    return;
  if (entry->second.value) {
    cursors_[entry->first] = *entry->second.value;
  } else {
    cursors_.erase(entry->first);
  }
  if (!entry->second.dirty)
    dirty_cursors_.erase(entry->first);
  cursor_journal_.erase(entry);
}

void InMemoryTaskStore::LoseUnflushed() {
  tasks = flushed;
  std::erase_if(order, [&](const TaskId& id) { return !tasks.contains(id); });
  cursors_ = flushed_cursors_;
  dirty_tasks_.clear();
  dirty_cursors_.clear();
  dirty_sessions_ = false;
  queues = flushed_queues_;
  dirty_queues_ = false;
  budgets = flushed_budgets_;
  pending_audit_.clear();
  task_journal_.clear();
  cursor_journal_.clear();
  queue_journal_.clear();
  budget_journal_.clear();
}

Result<std::optional<TaskRecord>> InMemoryTaskStore::GetTask(const TaskId& id) {
  auto it = tasks.find(id);
  if (it == tasks.end())
    return std::optional<TaskRecord>();
  return std::optional<TaskRecord>(it->second);
}

Result<std::vector<TaskRecord>> InMemoryTaskStore::LoadLiveTasks() {
  std::vector<TaskRecord> out;
  for (const auto& id : order) {
    if (!IsTerminal(tasks[id].status))
      out.push_back(tasks[id]);
  }
  return out;
}

Result<std::vector<TaskRecord>> InMemoryTaskStore::LoadUnnoticedTasks() {
  std::vector<TaskRecord> out;
  for (const auto& id : order) {
    const auto& task = tasks[id];
    if (IsTerminal(task.status) && !task.spec.owner.empty() && !task.end_seen &&
        !task.notice_delivered) {
      out.push_back(task);
    }
  }
  return out;
}

Result<std::vector<TaskRecord>> InMemoryTaskStore::ListTasks(
    const ListQuery& query) {
  std::vector<TaskRecord> out;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto& task = tasks[*it];
    bool visible = SeesOwner(query.owner, task.spec.owner);
    bool terminal = IsTerminal(task.status);
    if (!visible || (terminal ? !query.include_terminal : !query.include_live))
      continue;
    out.push_back(task);
    if (query.limit && out.size() == query.limit)
      break;
  }
  return out;
}

Result<size_t> InMemoryTaskStore::CountTasks(const ListQuery& query) {
  ListQuery all = query;
  all.limit = 0;
  auto listed = ListTasks(all);
  return listed->size();
}

Result<EndedPage> InMemoryTaskStore::PageEnded(const EndedQuery& query) {
  EndedPage page;
  std::set<std::string> labels;
  std::set<std::string> owners;
  std::vector<TaskRecord> matching;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto& task = tasks[*it];
    if (!SeesOwner(query.owner, task.spec.owner))
      continue;
    if (!task.spec.label.empty())
      labels.insert(task.spec.label);
    if (!task.spec.owner.empty())
      owners.insert(task.spec.owner);
    if (!IsTerminal(task.status))
      continue;
    if (task.ended_ms >= query.counted_since_ms)
      ++page.ended_since[std::string(TaskStatusName(task.status))];
    if (query.filter.Matches(task))
      matching.push_back(task);
  }
  // The most recent end first; a tie, the most recent creation first.
  std::stable_sort(matching.begin(), matching.end(),
                   [](const TaskRecord& a, const TaskRecord& b) {
                     return a.ended_ms > b.ended_ms;
                   });
  page.total = matching.size();
  for (size_t i = query.offset;
       i < matching.size() && page.tasks.size() < query.limit; ++i) {
    page.tasks.push_back(std::move(matching[i]));
  }
  page.labels.assign(labels.begin(), labels.end());
  page.owners.assign(owners.begin(), owners.end());
  return page;
}

Result<uint64_t> InMemoryTaskStore::GetCursor(const TaskId& id,
                                              const std::string& reader) {
  auto it = cursors_.find({id, reader});
  return it == cursors_.end() ? 0 : it->second;
}

Status InMemoryTaskStore::SetCursor(const TaskId& id, const std::string& reader,
                                    uint64_t offset) {
  StartWrite();
  CursorKey key{id, reader};
  auto it = cursors_.find(key);
  cursor_journal_.try_emplace(
      key, Before<uint64_t>{
               it == cursors_.end() ? std::nullopt : std::optional(it->second),
               dirty_cursors_.contains(key)});
  dirty_cursors_.insert(key);
  cursors_[key] = offset;
  return {};
}

Status InMemoryTaskStore::MarkSessionLeased(const std::string& session) {
  StartWrite();
  dirty_sessions_ = true;
  if (leased_.insert(session).second)
    session_journal_.insert(session);
  return {};
}

Result<std::vector<std::string>> InMemoryTaskStore::LoadLeasedSessions() {
  return std::vector<std::string>(leased_.begin(), leased_.end());
}

Status InMemoryTaskStore::PutQueue(const QueueRecord& queue) {
  StartWrite();
  if (!queue_journal_.contains(queue.name)) {
    auto it = queues.find(queue.name);
    queue_journal_[queue.name] =
        it == queues.end() ? std::nullopt : std::optional(it->second);
  }
  queues[queue.name] = queue;
  dirty_queues_ = true;
  return {};
}

Result<std::vector<QueueRecord>> InMemoryTaskStore::LoadQueues() {
  std::vector<QueueRecord> all;
  for (const auto& [name, queue] : queues)
    all.push_back(queue);
  return all;
}

void InMemoryTaskStore::RevertQueue(const std::string& name) {
  auto entry = queue_journal_.find(name);
  if (entry == queue_journal_.end())
    return;
  if (entry->second) {
    queues[name] = *entry->second;
  } else {
    queues.erase(name);
  }
  queue_journal_.erase(entry);
}

Status InMemoryTaskStore::PutSessionBudget(const std::string& session,
                                           const AgentBudget& budget) {
  StartWrite();
  if (!budget_journal_.contains(session)) {
    auto it = budgets.find(session);
    budget_journal_[session] =
        it == budgets.end() ? std::nullopt : std::optional(it->second);
  }
  if (budget.any()) {
    budgets[session] = budget;
  } else {
    budgets.erase(session);
  }
  return {};
}

Result<std::map<std::string, AgentBudget>>
InMemoryTaskStore::LoadSessionBudgets() {
  return budgets;
}

void InMemoryTaskStore::RevertSessionBudget(const std::string& session) {
  auto entry = budget_journal_.find(session);
  if (entry == budget_journal_.end())
    return;
  if (entry->second) {
    budgets[session] = *entry->second;
  } else {
    budgets.erase(session);
  }
  budget_journal_.erase(entry);
}

Status InMemoryTaskStore::AppendAudit(const AuditRecord& record,
                                      uint64_t* key) {
  StartWrite();
  *key = next_audit_key_++;
  pending_audit_[*key] = record;
  audit_journal_.push_back(*key);
  return {};
}

Result<std::vector<AuditRecord>> InMemoryTaskStore::ListAudit(
    const AuditQuery& query) {
  std::vector<AuditRecord> all = audit;
  for (const auto& [key, record] : pending_audit_)
    all.push_back(record);
  std::vector<AuditRecord> out;
  for (const auto& record : all) {
    if ((query.task.empty() || record.task == query.task) &&
        record.at_ms >= query.since_ms) {
      out.push_back(record);
    }
  }
  if (out.size() > query.limit)
    out.erase(out.begin(), out.end() - static_cast<ptrdiff_t>(query.limit));
  return out;
}

TimerId FakeTimeline::Schedule(MonoTime when, std::function<void()> callback) {
  TimerId id = next_++;
  timers_[id] = {when, std::move(callback)};
  return id;
}

void FakeTimeline::Advance(std::chrono::milliseconds by) {
  MonoTime target = now_ + by;
  for (;;) {
    auto due = std::min_element(
        timers_.begin(), timers_.end(),
        [](auto& a, auto& b) { return a.second.first < b.second.first; });
    if (due == timers_.end() || due->second.first > target)
      break;
    now_ = due->second.first;
    auto callback = std::move(due->second.second);
    timers_.erase(due);
    callback();
  }
  now_ = target;
}

}  // namespace baton::testing
