#include "tests/support/fakes.h"

#include <algorithm>

namespace baton::testing {

Result<int64_t> InMemoryTaskStore::NextTaskNumber(TaskKind kind) {
  return ++next_[kind];
}

Status InMemoryTaskStore::PutTask(const TaskRecord& task) {
  if (!tasks.count(task.id))
    order.push_back(task.id);
  TaskRecord copy = task;
  copy.spec.base_env.clear();  // Never persisted.
  tasks[task.id] = copy;
  return {};
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
    bool visible = task.spec.owner.empty() || task.spec.owner == query.owner;
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

Result<uint64_t> InMemoryTaskStore::GetCursor(const TaskId& id,
                                              const std::string& reader) {
  auto it = cursors_.find({id, reader});
  return it == cursors_.end() ? 0 : it->second;
}

Status InMemoryTaskStore::SetCursor(const TaskId& id, const std::string& reader,
                                    uint64_t offset) {
  cursors_[{id, reader}] = offset;
  return {};
}

Status InMemoryTaskStore::MarkSessionLeased(const std::string& session) {
  leased_.insert(session);
  return {};
}

Result<std::vector<std::string>> InMemoryTaskStore::LoadLeasedSessions() {
  return std::vector<std::string>(leased_.begin(), leased_.end());
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
